package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "joiner",
		Short: "Joiner launches and removes Kubernetes nodes on AWS, and says why a node did not join",
		Long: `Joiner is a Kubernetes node autoscaler for AWS that speaks Karpenter's APIs
(karpenter.sh/v1 NodePool and NodeClaim, karpenter.k8s.aws/v1 EC2NodeClass).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand(), newDevCommand(), newSimulateCommand(), newRenderUserDataCommand(), newControllerCommand(),
		newIAMPolicyCommand(), newExplainCommand(), newDoctorCommand(), newConsoleCommand(), newWorldCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			version := "(devel)"
			if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
				version = info.Main.Version
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "joiner", version)
			return err
		},
	}
}
