package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/doctor"
	"github.com/joinerhq/joiner/pkg/operator"
)

// errDoctorFindings is returned when a report holds an Error finding, so that joiner exits 1
// after printing the report.
type errDoctorFindings struct{ errors int }

func (e errDoctorFindings) Error() string {
	return fmt.Sprintf("doctor found %d finding(s) of severity Error, reported above: until they are fixed, the nodes concerned cannot launch or join", e.errors)
}

func newDoctorCommand() *cobra.Command {
	var files []string
	var output, kubeconfig string
	var o doctor.Options
	cmd := &cobra.Command{
		Use:   "doctor [-f FILE...]",
		Short: "Say whether the nodes of each EC2NodeClass can join, with the exact fix for each problem",
		Long: `doctor checks, before any launch, whether the nodes of each EC2NodeClass can join the cluster:
the node role's mapping (kube-system/aws-auth and EKS access entries, as the cluster's
authentication mode decides), the userData as the kubelet would receive it, the AMIs'
architectures against the NodePools' instance types, the IAM validation; and whether each
NodePool's nodeClassRef and each pod's node selection and tolerations can be met.

With -f, doctor reads manifests only and contacts nothing. The account id comes from the
controller ServiceAccount's eks.amazonaws.com/role-arn annotation, an ACK PodIdentityAssociation,
the roles of kube-system/aws-auth, or --account. Access entries cannot be seen offline, so a node
role is called unmapped at Error severity only when aws-auth in the manifests shows a known mistake.

Without -f, doctor reads the cluster of --kubeconfig (NodePools, EC2NodeClasses with their status,
pending pods, aws-auth) and AWS with the default credential chain (AWS_ENDPOINT_URL overrides the
endpoints): eks:DescribeCluster and the access entries of --cluster-name, iam:GetRole and
iam:GetInstanceProfile for the node roles, ec2:DescribeImages for the AMIs.
` + regionHelp("--aws-region") + `

Findings are ranked: Error (nodes certainly cannot join), Warning, Advice. doctor exits 1 when any
finding is an Error, 0 otherwise.`,
		Example: `  joiner doctor -f nodepools.yaml -f aws-auth.yaml --account 111122223333
  joiner doctor --cluster-name demo --aws-region us-west-2 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validOutput(output); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			var obs *doctor.Observations
			var err error
			if len(files) > 0 {
				obs, err = readDoctorFiles(cmd.InOrStdin(), files, o)
			} else {
				obs, err = readLive(cmd, kubeconfig, o)
			}
			if err != nil {
				return err
			}
			report := doctor.Diagnose(obs)
			if err := writeDoctorReport(cmd.OutOrStdout(), output, report); err != nil {
				return err
			}
			if report.HasError() {
				return errDoctorFindings{errors: report.Errors}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "Manifest file to check offline (YAML or JSON, multi-document; - for standard input); repeatable. Without it, doctor checks the live cluster and AWS")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "Output format: text or json")
	cmd.Flags().StringVar(&o.AccountID, "account", "", "The cluster's AWS account id, when the manifests do not show it (EKS Pod Identity associations live in AWS)")
	cmd.Flags().StringVar(&o.AuthenticationMode, "authentication-mode", "", "The cluster's EKS authentication mode (API, API_AND_CONFIG_MAP, CONFIG_MAP); live: read from eks:DescribeCluster")
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", os.Getenv("CLUSTER_NAME"), "The EKS cluster's name: live, the cluster eks:DescribeCluster reads; offline, named in the fixes [CLUSTER_NAME]")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Live: kubeconfig of the cluster; empty: $KUBECONFIG, then the in-cluster service account")
	cmd.Flags().String("aws-region", "", "Live: the cluster's AWS region; default AWS_REGION, AWS_DEFAULT_REGION, the shared config's profile, else the cluster's topology.kubernetes.io/region label")
	return cmd
}

// writeDoctorReport prints the report as text or indented JSON; fixes hold <placeholders> and
// shell commands, which JSON keeps as written (no HTML escaping).
func writeDoctorReport(out io.Writer, output string, report *doctor.Report) error {
	if output != "json" {
		return report.WriteText(out)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(report)
}

// readDoctorFiles reads the -f files, "-" being standard input (kubectl's convention).
func readDoctorFiles(stdin io.Reader, paths []string, o doctor.Options) (*doctor.Observations, error) {
	var files []doctor.File
	for _, p := range paths {
		var b []byte
		var err error
		if p == "-" {
			b, err = io.ReadAll(stdin)
			p = "standard input"
		} else {
			b, err = os.ReadFile(p)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s, %w: pass the path of a YAML or JSON manifest (-f FILE, repeatable; - for standard input)", p, err)
		}
		files = append(files, doctor.File{Name: p, Data: b})
	}
	return doctor.ReadManifests(files, o)
}

// readLive reads the cluster of kubeconfig and AWS in the cluster's region (commandRegion).
func readLive(cmd *cobra.Command, kubeconfig string, o doctor.Options) (*doctor.Observations, error) {
	if o.ClusterName == "" {
		return nil, fmt.Errorf("doctor without -f checks the live cluster and needs its EKS name: pass --cluster-name (or set CLUSTER_NAME), or pass -f FILE to check manifests offline")
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
	ctx := cmd.Context()
	region, err := commandRegion(cmd, "aws-region", kube, "")
	if err != nil {
		return nil, err
	}
	if region == "" {
		return nil, fmt.Errorf("doctor without -f needs the cluster's AWS region: pass --aws-region (or set AWS_REGION), or pass -f FILE to check manifests offline; no NodeClaim or node of the cluster has a %s label to take it from", corev1.LabelTopologyRegion)
	}
	awsCfg, err := sdk.LoadConfig(ctx, sdk.Options{Region: region})
	if err != nil {
		return nil, err
	}
	return doctor.ReadLive(ctx, kube, doctor.NewAWS(awsCfg, clock.RealClock{}), o)
}
