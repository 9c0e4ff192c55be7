package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/joinerhq/joiner/pkg/localstack"
)

func newDevCommand() *cobra.Command {
	opts := localstack.Options{}
	var once bool
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the local stack: a real control plane with Joiner's CRDs and sample manifests",
		Long: `dev starts etcd and kube-apiserver on loopback from the binaries that
hack/install-testenv.sh builds (make testenv), installs Joiner's CRDs, applies the sample
EC2NodeClass, NodePool, aws-auth mapping and Deployment, and writes a kubeconfig so that you can
kubectl against it. With --once it prints what it applied and stops; otherwise it runs until
interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.AssetsDir == "" {
				return errors.New("--assets is required (or set KUBEBUILDER_ASSETS): the directory that `hack/install-testenv.sh bin/testenv` prints")
			}
			opts.Out = cmd.OutOrStdout()
			stack, err := localstack.Start(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if !once {
				<-cmd.Context().Done()
			}
			return stack.Stop()
		},
	}
	cmd.Flags().StringVar(&opts.AssetsDir, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory holding etcd and kube-apiserver (default $KUBEBUILDER_ASSETS)")
	cmd.Flags().StringVar(&opts.WorkDir, "workdir", "bin/localstack", "directory for the kubeconfig and control-plane data")
	cmd.Flags().BoolVar(&once, "once", false, "stop after applying and showing the sample manifests")
	return cmd
}
