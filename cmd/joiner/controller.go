package main

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers"
	"github.com/joinerhq/joiner/pkg/operator"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
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
DescribeCluster of --cluster-name unless given by flags. --cloud-provider fake runs
an in-memory fake that launches nothing real: it offers the instance types of
--fake-instance-types (a file in the shared/bench schema, as joiner simulate reads), or none, so
that pods stay pending with a FailedScheduling event. It exists for trying the operator only.

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
				InterruptionQueue: opts.InterruptionQueue,
				Namespace:         opts.LeaderElectionNamespace,
			}
			if cloudProvider == cloudProviderAWS {
				awsOpts.ClusterEndpoint = opts.ClusterEndpoint
				a, err := newAWS(ctx, awsOpts, opts.ClusterName, op.Manager.GetClient(), deps.Clock)
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
			logger.Info("Starting controller", "cloudProvider", deps.CloudProvider.Name(), "cluster", opts.ClusterName)
			return op.Start(ctx)
		},
	}
	opts.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster; empty: $KUBECONFIG, then the in-cluster service account")
	cmd.Flags().StringVar(&cloudProvider, "cloud-provider", cloudProviderAWS, "aws (EC2 instances) or fake (in-memory, launches nothing real; for trying the wiring)")
	awsOpts.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&consoleListen, "console-listen", "", "Serve the read-only web console (joiner console) on this address, such as 127.0.0.1:8090; empty: off")
	cmd.Flags().StringVar(&fakeInstanceTypes, "fake-instance-types", "", "With --cloud-provider fake: the instance types it offers, a file in the shared/bench schema")
	return cmd
}

// newCloudProvider returns the fake cloud provider, or nil for aws: that one needs the manager's
// client and is built by newAWS.
func newCloudProvider(name, fakeInstanceTypes string) (cloudprovider.CloudProvider, error) {
	if fakeInstanceTypes != "" && name != cloudProviderFake {
		return nil, errors.New("--fake-instance-types needs --cloud-provider fake")
	}
	switch name {
	case cloudProviderAWS:
		return nil, nil
	case cloudProviderFake:
		cp := &fake.CloudProvider{}
		if fakeInstanceTypes != "" {
			file, err := workload.Load(fakeInstanceTypes)
			if err != nil {
				return nil, fmt.Errorf("reading --fake-instance-types, %w", err)
			}
			for _, it := range file.Catalogue() {
				cp.InstanceTypes = append(cp.InstanceTypes, fakeInstanceType(it))
			}
		}
		return cp, nil
	}
	return nil, fmt.Errorf("--cloud-provider %q is not a provider: use aws or fake", name)
}

// fakeInstanceType turns a catalogue entry into what the fake offers: labels become
// single-valued requirements, and what capacity has beyond allocatable becomes kube-reserved.
func fakeInstanceType(it *scheduling.InstanceType) *cloudprovider.InstanceType {
	out := &cloudprovider.InstanceType{
		Name:         it.Name,
		Requirements: map[string][]string{corev1.LabelInstanceTypeStable: {it.Name}},
		Capacity:     it.Capacity.DeepCopy(),
		Overhead:     cloudprovider.Overhead{KubeReserved: corev1.ResourceList{}},
	}
	if len(out.Capacity) == 0 {
		out.Capacity = it.Allocatable.DeepCopy()
	}
	for k, v := range it.Labels {
		out.Requirements[k] = []string{v}
	}
	for res, capacity := range out.Capacity {
		if alloc, ok := it.Allocatable[res]; ok && capacity.Cmp(alloc) > 0 {
			reserved := capacity.DeepCopy()
			reserved.Sub(alloc)
			out.Overhead.KubeReserved[res] = reserved
		}
	}
	for _, o := range it.Offerings {
		out.Offerings = append(out.Offerings, &cloudprovider.Offering{Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price, Available: o.Available})
		for _, kv := range [][2]string{{corev1.LabelTopologyZone, o.Zone}, {v1.CapacityTypeLabelKey, o.CapacityType}} {
			if !slices.Contains(out.Requirements[kv[0]], kv[1]) {
				out.Requirements[kv[0]] = append(out.Requirements[kv[0]], kv[1])
			}
		}
	}
	return out
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
