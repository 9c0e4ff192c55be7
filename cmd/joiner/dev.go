//go:build !nolocalstack

// The local stack links controller-runtime's envtest, whose template rendering makes the linker
// keep every exported method of the program (see TestLinkerCanDropUnusedMethods): the image's
// binary is built with -tags nolocalstack and leaves it out (dev_nolocalstack.go).

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/joinerhq/joiner/pkg/localstack"
)

// demoEmulatorArgs are the emulator's timings for the local stack: instances pend 3s and boot
// 10s (real EC2 takes about 10s and 30-60s), so the story reads in about a minute.
var demoEmulatorArgs = []string{"--pending-for", "3s", "--boot-delay", "10s", "--shutting-down-for", "5s"}

func newDevCommand() *cobra.Command {
	var opts localstack.Options
	var once, noController bool
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the local stack: a real control plane, the AWS emulator and the Joiner controller",
		Long: `dev runs Joiner on loopback, every program a child process with its log in <workdir>/logs:
etcd, kube-apiserver, kube-scheduler and kube-controller-manager from the binaries that
hack/install-testenv.sh builds (make testenv); Joiner's CRDs; the AWS emulator (--awsemu), which
boots the instances Joiner launches and registers their Nodes; and the controller as
` + "`joiner controller --cloud-provider aws`" + ` pointed at the emulator: joiner-controller beside this
program when it is there (` + "`make build`" + ` builds it: joiner as the image ships it, without the
local stack, half the size), else this program. It applies the sample
EC2NodeClass, NodePool, aws-auth mapping and Deployment and writes a kubeconfig.

With --world FILE the emulator seeds the AWS account the world file describes (docs/world.md)
instead of the demo world, and the controller runs as that world's controller, limited by its
policy, with its cluster name, region and interruption queue. Without it the controller reads
the demo world's interruption queue (named after the cluster, as Karpenter's setup names it), so
that spot interruptions sent through the emulator (POST <emulator>/_awsemu/events) are handled. No samples are applied then unless
--samples is given: apply your own manifests (test/scenarios has worlds beside the field cases).
A world file with any problem is refused, each problem named by its field's path, before
anything starts.

With --once it tells the sample story (pods pending, NodeClaims launched, registered and
initialized, pods Running, the cost per hour; then the Deployment scaled to zero and the nodes
gone) and exits 0 when it completed. Without --once it keeps the stack running until interrupted,
so that you can kubectl against it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.AssetsDir == "" {
				return errors.New("--assets is required (or set KUBEBUILDER_ASSETS): the directory that `hack/install-testenv.sh bin/testenv` prints")
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding the joiner program, %w", err)
			}
			if noController && once {
				return errors.New("--once tells the story of Joiner's controller: drop --no-controller")
			}
			if !noController {
				opts.JoinerPath = controllerProgram(self)
			}
			if opts.EmulatorPath == "" {
				opts.EmulatorPath = filepath.Join(filepath.Dir(self), "awsemu")
			}
			if opts.ChartDir != "" && opts.Helm == "" {
				if opts.Helm, err = findHelm(filepath.Dir(self)); err != nil {
					return err
				}
			}
			if !cmd.Flags().Changed("samples") {
				opts.Samples = opts.World == ""
			}
			if once && !opts.Samples {
				return errors.New("--once tells the sample story: with --world, add --samples")
			}
			out := cmd.OutOrStdout()
			opts.Out = out
			stack, err := localstack.Start(cmd.Context(), opts)
			if err != nil {
				return err
			}
			var story error
			if once {
				story = stack.Demo(cmd.Context())
			} else {
				try := "  kubectl scale deployment inflate --replicas 20\n"
				if !opts.Samples {
					try = "  kubectl apply -f " + manifestsOf(opts.World) + "\n"
				}
				// The exports make joiner's own commands (explain, simulate --cluster, doctor)
				// work against the stack: the emulator answers its administrator's key, which
				// stands for the person at the console.
				fmt.Fprintf(out, "\nThe stack runs until interrupted (Ctrl-C). Try:\n  export KUBECONFIG=%s\n  export AWS_ENDPOINT_URL=%s AWS_REGION=%s\n  export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=local-stack\n  kubectl get nodepools,nodeclaims,nodes,pods -A\n%s  joiner explain node NODE\n",
					stack.KubeconfigPath, stack.EmulatorURL, stack.Region, stack.AdminAccessKey, try)
				<-cmd.Context().Done()
			}
			return errors.Join(story, stack.Stop())
		},
	}
	cmd.Flags().StringVar(&opts.AssetsDir, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory holding etcd, kube-apiserver, kube-scheduler and kube-controller-manager (default $KUBEBUILDER_ASSETS)")
	cmd.Flags().StringVar(&opts.WorkDir, "workdir", "bin/localstack", "directory for the kubeconfig and the programs' logs")
	cmd.Flags().StringVar(&opts.EmulatorPath, "awsemu", "", "the AWS emulator program (default: awsemu beside this program, as make build puts it)")
	cmd.Flags().StringSliceVar(&opts.EmulatorArgs, "awsemu-args", demoEmulatorArgs, "flags for the emulator (its instance timings)")
	cmd.Flags().StringVar(&opts.EmulatorRateLimits, "emu-rate-limits", "", "how the emulator meters API requests against AWS's published limits: off, aws, or a factor of AWS's capacities and refill rates such as 0.5 or 10 (default $JOINER_EMU_RATE_LIMITS, else aws)")
	cmd.Flags().StringVar(&opts.World, "world", "", "world file (YAML or JSON, docs/world.md) describing the AWS account the emulator seeds; default the demo world")
	cmd.Flags().BoolVar(&opts.Samples, "samples", false, "apply the sample EC2NodeClass, NodePool, aws-auth and Deployment (default: yes without --world, no with it)")
	cmd.Flags().StringVar(&opts.ChartDir, "as-chart", "", "run the controller as the ServiceAccount of this Helm chart (charts/joiner): the RBAC `helm template` renders is applied and its requests are audited to <workdir>/audit/audit.log")
	cmd.Flags().StringVar(&opts.Helm, "helm", "", "helm program for --as-chart (default: helm beside this program, else on $PATH)")
	cmd.Flags().BoolVar(&opts.GeneratedPolicy, "iam-policy", false, "make `joiner iam-policy` output for the stack's cluster the controller role's only policy, in place of the world's controllerPolicy; decisions at <emulator>/_awsemu/authorizations")
	cmd.Flags().BoolVar(&noController, "no-controller", false, "run the stack without Joiner's controller, for another controller (hack/karpenter-compat.sh runs upstream Karpenter's) to run against the emulator with the controller's key")
	cmd.Flags().BoolVar(&once, "once", false, "tell the sample story (scale up, then to zero) and exit 0 when it completed")
	return cmd
}

// manifestsOf names the manifests to apply on a world: those beside it (X.yaml for
// X.world.yaml, as test/scenarios keeps them), else a placeholder.
func manifestsOf(world string) string {
	if base, ok := strings.CutSuffix(world, ".world.yaml"); ok {
		if _, err := os.Stat(base + ".yaml"); err == nil {
			return base + ".yaml"
		}
	}
	return "YOUR-MANIFESTS.yaml"
}

// findHelm returns the helm beside this program (make helm puts it in bin/), else the one on
// $PATH.
func findHelm(dir string) (string, error) {
	beside := filepath.Join(dir, "helm")
	if _, err := os.Stat(beside); err == nil {
		return beside, nil
	}
	h, err := exec.LookPath("helm")
	if err != nil {
		return "", errors.New("--as-chart needs helm: build it with `make helm` or give --helm")
	}
	return h, nil
}

// controllerProgram is the program the local stack runs as the controller: joiner-controller
// beside self (the build the image ships, whose memory is the controller's in production), else
// self.
func controllerProgram(self string) string {
	lean := filepath.Join(filepath.Dir(self), "joiner-controller")
	if info, err := os.Stat(lean); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
		return lean
	}
	return self
}
