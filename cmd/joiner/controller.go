package main

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/joinerhq/joiner/pkg/controllers"
	"github.com/joinerhq/joiner/pkg/operator"
)

// Cloud provider names of --cloud-provider.
const (
	cloudProviderAWS  = "aws"
	cloudProviderFake = "fake"
)

func newControllerCommand() *cobra.Command {
	var (
		opts              operator.Options
		kubeconfig        string
		cloudProvider     string
		fakeInstanceTypes string
		awsOpts           awsOptions
		consoleListen     string
	)
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the Joiner controller: provision nodes for pending pods, keep NodePool status",
		Long: `controller runs Joiner's operator against the cluster of --kubeconfig (or $KUBECONFIG, or
the in-cluster service account): leader election on a Lease, /healthz and /readyz, /metrics, and
the controllers of pkg/controllers.

--cloud-provider chooses what launches instances. --cloud-provider aws (the default) launches EC2
instances in --aws-region with the default AWS credential chain (AWS_ENDPOINT_URL overrides the
endpoints); the cluster endpoint, CA bundle, service CIDR and Kubernetes version come from EKS
DescribeCluster of --cluster-name unless given by flags. ` + fakeProviderHelp + `

Every flag defaults to the environment variable named in brackets.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cp, err := newCloudProvider(cloudProvider, fakeInstanceTypes)
			if err != nil {
				return err
			}
			if cloudProvider == cloudProviderAWS {
				if err := awsOpts.validate(); err != nil {
					return err
				}
			} else if opts.InterruptionQueue != "" {
				return errors.New("--interruption-queue needs --cloud-provider aws: unset it (INTERRUPTION_QUEUE) to run the fake provider")
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			settings, _ := opts.Scheduling() // Validate checked it
			debug.SetGCPercent(opts.WithDefaults().GCPercent)
			level, _ := opts.Level() // Validate checked it
			logger := operator.NewLogger(level)
			ctrl.SetLogger(logger)
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			scheme, err := operator.NewScheme()
			if err != nil {
				return err
			}
			op, err := operator.New(cfg, scheme, opts, prometheus.NewRegistry(), logger)
			if err != nil {
				return err
			}
			ctx := ctrl.LoggerInto(cmd.Context(), logger)
			deps := controllers.Dependencies{
				Clock:             clock.RealClock{},
				CloudProvider:     cp,
				Registry:          op.Registry,
				BatchIdleDuration: opts.BatchIdleDuration,
				BatchMaxDuration:  opts.BatchMaxDuration,
				NodeCost:          opts.NodeCost,
				Scheduling:        settings,
				InterruptionQueue: opts.InterruptionQueue,
				Namespace:         opts.LeaderElectionNamespace,
				// Feature gates.
				SpotToSpotConsolidation: opts.FeatureGates.SpotToSpotConsolidation,
			}
			if cloudProvider == cloudProviderAWS {
				awsOpts.ClusterEndpoint = opts.ClusterEndpoint
				a, err := newAWS(ctx, awsOpts, opts.ClusterName, op.Manager.GetClient(), deps.Clock, op.Registry)
				if err != nil {
					return err
				}
				deps.CloudProvider, deps.AWS = a.CloudProvider, a
			}
			cs, err := controllers.New(ctx, op.Manager, deps)
			if err != nil {
				return err
			}
			if err := controllers.Register(ctx, op.Manager, cs); err != nil {
				return err
			}
			if err := addConsole(op.Manager, deps.CloudProvider, consoleListen); err != nil {
				return err
			}
			logger.Info("Starting controller", "cloudProvider", deps.CloudProvider.Name(), "cluster", opts.ClusterName, "featureGates", opts.FeatureGates.String())
			return op.Start(ctx)
		},
	}
	opts.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster; empty: $KUBECONFIG, then the in-cluster service account")
	cmd.Flags().StringVar(&cloudProvider, "cloud-provider", cloudProviderAWS, cloudProviderUsage)
	awsOpts.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&consoleListen, "console-listen", "", "Serve the read-only web console (joiner console) on this address, such as 127.0.0.1:8090; empty: off")
	addFakeFlags(cmd, &fakeInstanceTypes)
	return cmd
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig %s, %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("finding the cluster (set --kubeconfig), %w", err)
	}
	return cfg, nil
}
