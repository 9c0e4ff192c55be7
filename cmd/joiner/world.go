package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/operator"
	"github.com/joinerhq/joiner/pkg/worldcapture"
)

func newWorldCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "world",
		Short: "Work with world files, the emulator's local twins of AWS accounts",
		Long: `A world file describes the AWS side of an account (the EKS cluster, the controller's role and
policy, node roles, instance profiles, access entries, subnets, security groups, custom AMIs) for
the emulator to seed: joiner dev --world FILE. See docs/world.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newWorldCaptureCommand())
	return cmd
}

func newWorldCaptureCommand() *cobra.Command {
	var (
		o          worldcapture.Options
		output     string
		kubeconfig string
		noCluster  bool
	)
	cmd := &cobra.Command{
		Use:   "capture --cluster NAME [--region R] [-o FILE]",
		Short: "Write the world of a real AWS account as a world file, reading only",
		Long: `capture reads the EKS cluster --cluster and what its nodes need, read-only, and writes it as a
world file that joiner dev --world runs locally: the cluster and its VPC, the access entries and
the IAM roles and users they let in, the node roles and their instance profiles, the subnets, security groups and custom AMIs the
EC2NodeClasses select, the controller's role with its policies merged into controllerPolicy, and
the interruption queue. No secret is read or written: the emulator gives the controller its own
access key.

AWS is read with the default credential chain (AWS_ENDPOINT_URL overrides the endpoints), as
joiner doctor reads it. The cluster of --kubeconfig gives the EC2NodeClasses (their spec.role,
spec.instanceProfile and selector terms, resolved as the controller resolves them) and the
controller's Deployment (its ServiceAccount's IRSA role or EKS Pod Identity association, its
INTERRUPTION_QUEUE). With --no-cluster only AWS is read: the node roles are --node-role and those
of node access entries, the controller's role is --controller-role (else the world's default, allowed
everything), the subnets and security groups are the cluster VPC's, the images the account's own.

What capture cannot read (a denied action, which it names) or cannot represent in a world file,
it says on standard error, and it still writes the rest. joiner iam-policy --capture prints a
policy granting exactly the read-only actions it calls. It exits 1 when the captured world is not
a valid world file, after writing it.

` + regionHelp("--region"),
		Example: `  joiner world capture --cluster prod --region eu-west-1 -o prod.world.yaml
  joiner world capture --cluster prod --no-cluster --node-role KarpenterNodeRole-prod \
      --controller-role arn:aws:iam::210987654321:role/KarpenterControllerRole-prod --interruption-queue prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			stderr := cmd.ErrOrStderr()
			var kube client.Client
			if !noCluster {
				k, err := clusterClient(kubeconfig)
				if err != nil {
					return err
				}
				kube = k
			}
			region, err := commandRegion(cmd, "region", kube, "")
			if err != nil {
				return err
			}
			o.Region = region
			if err := o.Validate(); err != nil {
				return err
			}
			if kube != nil {
				d, notes, err := worldcapture.Discover(ctx, kube)
				if err != nil {
					return fmt.Errorf("%w; or pass --no-cluster to read AWS only", err)
				}
				o.Cluster = d
				printNotes(stderr, notes)
			}
			cfg, err := sdk.LoadConfig(ctx, sdk.Options{Region: o.Region})
			if err != nil {
				return err
			}
			res, err := worldcapture.Capture(ctx, worldcapture.NewAWS(cfg), o)
			if err != nil {
				return err
			}
			printNotes(stderr, res.Notes)
			data, err := worldcapture.Marshal(res.World)
			if err != nil {
				return err
			}
			if err := writeOutput(cmd.OutOrStdout(), output, data); err != nil {
				return err
			}
			return checkCaptured(data, output)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.ClusterName, "cluster", os.Getenv("CLUSTER_NAME"), "The EKS cluster's name; required [CLUSTER_NAME]")
	f.StringVar(&o.Region, "region", "", "The cluster's AWS region; default AWS_REGION, AWS_DEFAULT_REGION, the shared config's profile, else the cluster's topology.kubernetes.io/region label")
	f.StringVarP(&output, "output", "o", "-", "File to write the world to; - is standard output")
	f.StringArrayVar(&o.NodeRoles, "node-role", nil, "A node role (name or ARN) beyond those the EC2NodeClasses and node access entries name; repeatable")
	f.StringVar(&o.ControllerRole, "controller-role", "", "The controller's IAM role ARN; empty: the controller ServiceAccount's IRSA role or EKS Pod Identity association")
	f.StringVar(&o.InterruptionQueue, "interruption-queue", "", "The SQS interruption queue's name; empty: the controller's INTERRUPTION_QUEUE, else a queue named after the cluster")
	f.StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster whose EC2NodeClasses and controller are read; empty: $KUBECONFIG, then the in-cluster service account")
	f.BoolVar(&noCluster, "no-cluster", false, "Read AWS only, not the Kubernetes cluster (see above)")
	return cmd
}

// discoverCluster reads the EC2NodeClasses and the controller of the cluster of kubeconfig.
// clusterClient is a client of the cluster of kubeconfig, whose EC2NodeClasses, controller and
// nodes' region label the capture reads.
func clusterClient(kubeconfig string) (client.Client, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%w; or pass --no-cluster to read AWS only", err)
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		return nil, err
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster, %w; or pass --no-cluster to read AWS only", err)
	}
	return kube, nil
}

func printNotes(w io.Writer, notes []worldcapture.Note) {
	for _, n := range notes {
		_, _ = fmt.Fprintln(w, "capture:", n)
	}
}

// writeOutput writes data to the file path, or to out for "-".
func writeOutput(out io.Writer, path string, data []byte) error {
	if path == "-" || path == "" {
		_, err := out.Write(data)
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing the world file, %w", err)
	}
	return nil
}

// checkCaptured decodes the written world as the emulator will, so that a world it would refuse
// is said now, with every problem.
func checkCaptured(data []byte, path string) error {
	cat, err := catalog.Load()
	if err != nil {
		return err
	}
	if _, err := world.Decode(data, cat); err != nil {
		if e, ok := errors.AsType[*world.Error](err); ok && path != "-" {
			e.Source = path
		}
		return fmt.Errorf("the captured world was written but the emulator would refuse it; fix the fields below by hand, %w", err)
	}
	return nil
}
