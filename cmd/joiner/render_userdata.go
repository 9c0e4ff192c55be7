package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/manifest"
)

func newRenderUserDataCommand() *cobra.Command {
	var (
		files          []string
		nodeClassName  string
		nodePoolName   string
		cluster        userdata.Cluster
		maxPods        int32
		failOnProblems bool
	)
	cmd := &cobra.Command{
		Use:   "render-userdata --nodeclass NAME --nodepool NAME -f FILE...",
		Short: "Print the userData Joiner would launch a NodePool's nodes with, and what is wrong with yours",
		Long: `render-userdata reads an EC2NodeClass and a NodePool from manifests (multi-document YAML or
JSON, "-" for standard input) and prints, on standard output, the userData Joiner would give
an instance of that NodePool: the operator's userData merged with what Joiner requires for the
AMI family (AL2, AL2023, Bottlerocket, or Custom verbatim). Problems and advice about the
operator's userData go to standard error; with problems, the command exits non-zero.

The cluster flags fill in what Joiner would discover from the cluster; without them the output
carries placeholders. Instance-type-specific values (max pods) come from --max-pods.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nodeClass, nodePool, err := readRenderInputs(cmd.InOrStdin(), files, nodeClassName, nodePoolName)
			if err != nil {
				return err
			}
			var mp *int32
			if maxPods > 0 {
				mp = &maxPods
			}
			opts := userdata.NewOptions(cluster, nodeClass, userdata.PreviewNodeClaim(nodePool), mp)
			if opts.Family == "" {
				return fmt.Errorf("EC2NodeClass %s sets no amiFamily and has no alias term: set spec.amiFamily", nodeClass.Name)
			}
			res, err := userdata.Render(opts)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(cmd.OutOrStdout(), res.UserData); err != nil {
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s %s: %s\n  Fix: %s\n", w.Severity, w.Reason, w.Message, w.Fix)
			}
			if n := len(res.Problems()); n > 0 && failOnProblems {
				return fmt.Errorf("EC2NodeClass %s: %d problem(s) in its userData, listed above: fix them before nodes launch with it", nodeClass.Name, n)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, `manifest files holding the EC2NodeClass and NodePool ("-" for standard input); repeatable`)
	cmd.Flags().StringVar(&nodeClassName, "nodeclass", "", "name of the EC2NodeClass (default: the NodePool's nodeClassRef)")
	cmd.Flags().StringVar(&nodePoolName, "nodepool", "", "name of the NodePool (default: the only NodePool using the EC2NodeClass)")
	cmd.Flags().StringVar(&cluster.Name, "cluster-name", "CLUSTER_NAME", "EKS cluster name")
	cmd.Flags().StringVar(&cluster.Endpoint, "cluster-endpoint", "https://CLUSTER_ENDPOINT", "API server URL")
	cmd.Flags().StringVar(&cluster.CABundle, "ca-bundle", "CA_BUNDLE_BASE64", "base64-encoded cluster CA certificate")
	cmd.Flags().StringVar(&cluster.DNS, "cluster-dns", "", "cluster DNS Service IP (default: spec.kubelet.clusterDNS, else the AMI's)")
	cmd.Flags().StringVar(&cluster.CIDR, "cluster-cidr", "", "service CIDR (AL2023 NodeConfig spec.cluster.cidr)")
	cmd.Flags().Int32Var(&maxPods, "max-pods", 0, "max pods of the instance type (default: spec.kubelet.maxPods, else the AMI's)")
	cmd.Flags().BoolVar(&failOnProblems, "fail-on-problems", true, "exit non-zero when the userData has problems")
	return cmd
}

// readRenderInputs finds the EC2NodeClass and NodePool in the manifests. Either name may be
// omitted when the other one determines it.
func readRenderInputs(stdin io.Reader, files []string, nodeClassName, nodePoolName string) (*awsv1.EC2NodeClass, *v1.NodePool, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("-f is required: the manifests holding the EC2NodeClass and NodePool")
	}
	if nodeClassName == "" && nodePoolName == "" {
		return nil, nil, errors.New("set --nodeclass, --nodepool or both")
	}
	var objects []*unstructured.Unstructured
	for _, f := range files {
		r := stdin
		if f != "-" {
			file, err := os.Open(f)
			if err != nil {
				return nil, nil, err
			}
			defer func() { _ = file.Close() }()
			r = file
		}
		objs, err := manifest.Decode(r)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s, %w", f, err)
		}
		objects = append(objects, objs...)
	}
	typed, err := manifest.ObjectsFrom(objects)
	if err != nil {
		return nil, nil, err
	}
	nodeClasses := map[string]*awsv1.EC2NodeClass{}
	for _, nc := range typed.NodeClasses {
		nodeClasses[nc.Name] = nc
	}
	nodePools := typed.NodePools
	nodePool, err := pickNodePool(nodePools, nodeClassName, nodePoolName)
	if err != nil {
		return nil, nil, err
	}
	ref := nodePool.Spec.Template.Spec.NodeClassRef
	if ref == nil {
		return nil, nil, fmt.Errorf("NodePool %s has no nodeClassRef", nodePool.Name)
	}
	if nodeClassName == "" {
		nodeClassName = ref.Name
	}
	if ref.Name != nodeClassName {
		return nil, nil, fmt.Errorf("NodePool %s uses EC2NodeClass %s, not %s: pick a NodePool that uses it", nodePool.Name, ref.Name, nodeClassName)
	}
	nodeClass, ok := nodeClasses[nodeClassName]
	if !ok {
		return nil, nil, fmt.Errorf("no EC2NodeClass %s (karpenter.k8s.aws/v1) in the manifests", nodeClassName)
	}
	return nodeClass, nodePool, nil
}

func pickNodePool(nodePools []*v1.NodePool, nodeClassName, nodePoolName string) (*v1.NodePool, error) {
	var matches []*v1.NodePool
	for _, np := range nodePools {
		ref := np.Spec.Template.Spec.NodeClassRef
		if (nodePoolName == "" || np.Name == nodePoolName) && (nodePoolName != "" || (ref != nil && ref.Name == nodeClassName)) {
			matches = append(matches, np)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case nodePoolName != "":
		return nil, fmt.Errorf("no NodePool %s (karpenter.sh/v1) in the manifests", nodePoolName)
	case len(matches) == 0:
		return nil, fmt.Errorf("no NodePool in the manifests uses EC2NodeClass %s", nodeClassName)
	default:
		return nil, fmt.Errorf("%d NodePools use EC2NodeClass %s: choose one with --nodepool", len(matches), nodeClassName)
	}
}
