// Command awsemu runs the AWS emulator as a process for the local stack and end-to-end tests.
//
//	awsemu --listen 127.0.0.1:4566 --kubeconfig kubeconfig --pending-for 1s --boot-delay 3s --shutting-down-for 2s
//	awsemu --world test/scenarios/s1-unmapped-node-role.world.yaml --kubeconfig kubeconfig
//
// It logs exactly one line, `awsemu listening on http://ADDR`, once it accepts connections, and
// serves until interrupted. Point SDK clients at that URL with static credentials whose access key
// id is the seeded controller key (AKIDJOINERCONTROLLER, or the world's controllerAccessKeyId).
//
// `awsemu faults --endpoint URL [knobs]` reads or sets a running emulator's injected faults
// (throttling, 500s, slow responses, DescribeInstances lag, pools out of capacity) and prints
// them with the counts injected so far.
//
// With --world it seeds the account the world file describes (docs/world.md) instead of the demo
// world; a world file with any problem is refused, each problem named by its field's path,
// before anything listens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/ratelimit"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/catalog"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if len(os.Args) > 1 && os.Args[1] == "faults" {
		err = runFaults(ctx, os.Args[2:], os.Stdout)
	} else {
		err = run(ctx, os.Args[1:], os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, writing the ready line and warnings to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parse(args, out)
	if err != nil {
		return err
	}
	logger := zap.New(zap.WriteTo(out))
	ctrllog.SetLogger(logger)
	ctx = ctrllog.IntoContext(ctx, logger)
	st, err := awsemu.NewState(clock.RealClock{}, o.seed)
	if err != nil {
		return err
	}
	var kopts kubelets.Options
	if o.kubeconfig != nil {
		cfg, err := clientcmd.NewDefaultClientConfig(*o.kubeconfig, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return fmt.Errorf("building a client configuration from the kubeconfig, %w", err)
		}
		// One client speaks for every emulated kubelet, each of which would have its own limit.
		cfg.QPS, cfg.Burst = 1000, 2000
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			return fmt.Errorf("building a Kubernetes client, %w", err)
		}
		kopts.Client = c
		if kopts.Pods, err = boundPods(ctx, cfg); err != nil {
			return err
		}
	}
	go kubelets.New(st, clock.RealClock{}, kopts).Run(ctx, o.kubeletSync)
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listening on %s, %w", o.listen, err)
	}
	emu := awsemu.New(st, clock.RealClock{})
	emu.SetRateLimits(o.rateLimits)
	srv := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	log.New(out, "", 0).Printf("awsemu listening on http://%s", ln.Addr())
	select {
	case err := <-errs:
		return fmt.Errorf("serving, %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down, %w", err)
	}
	return nil
}

// options are what the command line asks for.
type options struct {
	listen string
	// seed is the world to start with: the cluster named on the command line, its endpoint and
	// CA from the kubeconfig, and the lifecycle timings.
	seed state.SeedOptions
	// kubeconfig is the loaded --kubeconfig, nil without one.
	kubeconfig  *clientcmdapi.Config
	kubeletSync time.Duration
	// rateLimits is how requests are metered against AWS's published limits.
	rateLimits ratelimit.Mode
}

