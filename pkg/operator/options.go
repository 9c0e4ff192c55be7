package operator

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
)

// Options are the settings of the controller process.
type Options struct {
	// ClusterName is the EKS cluster's name; it tags instances and names launch templates.
	ClusterName string
	// ClusterEndpoint is the API server URL nodes join; empty means discovered from EKS.
	ClusterEndpoint string
	// InterruptionQueue is the SQS queue of EC2 interruption events; empty disables interruption
	// handling.
	InterruptionQueue string
	// BatchIdleDuration is how long provisioning waits after the last pending pod arrived before
	// it solves the batch.
	BatchIdleDuration time.Duration
	// BatchMaxDuration is the longest a batch stays open, however often pods keep arriving.
	BatchMaxDuration time.Duration
	// LogLevel is debug, info or error.
	LogLevel string
	// MetricsBindAddress serves /metrics; "0" turns the endpoint off.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" turns them off.
	HealthProbeBindAddress string
	// LeaderElection makes replicas elect one active controller through a Lease.
	LeaderElection bool
	// LeaderElectionNamespace holds the Lease (default kube-system, or $SYSTEM_NAMESPACE); empty
	// means the namespace the pod runs in, which only exists inside a pod.
	LeaderElectionNamespace string
	// LeaderElectionID names the Lease.
	LeaderElectionID string
	// LeaderElectionLeaseDuration is how long a Lease holds without renewal: a replica that dies
	// without releasing it (SIGKILL, a lost node) is replaced by another within this time plus
	// LeaderElectionRetryPeriod.
	LeaderElectionLeaseDuration time.Duration
	// LeaderElectionRenewDeadline is how long the leader keeps retrying a failed renewal before it
	// steps down; it must be shorter than the lease, so that it stops before another can start.
	LeaderElectionRenewDeadline time.Duration
	// LeaderElectionRetryPeriod is how often candidates try to acquire, and the leader to renew.
	LeaderElectionRetryPeriod time.Duration
	// GracefulShutdownTimeout bounds how long, after SIGTERM, the controllers' in-flight
	// reconciles may run before the process exits; the Lease is released after they stop, so
	// that the next leader never works alongside this one. Below Kubernetes' default 30 s grace
	// period so that the kubelet never SIGKILLs a shutdown in progress, and Joiner's promise is
	// an exit within 10 s.
	GracefulShutdownTimeout time.Duration
	// KubeClientQPS and KubeClientBurst bound the controller's requests to the API server. A
	// scale-up of hundreds of pods writes NodeClaims, status, taints and events; client-go's
	// defaults (5 QPS, burst 10) would queue them for minutes.
	KubeClientQPS   int
	KubeClientBurst int
	// EnableProfiling serves the Go runtime's profiles (net/http/pprof) under /debug/pprof/ on
	// the metrics address. Off by default: a CPU profile or trace costs the process while it
	// runs, and the profiles reveal the process's internals to whoever reaches the address.
	EnableProfiling bool
	// GCPercent is the garbage collector's target (runtime/debug.SetGCPercent): a collection
	// starts once the heap has grown by this percentage over what was live after the last one;
	// -1 turns collection off, zero stands for DefaultGCPercent. The controller's live heap is mostly its informer cache, kept for
	// the process's life, so Go's default of 100 lets the heap reach twice that cache before it
	// collects; DefaultGCPercent trades CPU for a smaller peak (the figures are in README.md's
	// performance section). GOGC, when set, is the default, as for any Go program.
	GCPercent int
	// NodeCost is what every new node costs per hour beyond its instance and volumes, in
	// dollars (per-host licences of the agents every node runs: $15 per host per month is
	// 15/730 = 0.0205). Provisioning minimises it with the instance prices, so it prefers fewer,
	// larger nodes as it grows.
	NodeCost float64
	// SchedulingOptions: --min-values-policy, --preference-policy and --scheduler-config.
	SchedulingOptions

	// FeatureGates are Karpenter's feature gates as Joiner answers them (featuregates.go).
	FeatureGates FeatureGates

	// envErrs are environment variables AddFlags could not parse; Validate reports them.
	envErrs []error
}

