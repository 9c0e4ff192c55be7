package main

import (
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"

	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
	"github.com/joinerhq/joiner/pkg/worldcapture"
)

func newIAMPolicyCommand() *cobra.Command {
	var (
		o       iampolicy.Options
		format  string
		capture bool
	)
	cmd := &cobra.Command{
		Use:   "iam-policy",
		Short: "Print the least-privilege IAM policy of the controller for a cluster",
		Long: `iam-policy prints the IAM policy the controller's role needs for the EKS cluster --cluster in
--region of --account: every action the controller calls and nothing else, scoped like Karpenter's
reference policy (writes only on resources tagged kubernetes.io/cluster/<cluster>=owned with a
NodePool or EC2NodeClass tag, reads in the region, iam:PassRole only for --node-role to EC2).

-o json prints the policy document (aws iam create-policy --policy-document file://...);
-o cloudformation prints a template with one AWS::IAM::ManagedPolicy named
JoinerControllerPolicy-<cluster>.

--capture prints instead the policy of joiner world capture: exactly the read-only actions it
calls, for the identity that runs it (not the controller); it takes no other flag.`,
		Example: `  joiner iam-policy --cluster demo --region us-west-2 --account 111122223333 > policy.json
  joiner iam-policy --cluster demo --region us-west-2 --account 111122223333 --interruption-queue demo -o cloudformation
  joiner iam-policy --capture > capture-policy.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if capture {
				if cmd.Flags().NFlag() > 1 || format != iampolicy.FormatJSON {
					return errors.New("--capture prints the JSON policy of joiner world capture and takes no other flag: drop the others")
				}
				out, err := json.MarshalIndent(iampolicy.Capture(worldcapture.Actions()), "", "  ")
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(append(out, '\n'))
				return err
			}
			if !cmd.Flags().Changed("node-role") && o.ClusterName != "" {
				o.NodeRoles = []string{iampolicy.DefaultNodeRole(o.ClusterName)}
			}
			if err := o.Validate(); err != nil {
				return err
			}
			out, err := iampolicy.Render(o, format)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&o.ClusterName, "cluster", "", "The EKS cluster's name (the controller's --cluster-name); required")
	cmd.Flags().StringVar(&o.Region, "region", "", "The cluster's AWS region; required")
	cmd.Flags().StringVar(&o.AccountID, "account", "", "The cluster's 12-digit AWS account ID; required")
	cmd.Flags().StringSliceVar(&o.NodeRoles, "node-role", nil, "IAM role the EC2NodeClasses give their nodes (spec.role); repeat for several. Default KarpenterNodeRole-<cluster>")
	cmd.Flags().StringVar(&o.InterruptionQueue, "interruption-queue", "", "Name of the SQS interruption queue (settings.interruptionQueue); empty grants no SQS action")
	cmd.Flags().StringVarP(&format, "output", "o", iampolicy.FormatJSON, "Output format: json or cloudformation")
	cmd.Flags().BoolVar(&capture, "capture", false, "Print the read-only policy of joiner world capture instead")
	return cmd
}