// parse reads the command line, and the kubeconfig it names, writing usage errors to out.
func parse(args []string, out io.Writer) (options, error) {
	fs := flag.NewFlagSet("awsemu", flag.ContinueOnError)
	fs.SetOutput(out)
	def := state.DefaultTimings()
	var o options
	var kubeconfig, cluster, worldPath, rateLimits string
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster booted instances register their Nodes in; its current context's server and CA become the EKS cluster's endpoint and certificate authority (none: instances boot and are admitted on EKS access entries alone, no Node appears, and the cluster reports a made-up endpoint and no CA)")
	fs.StringVar(&cluster, "cluster-name", "demo", "cluster name the seeded subnets and security groups are tagged for (not with --world, which names the cluster)")
	fs.StringVar(&worldPath, "world", "", "world file (YAML or JSON, see docs/world.md) describing the account to seed instead of the demo world")
	fs.DurationVar(&o.seed.Timings.PendingFor, "pending-for", def.PendingFor, "how long a new instance stays pending")
	fs.DurationVar(&o.seed.Timings.BootDelay, "boot-delay", def.BootDelay, "how long after an instance starts running its kubelet first tries to register")
	fs.DurationVar(&o.seed.Timings.ShuttingDownFor, "shutting-down-for", def.ShuttingDownFor, "how long a terminating instance stays shutting-down")
	fs.DurationVar(&o.kubeletSync, "kubelet-sync-interval", time.Second, "how often the emulated kubelets boot due instances and keep their Nodes")
	fs.StringVar(&rateLimits, "rate-limits", "aws", "how API requests are metered against AWS's published request limits (docs/design/awsemu.md): off, aws, or a factor of AWS's capacities and refill rates (0.5, 10)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.rateLimits, err = ratelimit.ParseMode(rateLimits); err != nil {
		return o, fmt.Errorf("--rate-limits: %w", err)
	}
	for name, d := range map[string]time.Duration{"pending-for": o.seed.Timings.PendingFor, "boot-delay": o.seed.Timings.BootDelay,
		"shutting-down-for": o.seed.Timings.ShuttingDownFor, "kubelet-sync-interval": o.kubeletSync} {
		if d <= 0 {
			return o, fmt.Errorf("--%s must be positive, got %s", name, d)
		}
	}
	timings := o.seed.Timings
	o.seed = state.DefaultSeed()
	o.seed.Timings = timings
	o.seed.ClusterName = cluster
	o.seed.NodeRole = "KarpenterNodeRole-" + cluster
	if worldPath != "" {
		clusterSet := false
		fs.Visit(func(f *flag.Flag) { clusterSet = clusterSet || f.Name == "cluster-name" })
		if clusterSet {
			return o, errors.New("--cluster-name and --world exclude each other: the world file names the cluster (cluster.name)")
		}
		cat, err := catalog.Load()
		if err != nil {
			return o, fmt.Errorf("loading the instance-type catalogue, %w", err)
		}
		w, err := world.Load(worldPath, cat)
		if err != nil {
			return o, err
		}
		o.seed = w.SeedOptions(o.seed)
	}
	if kubeconfig == "" {
		return o, nil
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return o, fmt.Errorf("reading kubeconfig %s, %w", kubeconfig, err)
	}
	if o.seed.ClusterEndpoint, o.seed.ClusterCA, err = currentCluster(cfg); err != nil {
		return o, fmt.Errorf("reading kubeconfig %s, %w", kubeconfig, err)
	}
	o.kubeconfig = cfg
	return o, nil
}

// currentCluster returns the server URL and PEM CA bundle of the cluster of cfg's current
// context. The CA is certificate-authority-data, or else the certificate-authority file (cfg's
// relative paths are resolved against the kubeconfig first); a cluster with neither is an error,
// since nodes could not join it.
func currentCluster(cfg *clientcmdapi.Config) (server string, ca []byte, err error) {
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return "", nil, fmt.Errorf("resolving paths, %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return "", nil, fmt.Errorf("current context %q is not defined", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return "", nil, fmt.Errorf("cluster %q of context %q is not defined", ctx.Cluster, cfg.CurrentContext)
	}
	ca = cluster.CertificateAuthorityData
	if len(ca) == 0 && cluster.CertificateAuthority != "" {
		if ca, err = os.ReadFile(cluster.CertificateAuthority); err != nil {
			return "", nil, fmt.Errorf("reading the certificate authority of cluster %q, %w", ctx.Cluster, err)
		}
	}
	if len(ca) == 0 {
		return "", nil, fmt.Errorf("cluster %q has no certificate authority", ctx.Cluster)
	}
	if cluster.Server == "" {
		return "", nil, fmt.Errorf("cluster %q has no server", ctx.Cluster)
	}
	return cluster.Server, ca, nil
}

// boundPods starts an informer cache of the pods bound to a node, without their managedFields,
// and returns it once synced: the kubelets read their pods from it every sync, as real kubelets
// watch theirs, instead of listing every pod of the cluster each second.
func boundPods(ctx context.Context, cfg *rest.Config) (client.Reader, error) {
	c, err := cache.New(cfg, cache.Options{
		ByObject:         map[client.Object]cache.ByObject{&corev1.Pod{}: {Field: fields.OneTermNotEqualSelector("spec.nodeName", "")}},
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("building the pod cache, %w", err)
	}
	if _, err := c.GetInformer(ctx, &corev1.Pod{}); err != nil {
		return nil, fmt.Errorf("starting the pod informer, %w", err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			ctrllog.FromContext(ctx).Error(err, "Running the pod cache")
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("the pod cache did not sync")
	}
	return c, nil
}