// Defaults of Options, as Karpenter's where the setting is the same.
const (
	DefaultBatchIdleDuration = time.Second
	DefaultBatchMaxDuration  = 10 * time.Second
	DefaultLeaderElectionID  = "joiner-leader-election"
	// The leader election timings are client-go's and controller-runtime's defaults.
	DefaultLeaderElectionLeaseDuration = 15 * time.Second
	DefaultLeaderElectionRenewDeadline = 10 * time.Second
	DefaultLeaderElectionRetryPeriod   = 2 * time.Second
	DefaultGracefulShutdownTimeout     = 8 * time.Second
	// DefaultGCPercent is GCPercent unless GOGC is set (Options.GCPercent says why not Go's 100).
	DefaultGCPercent = 50
	// DefaultKubeClientQPS and DefaultKubeClientBurst are Karpenter's defaults.
	DefaultKubeClientQPS   = 200
	DefaultKubeClientBurst = 300
)

// AddFlags registers a flag for every option on fs, each defaulting to its environment variable
// when that is set, and to the built-in default otherwise. Parsing fs fills o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterName, "cluster-name", env("CLUSTER_NAME", ""), "The cluster's name, as EKS knows it [CLUSTER_NAME]")
	fs.StringVar(&o.ClusterEndpoint, "cluster-endpoint", env("CLUSTER_ENDPOINT", ""), "The API server URL nodes join; empty: discovered from EKS [CLUSTER_ENDPOINT]")
	fs.StringVar(&o.InterruptionQueue, "interruption-queue", env("INTERRUPTION_QUEUE", ""), "The SQS queue of EC2 interruption events; empty: no interruption handling [INTERRUPTION_QUEUE]")
	fs.DurationVar(&o.BatchIdleDuration, "batch-idle-duration", o.envDuration("BATCH_IDLE_DURATION", DefaultBatchIdleDuration), "How long provisioning waits for more pending pods after the last one [BATCH_IDLE_DURATION]")
	fs.DurationVar(&o.BatchMaxDuration, "batch-max-duration", o.envDuration("BATCH_MAX_DURATION", DefaultBatchMaxDuration), "The longest a provisioning batch stays open [BATCH_MAX_DURATION]")
	fs.StringVar(&o.LogLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info or error [LOG_LEVEL]")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", env("METRICS_BIND_ADDRESS", ":8080"), "Address of /metrics; 0 turns it off [METRICS_BIND_ADDRESS]")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", env("HEALTH_PROBE_BIND_ADDRESS", ":8081"), "Address of /healthz and /readyz; 0 turns them off [HEALTH_PROBE_BIND_ADDRESS]")
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.envBool("LEADER_ELECT", true), "Elect one active replica through a Lease [LEADER_ELECT]")
	// A fixed default, not "the pod's own": outside a pod (the local stack, a laptop) there is no
	// own namespace and the manager would refuse to start.
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", env("LEADER_ELECTION_NAMESPACE", env("SYSTEM_NAMESPACE", "kube-system")), "Namespace of the leader Lease [LEADER_ELECTION_NAMESPACE, else SYSTEM_NAMESPACE]")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", env("LEADER_ELECTION_ID", DefaultLeaderElectionID), "Name of the leader Lease [LEADER_ELECTION_ID]")
	fs.DurationVar(&o.LeaderElectionLeaseDuration, "leader-election-lease-duration", o.envDuration("LEADER_ELECTION_LEASE_DURATION", DefaultLeaderElectionLeaseDuration), "How long the leader Lease holds without renewal; a killed leader is replaced within it [LEADER_ELECTION_LEASE_DURATION]")
	fs.DurationVar(&o.LeaderElectionRenewDeadline, "leader-election-renew-deadline", o.envDuration("LEADER_ELECTION_RENEW_DEADLINE", DefaultLeaderElectionRenewDeadline), "How long the leader retries renewing before it steps down [LEADER_ELECTION_RENEW_DEADLINE]")
	fs.DurationVar(&o.LeaderElectionRetryPeriod, "leader-election-retry-period", o.envDuration("LEADER_ELECTION_RETRY_PERIOD", DefaultLeaderElectionRetryPeriod), "How often replicas try to acquire or renew the Lease [LEADER_ELECTION_RETRY_PERIOD]")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", o.envDuration("GRACEFUL_SHUTDOWN_TIMEOUT", DefaultGracefulShutdownTimeout), "How long in-flight work may run after SIGTERM before the process exits [GRACEFUL_SHUTDOWN_TIMEOUT]")
	fs.BoolVar(&o.EnableProfiling, "enable-profiling", o.envBool("ENABLE_PROFILING", false), "Serve Go profiles (pprof) under /debug/pprof/ on the metrics address [ENABLE_PROFILING]")
	fs.IntVar(&o.KubeClientQPS, "kube-client-qps", o.envInt("KUBE_CLIENT_QPS", DefaultKubeClientQPS), "Requests per second the controller may make of the API server [KUBE_CLIENT_QPS]")
	fs.Float64Var(&o.NodeCost, "node-cost", o.envFloat("NODE_COST", 0), "Dollars per hour every new node costs beyond its instance and EBS volumes, such as per-host licences ($15/host/month is 0.0205) [NODE_COST]")
	fs.IntVar(&o.GCPercent, "gc-percent", o.envGCPercent(), "The garbage collector's target: a collection starts once the heap has grown by this percentage over what was live; -1 turns collection off [GOGC, where off is -1]")
	fs.IntVar(&o.KubeClientBurst, "kube-client-burst", o.envInt("KUBE_CLIENT_BURST", DefaultKubeClientBurst), "Requests the controller may make of the API server in a burst above --kube-client-qps [KUBE_CLIENT_BURST]")
	// Feature gates: featuregates.go.
	o.addFeatureGatesFlag(fs)
	o.addSchedulingFlags(fs)
}

