package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/explain"
	"github.com/joinerhq/joiner/pkg/operator"
)

// newExplainCommand is the parent of the explain subcommands. Each subcommand lives in its own
// file and is added here with one line; they share --kubeconfig (explainClient reads it).
func newExplainCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Explain why a pod waits, what happened to a NodeClaim, or why a node is kept",
		Long: `explain reads the cluster of --kubeconfig (or $KUBECONFIG) and says why: why a pod fits each
NodePool or not, or what a NodeClaim went through and what holds it now.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().String("kubeconfig", "", "Kubeconfig of the cluster; empty: $KUBECONFIG, then the in-cluster service account")
	cmd.AddCommand(
		newExplainPodCommand(),
		newExplainNodeClaimCommand(),
		newExplainNodeCommand(),
	)
	return cmd
}

// explainClient is a direct (uncached) client of the cluster of the explain command's --kubeconfig.
func explainClient(cmd *cobra.Command) (client.Client, error) {
	kubeconfig := ""
	if f := cmd.Flag("kubeconfig"); f != nil {
		kubeconfig = f.Value.String()
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		return nil, err
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster, %w", err)
	}
	return kube, nil
}

// writeReport prints a report as text or as indented JSON.
func writeReport(out io.Writer, output string, report interface{ WriteText(io.Writer) error }) error {
	if output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return report.WriteText(out)
}

func validOutput(output string) error {
	if output != "text" && output != "json" {
		return fmt.Errorf("-o %s is not an output format: use text or json", output)
	}
	return nil
}

func newExplainPodCommand() *cobra.Command {
	var namespace, catalogue, region, output string
	var sched schedulingFlags
	cmd := &cobra.Command{
		Use:   "pod NAME",
		Short: "Say, per NodePool, why a pod fits or not, and which instance types would hold it",
		Long: `explain pod reads the pod, the NodePools, the nodes and NodeClaims and the DaemonSets of the
cluster, and the NodePools' instance types, as the controller does, then prints:

- what the scheduling simulation does with the pod now (an existing node, a new NodeClaim of a
  NodePool at a price, or nothing);
- per NodePool, whether the pod fits, and every reason it does not: a taint it does not tolerate,
  each label its nodeSelector or node affinity asks for with the values the NodePool offers for
  it, requests no instance type has room for, a limit reached, a NodePool that cannot launch now;
- the cheapest instance types that would hold it, with their price.

Instance types come from AWS (the default credential chain; AWS_ENDPOINT_URL overrides the
endpoints), through each NodePool's EC2NodeClass, or from --instance-types, a file in the
shared/bench schema as joiner simulate reads.

` + regionHelp("--aws-region"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validOutput(output); err != nil {
				return err
			}
			kube, err := explainClient(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if catalogue == "" {
				if region, err = commandRegion(cmd, "aws-region", kube, ""); err != nil {
					return err
				}
				if region == "" {
					return errors.New("explain pod needs the instance types: pass --aws-region (or set AWS_REGION) to read them from AWS, or --instance-types FILE; no NodeClaim or node of the cluster has a " + corev1.LabelTopologyRegion + " label to take it from")
				}
			}
			cloud, err := explainCloud(ctx, kube, catalogue, region)
			if err != nil {
				return err
			}
			st, err := sched.settings()
			if err != nil {
				return err
			}
			report, err := explain.ReadPod(ctx, kube, cloud, types.NamespacedName{Namespace: namespace, Name: args[0]}, st)
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), output, report)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", corev1.NamespaceDefault, "Namespace of the pod")
	cmd.Flags().StringVar(&catalogue, "instance-types", "", "Instance types from this file (shared/bench schema) instead of AWS")
	cmd.Flags().StringVar(&region, "aws-region", "", regionFlagUsage)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "Output format: text or json")
	sched.add(cmd.Flags())
	return cmd
}

// explainCloud is where instance types come from: the catalogue file through the fake provider,
// or AWS through the real one (only its instance-type side is used).
func explainCloud(ctx context.Context, kube client.Reader, catalogue, region string) (cloudprovider.CloudProvider, error) {
	if catalogue != "" {
		return newCloudProvider(cloudProviderFake, catalogue)
	}
	cfg, err := sdk.LoadConfig(ctx, sdk.Options{Region: region})
	if err != nil {
		return nil, err
	}
	return provider.Build(kube, sdk.NewClients(cfg), provider.Options{Region: region}, clock.RealClock{}).CloudProvider, nil
}

func newExplainNodeClaimCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "nodeclaim NAME",
		Short: "Print a NodeClaim's timeline (created, launched, registered, initialized) and what holds it",
		Long: `explain nodeclaim prints the NodeClaim's timeline from its conditions (created, launched,
registered, initialized, ready, then every other condition), each with its time, reason and
message; the events about it; and the diagnosis: the first lifecycle condition that is not True,
and every other condition that is False. A NodeClaim already deleted is explained from its events.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validOutput(output); err != nil {
				return err
			}
			kube, err := explainClient(cmd)
			if err != nil {
				return err
			}
			report, err := explain.ReadNodeClaim(cmd.Context(), kube, args[0])
			if err != nil {
				return err
			}
			return writeReport(cmd.OutOrStdout(), output, report)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "Output format: text or json")
	return cmd
}
