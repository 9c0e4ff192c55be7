package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
	"github.com/joinerhq/joiner/pkg/operator"
)

func newExplainNodeCommand() *cobra.Command {
	var catalogue, region, output string
	var nodeCost float64
	var gates operator.FeatureGates
	cmd := &cobra.Command{
		Use:   "node NAME",
		Short: "Print a node's disruption state, why it is kept, and a dry run of removing it",
		Long: `explain node reads the cluster and the NodePools' instance types as the disruption controller
does, and prints for the node (a Node's or a NodeClaim's name):

- its state: deleting, disrupting (tainted karpenter.sh/disrupted), candidate or kept;
- the reason: what keeps it (do-not-disrupt, a PodDisruptionBudget, a budget with its schedule,
  no cheaper option with the price, a pod that fits nowhere, the time left to consolidateAfter),
  or what the next pass would decide;
- Drifted, Consolidatable, when it expires, its price, and the budgets left per reason;
- a dry run: where each of its pods would go if it were removed now, and the savings per hour.

Instance types come from AWS (the default credential chain; AWS_ENDPOINT_URL overrides the
endpoints), or from --instance-types, a file in the shared/bench schema.
Give --node-cost the value the controller runs with (its --node-cost or NODE_COST): prices and
savings count it on every node, as the controller's decisions do.

` + regionHelp("--aws-region"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("-o %s is not an output format: use text or json", output)
			}
			if nodeCost < 0 {
				return fmt.Errorf("--node-cost %v is negative: give dollars per node per hour, 0 or more (the controller's --node-cost)", nodeCost)
			}
			kubeconfig := ""
			if f := cmd.Flag("kubeconfig"); f != nil {
				kubeconfig = f.Value.String()
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			scheme, err := operator.NewScheme()
			if err != nil {
				return err
			}
			kube, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				return fmt.Errorf("connecting to the cluster, %w", err)
			}
			var cloud cloudprovider.CloudProvider
			if catalogue != "" {
				if cloud, err = newCloudProvider(cloudProviderFake, catalogue); err != nil {
					return err
				}
			} else {
				if region, err = commandRegion(cmd, "aws-region", kube, args[0]); err != nil {
					return err
				}
				if region == "" {
					return fmt.Errorf("explain node needs the instance types: pass --aws-region (or set AWS_REGION) to read them from AWS, or --instance-types FILE; neither %s nor the cluster's NodeClaims and nodes have a %s label to take it from", args[0], corev1.LabelTopologyRegion)
				}
				awsCfg, err := sdk.LoadConfig(cmd.Context(), sdk.Options{Region: region})
				if err != nil {
					return err
				}
				cloud = provider.Build(kube, sdk.NewClients(awsCfg), provider.Options{Region: region}, clock.RealClock{}).CloudProvider
			}
			report, err := disruption.Explain(cmd.Context(), kube, cloud, args[0], time.Now(), disruption.WithNodeCost(nodeCost),
				disruption.WithSpotToSpotConsolidation(gates.SpotToSpotConsolidation))
			if report == nil {
				return err
			}
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "Warning:", err)
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			}
			return report.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&catalogue, "instance-types", "", "Instance types from this file (shared/bench schema) instead of AWS")
	cmd.Flags().StringVar(&region, "aws-region", "", regionFlagUsage)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "Output format: text or json")
	cmd.Flags().Float64Var(&nodeCost, "node-cost", 0, "Dollars per hour every node costs beyond its instance and volumes: the controller's --node-cost (or NODE_COST)")
	cmd.Flags().Var(&gates, "feature-gates", "The controller's --feature-gates (or FEATURE_GATES), Name=true,Name2=false: SpotToSpotConsolidation changes what consolidation may replace")
	return cmd
}