// WithDefaults returns o with every zero leader-election and shutdown duration, and a zero
// GCPercent, set to its default, for callers that build Options without AddFlags.
func (o Options) WithDefaults() Options {
	for _, d := range []struct {
		field *time.Duration
		def   time.Duration
	}{
		{&o.LeaderElectionLeaseDuration, DefaultLeaderElectionLeaseDuration},
		{&o.LeaderElectionRenewDeadline, DefaultLeaderElectionRenewDeadline},
		{&o.LeaderElectionRetryPeriod, DefaultLeaderElectionRetryPeriod},
		{&o.GracefulShutdownTimeout, DefaultGracefulShutdownTimeout},
	} {
		if *d.field == 0 {
			*d.field = d.def
		}
	}
	if o.GCPercent == 0 {
		o.GCPercent = DefaultGCPercent
	}
	return o
}

// Validate reports every setting that cannot work, each with the fix. Zero durations stand for
// their defaults (WithDefaults).
func (o *Options) Validate() error {
	errs := append([]error(nil), o.envErrs...)
	d := o.WithDefaults()
	if o.ClusterName == "" {
		errs = append(errs, errors.New("--cluster-name (CLUSTER_NAME) is required: set it to the cluster's name"))
	}
	if o.BatchIdleDuration <= 0 {
		errs = append(errs, fmt.Errorf("--batch-idle-duration %s must be positive, for example 1s", o.BatchIdleDuration))
	}
	if o.BatchMaxDuration < o.BatchIdleDuration {
		errs = append(errs, fmt.Errorf("--batch-max-duration %s must be at least --batch-idle-duration %s", o.BatchMaxDuration, o.BatchIdleDuration))
	}
	if _, err := o.Level(); err != nil {
		errs = append(errs, err)
	}
	if d.LeaderElectionRetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--leader-election-retry-period %s must be positive, for example %s", d.LeaderElectionRetryPeriod, DefaultLeaderElectionRetryPeriod))
	}
	if d.LeaderElectionRenewDeadline <= d.LeaderElectionRetryPeriod {
		errs = append(errs, fmt.Errorf("--leader-election-renew-deadline %s must be longer than --leader-election-retry-period %s", d.LeaderElectionRenewDeadline, d.LeaderElectionRetryPeriod))
	}
	if d.LeaderElectionLeaseDuration <= d.LeaderElectionRenewDeadline {
		errs = append(errs, fmt.Errorf("--leader-election-lease-duration %s must be longer than --leader-election-renew-deadline %s, or two leaders could overlap", d.LeaderElectionLeaseDuration, d.LeaderElectionRenewDeadline))
	}
	if d.GracefulShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--graceful-shutdown-timeout %s must be positive, for example %s", d.GracefulShutdownTimeout, DefaultGracefulShutdownTimeout))
	}
	if o.KubeClientQPS <= 0 {
		errs = append(errs, fmt.Errorf("--kube-client-qps %d must be positive, for example %d", o.KubeClientQPS, DefaultKubeClientQPS))
	}
	if o.EnableProfiling && o.MetricsBindAddress == "0" {
		errs = append(errs, errors.New("--enable-profiling serves the profiles on the metrics address: set --metrics-bind-address, or leave profiling off"))
	}
	if o.NodeCost < 0 {
		errs = append(errs, fmt.Errorf("--node-cost %v is negative: give dollars per node per hour, 0 or more", o.NodeCost))
	}
	if o.GCPercent < -1 {
		errs = append(errs, fmt.Errorf("--gc-percent %d must be positive, or -1 for no collection, for example %d", o.GCPercent, DefaultGCPercent))
	}
	if o.KubeClientBurst < o.KubeClientQPS {
		errs = append(errs, fmt.Errorf("--kube-client-burst %d must be at least --kube-client-qps %d", o.KubeClientBurst, o.KubeClientQPS))
	}
	if _, err := o.Scheduling(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Level is LogLevel as a zap level.
func (o *Options) Level() (zapcore.Level, error) {
	switch o.LogLevel {
	case "debug":
		return zapcore.DebugLevel, nil
	case "info", "":
		return zapcore.InfoLevel, nil
	case "error":
		return zapcore.ErrorLevel, nil
	}
	return 0, fmt.Errorf("--log-level %q is not a level: use debug, info or error", o.LogLevel)
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

// envDuration, envInt and envBool return the default for an unset variable; an unparsable one is
// remembered for Validate, which refuses to start with it.
func (o *Options) envDuration(key string, def time.Duration) time.Duration {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		o.envErrs = append(o.envErrs, fmt.Errorf("%s=%q is not a duration, for example 1s", key, v))
		return def
	}
	return d
}

func (o *Options) envInt(key string, def int) int {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		o.envErrs = append(o.envErrs, fmt.Errorf("%s=%q is not a whole number", key, v))
		return def
	}
	return n
}

// envGCPercent is GOGC as the Go runtime reads it ("off" is -1), else DefaultGCPercent.
func (o *Options) envGCPercent() int {
	if v, ok := os.LookupEnv("GOGC"); ok && v == "off" {
		return -1
	}
	return o.envInt("GOGC", DefaultGCPercent)
}

func (o *Options) envFloat(key string, def float64) float64 {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		o.envErrs = append(o.envErrs, fmt.Errorf("%s=%q is not a number", key, v))
		return def
	}
	return f
}

func (o *Options) envBool(key string, def bool) bool {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		o.envErrs = append(o.envErrs, fmt.Errorf("%s=%q is not true or false", key, v))
		return def
	}
	return b
}
