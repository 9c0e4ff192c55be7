// Package localstack runs Joiner's local stack on loopback: etcd and kube-apiserver (through
// envtest) with Joiner's CRDs, kube-scheduler and kube-controller-manager, the AWS emulator
// (cmd/awsemu) registering the Nodes of the instances it boots, and `joiner controller` pointed
// at the emulator, each program a child process with its own log. Demo tells the sample story.
//
// With Options.Helm and Options.GeneratedPolicy the controller runs with least privilege, as an
// operator installs it: as the Helm chart's ServiceAccount (audited) and with the generated IAM
// policy as its only AWS permissions (the emulator logs every decision).
//
// It owns start-up, teardown and the first apply; it makes no scaling decisions. The controller
// is a separate process so that it is exactly the program an operator runs, and so that tests can
// kill and restart it and read its peak memory.
package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/config/crd"
	"github.com/joinerhq/joiner/config/samples"
	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/manifest"
	"github.com/joinerhq/joiner/pkg/operator"
)

// Defaults of Options.
const (
	DefaultClusterName = "demo"
	DefaultRegion      = "us-west-2"
	// ControllerAccessKey is the access key id the emulator seeds for the controller's role.
	ControllerAccessKey = "AKIDJOINERCONTROLLER"
	startTimeout        = 2 * time.Minute
)

// Options configure the local stack.
type Options struct {
	// AssetsDir holds etcd, kube-apiserver, kube-scheduler and kube-controller-manager (what
	// `hack/install-testenv.sh bin/testenv` prints).
	AssetsDir string
	// WorkDir receives the kubeconfig and the programs' logs (WorkDir/logs); it is created if
	// missing.
	WorkDir string
	// Out receives progress for the user; nil discards it.
	Out io.Writer
	// EmulatorPath is the awsemu program. Empty: no emulator and no controller, only the
	// Kubernetes control plane.
	EmulatorPath string
	// EmulatorArgs are added to awsemu's flags (its timings, for example).
	EmulatorArgs []string
	// EmulatorRateLimits is how the emulator meters API requests against AWS's published
	// limits (docs/design/awsemu.md): off, aws or a factor of AWS's limits. Empty:
	// $JOINER_EMU_RATE_LIMITS (RateLimitsEnv), else aws.
	EmulatorRateLimits string
	// JoinerPath is the joiner program, run as `joiner controller`. Empty: no controller.
	JoinerPath string
	// ControllerArgs are added to the controller's flags.
	ControllerArgs []string
	// ClusterName is the EKS cluster the emulator seeds and the controller manages; with World
	// it must be empty or the world's.
	ClusterName string
	// Region is the AWS region the controller works in; with World it must be empty or the
	// world's.
	Region string
	// World is a world file (docs/world.md) the emulator seeds instead of the demo world. The
	// controller then runs with the world's cluster name, region, controller access key and
	// interruption queue. The file is validated before anything starts. Without it the
	// controller reads the demo world's interruption queue (named after the cluster), so that
	// the stack handles interruptions either way; --interruption-queue in ControllerArgs
	// overrides the queue (empty turns interruption handling off).
	World string
	// Samples applies config/samples (EC2NodeClass, NodePool, aws-auth, Deployment) once the
	// stack is up.
	Samples bool
	// Helm is the helm program. Set, the controller runs as the Helm chart's ServiceAccount:
	// the RBAC of ChartDir, rendered with `helm template`, is applied, the controller's
	// kubeconfig (ControllerKubeconfigPath) holds a token of the ServiceAccount, and the API
	// server writes the ServiceAccount's requests to an audit log (AuditLogPath) for
	// chartrbac.Unused. Empty: the controller runs as cluster admin.
	Helm string
	// ChartDir is the chart Helm renders (charts/joiner); required with Helm.
	ChartDir string
	// GeneratedPolicy makes `joiner iam-policy` output (iampolicy.New) for the stack's cluster,
	// region, account, node roles and interruption queue the controller role's only policy,
	// in place of the world's controllerPolicy (or the demo world's allow-all), so that a call
	// it does not grant is denied. The emulator logs every decision (Authorizations).
	GeneratedPolicy bool
}

// Stack is a running local stack.
type Stack struct {
	// KubeconfigPath is a cluster-admin kubeconfig for the stack's API server.
	KubeconfigPath string
	// Config reaches the API server as cluster admin.
	Config *rest.Config
	// Client reaches the API server as cluster admin, uncached.
	Client client.Client
	// EmulatorURL is the AWS emulator's endpoint (AWS_ENDPOINT_URL), empty without one.
	EmulatorURL string
	// Controller is the `joiner controller` process, nil without one. Kill and Start it to
	// crash and restart it.
	Controller *Process
	// ControllerMetricsURL serves the controller's /metrics.
	ControllerMetricsURL string
	// World is the world the emulator was seeded with, its defaults filled in; nil for the demo
	// world.
	World *world.File
	// ClusterName and Region are the EKS cluster the emulator seeds and the controller manages,
	// and its AWS region (what AWS_REGION should be for a client of EmulatorURL).
	ClusterName, Region string
	// InterruptionQueue is the SQS queue the controller reads interruption events from: the
	// world's, or the demo world's; "" when ControllerArgs turned it off.
	InterruptionQueue string
	// AdminAccessKey is the emulator's administrator key (allowed everything, whatever the
	// world's IAM holds): what a person at the local stack uses for the AWS CLI or joiner's
	// commands that read AWS, as an operator uses their own credentials.
	AdminAccessKey string
	// ControllerKubeconfigPath is the kubeconfig the controller runs with: the chart's
	// ServiceAccount's with Options.Helm, else KubeconfigPath.
	ControllerKubeconfigPath string
	// ServiceAccountUser is the user name of the chart's ServiceAccount (Options.Helm), as the
	// audit log names it.
	ServiceAccountUser string
	// Chart is the rendered chart whose RBAC was applied (Options.Helm).
	Chart []*unstructured.Unstructured
	// AuditLogPath is the API server's audit log of the ServiceAccount's requests
	// (Options.Helm), JSON lines.
	AuditLogPath string
	// ControllerPolicy is the generated policy the controller role holds
	// (Options.GeneratedPolicy).
	ControllerPolicy *iampolicy.Document
	// ControllerRoleARN is the controller role's ARN (Options.GeneratedPolicy): Authorizations
	// reads its decisions.
	ControllerRoleARN string
	// EmulatorRateLimits is the rate-limit mode the emulator started with (off, aws or a
	// factor); GET EmulatorURL/_awsemu/limits reports its buckets.
	EmulatorRateLimits string

	opts Options
	// emulatorWorld is the world file the emulator seeds from: opts.World, or the one
	// seedPolicy wrote; "" for the demo world.
	emulatorWorld string
	out           io.Writer
	env           *envtest.Environment
	processes     []*Process // in start order
	http          *http.Client
}

// Start starts the stack: the control plane with the CRDs, kube-scheduler and
// kube-controller-manager, then the emulator and the controller when their programs are given,
// then the samples when asked. On error, whatever had started is stopped again.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	s := &Stack{opts: opts, out: opts.Out, http: &http.Client{Timeout: 5 * time.Second}}
	if s.out == nil {
		s.out = io.Discard
	}
	// A world is read and validated whole before anything starts, so that a refused one starts
	// nothing.
	if opts.World != "" {
		w, err := loadWorld(&opts)
		if err != nil {
			return nil, err
		}
		s.World, s.opts = w, opts
		fmt.Fprintf(s.out, "World %s: %s\n", opts.World, w)
	}
	if s.opts.ClusterName == "" {
		s.opts.ClusterName = DefaultClusterName
	}
	if s.opts.Region == "" {
		s.opts.Region = DefaultRegion
	}
	s.emulatorWorld = s.opts.World
	s.ClusterName, s.Region = s.opts.ClusterName, s.opts.Region
	s.AdminAccessKey = authz.AdminAccessKey
	var err error
	if s.EmulatorRateLimits, err = emulatorRateLimits(s.opts); err != nil {
		return nil, err
	}
	if s.InterruptionQueue, err = s.interruptionQueue(); err != nil {
		return nil, err
	}
	if s.opts.Helm != "" && s.opts.ChartDir == "" {
		return nil, errors.New("running the controller as the chart's ServiceAccount needs the chart: set ChartDir with Helm")
	}
	if s.opts.GeneratedPolicy {
		if err := s.seedPolicy(); err != nil {
			return nil, err
		}
	}
	if err := s.start(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// interruptionQueue is the queue the controller is to read: --interruption-queue of
// ControllerArgs when they give it, else the world's or the demo world's.
func (s *Stack) interruptionQueue() (string, error) {
	if q, set := flagValue(s.opts.ControllerArgs, "--interruption-queue"); set {
		return q, nil
	}
	w, err := s.describeWorld()
	if err != nil {
		return "", err
	}
	return w.Cluster.InterruptionQueue, nil
}

// loadWorld reads opts.World and sets the cluster name and region from it, which must not
// contradict the ones opts gives; opts.World becomes an absolute path for the emulator.
func loadWorld(opts *Options) (*world.File, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the instance-type catalogue, %w", err)
	}
	w, err := world.Load(opts.World, cat)
	if err != nil {
		return nil, err
	}
	if opts.ClusterName != "" && opts.ClusterName != w.Cluster.Name {
		return nil, fmt.Errorf("cluster %s was asked for, but world %s names cluster %s", opts.ClusterName, opts.World, w.Cluster.Name)
	}
	if opts.Region != "" && opts.Region != w.Cluster.Region {
		return nil, fmt.Errorf("region %s was asked for, but world %s puts the cluster in %s", opts.Region, opts.World, w.Cluster.Region)
	}
	opts.ClusterName, opts.Region = w.Cluster.Name, w.Cluster.Region
	if opts.World, err = filepath.Abs(opts.World); err != nil {
		return nil, fmt.Errorf("resolving world file path, %w", err)
	}
	return w, nil
}

func (s *Stack) start(ctx context.Context) error {
	o := s.opts
	if err := o.checkPrograms(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return fmt.Errorf("creating work directory, %w", err)
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		return err
	}
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Starting etcd and kube-apiserver from %s\n", o.AssetsDir)
	if err := s.persistControlPlane(&envtest.Environment{BinaryAssetsDirectory: o.AssetsDir, Scheme: scheme, CRDs: crds}); err != nil {
		return err
	}
	if o.Helm != "" {
		if err := s.configureAudit(); err != nil {
			return err
		}
	}
	if s.Config, err = s.env.Start(); err != nil {
		s.env = nil
		return fmt.Errorf("starting control plane, %w", err)
	}
	// The stack's own reads (the story, the tests' checks) list every pod each second.
	s.Config.QPS, s.Config.Burst = 500, 1000
	if s.Client, err = client.New(s.Config, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("building client, %w", err)
	}
	if s.KubeconfigPath, err = writeKubeconfig(s.env, o.WorkDir); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "API server at %s with %d CRDs; kubeconfig %s\n", s.Config.Host, len(crds), s.KubeconfigPath)
	s.ControllerKubeconfigPath = s.KubeconfigPath
	if o.Helm != "" {
		if err := s.applyChartRBAC(ctx); err != nil {
			return err
		}
	}

	logs := filepath.Join(o.WorkDir, "logs")
	if err := s.startKubeComponents(logs); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "kube-scheduler and kube-controller-manager running; logs in %s\n", logs)

	if o.EmulatorPath != "" {
		if err := s.startEmulator(ctx, logs); err != nil {
			return err
		}
	}
	if o.JoinerPath != "" {
		if err := s.startController(ctx, logs); err != nil {
			return err
		}
	}
	if o.Samples {
		return s.applySamples(ctx)
	}
	return nil
}

// startKubeComponents starts kube-scheduler and kube-controller-manager, logging into logs.
func (s *Stack) startKubeComponents(logs string) error {
	o := s.opts
	schedulerConfig, err := writeSchedulerConfig(o.WorkDir, s.KubeconfigPath)
	if err != nil {
		return err
	}
	for _, p := range []*Process{
		{Name: "kube-scheduler", Path: filepath.Join(o.AssetsDir, "kube-scheduler"),
			Args: []string{"--config", schedulerConfig, "--secure-port=0"}},
		{Name: "kube-controller-manager", Path: filepath.Join(o.AssetsDir, "kube-controller-manager"),
			Args: []string{"--kubeconfig", s.KubeconfigPath, "--leader-elect=false", "--secure-port=0",
				"--use-service-account-credentials=false", "--controllers=*,-serviceaccount-token",
				"--kube-api-qps=" + controlPlaneQPS, "--kube-api-burst=" + controlPlaneQPS}},
	} {
		p.LogPath = filepath.Join(logs, p.Name+".log")
		if err := s.run(p); err != nil {
			return err
		}
	}
	return nil
}

// checkPrograms fails, naming the fix, when a program the options ask for is missing.
func (o *Options) checkPrograms() error {
	for _, bin := range []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(o.AssetsDir, bin)); err != nil {
			return fmt.Errorf("no %s in %s: run `make testenv` first, %w", bin, o.AssetsDir, err)
		}
	}
	for name, path := range map[string]string{"emulator": o.EmulatorPath, "joiner": o.JoinerPath} {
		if _, err := os.Stat(path); path != "" && err != nil {
			return fmt.Errorf("no %s program at %s: run `make build` first, %w", name, path, err)
		}
	}
	if o.JoinerPath != "" && o.EmulatorPath == "" {
		return errors.New("the controller needs the emulator: set EmulatorPath too")
	}
	return nil
}

func (s *Stack) startEmulator(ctx context.Context, logs string) error {
	addr, err := freeAddress()
	if err != nil {
		return err
	}
	p := &Process{
		Name: "awsemu", Path: s.opts.EmulatorPath, LogPath: filepath.Join(logs, "awsemu.log"),
		// EmulatorArgs come after --rate-limits: one they give wins.
		Args: append([]string{"--listen", addr, "--kubeconfig", s.KubeconfigPath, "--rate-limits", s.EmulatorRateLimits}, s.opts.EmulatorArgs...),
	}
	if s.emulatorWorld != "" {
		p.Args = append(p.Args, "--world", s.emulatorWorld)
	} else {
		p.Args = append(p.Args, "--cluster-name", s.opts.ClusterName)
	}
	if err := s.run(p); err != nil {
		return err
	}
	s.EmulatorURL = "http://" + addr
	wait, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := waitHTTP(wait, p, s.EmulatorURL+"/_awsemu/instances", s.status); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "AWS emulator at %s (cluster %s in %s, instances at %s/_awsemu/instances, AWS rate limits %s at %s/_awsemu/limits)\n",
		s.EmulatorURL, s.opts.ClusterName, s.opts.Region, s.EmulatorURL, s.EmulatorRateLimits, s.EmulatorURL)
	return nil
}

func (s *Stack) startController(ctx context.Context, logs string) error {
	metrics, err := freeAddress()
	if err != nil {
		return err
	}
	health, err := freeAddress()
	if err != nil {
		return err
	}
	args := []string{"controller", "--cloud-provider", "aws", "--kubeconfig", s.ControllerKubeconfigPath,
		"--cluster-name", s.opts.ClusterName, "--aws-region", s.opts.Region,
		"--metrics-bind-address", metrics, "--health-probe-bind-address", health}
	// The controller is the world's controller identity and nothing more: its access key stands
	// for the world's controller role, limited by the world's controller policy.
	key := ControllerAccessKey
	if s.World != nil {
		key = s.World.ControllerAccessKeyID
	}
	// The queue is the world's or the demo world's, as an operator installing Joiner beside
	// Karpenter's EventBridge rules gives it; ControllerArgs, after it, may override it.
	if s.InterruptionQueue != "" {
		args = append(args, "--interruption-queue", s.InterruptionQueue)
	}
	args = append(args, featureGatesArgs()...)
	p := &Process{
		Name: "joiner-controller", Path: s.opts.JoinerPath, LogPath: filepath.Join(logs, "joiner-controller.log"),
		Args: append(args, s.opts.ControllerArgs...),
		// The emulator accepts the seeded controller key with any secret.
		Env: []string{"AWS_ENDPOINT_URL=" + s.EmulatorURL, "AWS_ACCESS_KEY_ID=" + key,
			"AWS_SECRET_ACCESS_KEY=local-stack", "AWS_SESSION_TOKEN=", "AWS_PROFILE=", "AWS_EC2_METADATA_DISABLED=true"},
	}
	if err := s.run(p); err != nil {
		return err
	}
	s.Controller = p
	s.ControllerMetricsURL = "http://" + metrics + "/metrics"
	wait, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := waitHTTP(wait, p, "http://"+health+"/readyz", s.status); err != nil {
		return err
	}
	queue := "interruption queue " + s.InterruptionQueue
	if s.InterruptionQueue == "" {
		queue = "no interruption queue"
	}
	fmt.Fprintf(s.out, "joiner controller running (pid %d, metrics %s, %s)\n", p.Pid(), s.ControllerMetricsURL, queue)
	return nil
}

// persistControlPlane makes env the stack's control plane, keeping etcd's data and the API server's certificates and service-account
// keys in WorkDir rather than in directories envtest removes on stop, so that
// RestartControlPlane brings back the same cluster, whose clients and tokens stay valid.
func (s *Stack) persistControlPlane(env *envtest.Environment) error {
	s.env = env
	etcd, err := filepath.Abs(filepath.Join(s.opts.WorkDir, "etcd"))
	if err != nil {
		return fmt.Errorf("resolving the etcd data directory, %w", err)
	}
	certs := filepath.Join(filepath.Dir(etcd), "apiserver")
	for _, dir := range []string{etcd, certs} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating %s, %w", dir, err)
		}
	}
	s.env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcd}
	s.env.ControlPlane.GetAPIServer().CertDir = certs
	return nil
}

// RestartControlPlane stops kube-apiserver and etcd, waits down, and starts them again on the
// same addresses with the same data and certificates, as a control-plane upgrade or an etcd
// failover does. The other programs keep running and see the API server refuse connections
// meanwhile. Each gets SIGTERM and, still running after controlPlaneGrace (kube-apiserver
// drains its watches for longer), SIGKILL, which envtest reports as a timeout: the restart
// goes on after it, as after a crash.
func (s *Stack) RestartControlPlane(ctx context.Context, down time.Duration) error {
	cp := &s.env.ControlPlane
	cp.APIServer.StopTimeout, cp.Etcd.StopTimeout = controlPlaneGrace, controlPlaneGrace
	if err := cp.APIServer.Stop(); err != nil && !killedAfterGrace(err) {
		return fmt.Errorf("stopping kube-apiserver, %w", err)
	}
	if err := cp.Etcd.Stop(); err != nil && !killedAfterGrace(err) {
		return fmt.Errorf("stopping etcd, %w", err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	if err := cp.Etcd.Start(); err != nil {
		return fmt.Errorf("restarting etcd, %w", err)
	}
	if err := cp.APIServer.Start(); err != nil {
		return fmt.Errorf("restarting kube-apiserver, %w", err)
	}
	return nil
}

// controlPlaneGrace is how long RestartControlPlane lets kube-apiserver and etcd stop.
const controlPlaneGrace = 5 * time.Second

// killedAfterGrace reports whether envtest's stop error says only that the process outlived its
// grace period and was then killed (envtest words it so; a failed kill adds "unable to kill").
func killedAfterGrace(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "timeout waiting for process") && !strings.Contains(msg, "unable to kill")
}

// run starts p and remembers it for Stop.
func (s *Stack) run(p *Process) error {
	if err := p.Start(); err != nil {
		return err
	}
	s.processes = append(s.processes, p)
	return nil
}

func (s *Stack) status(url string) (int, error) {
	resp, err := s.http.Get(url)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// Stop stops the programs in reverse start order, then kube-apiserver and etcd.
func (s *Stack) Stop() error {
	var errs []error
	for i := len(s.processes) - 1; i >= 0; i-- {
		errs = append(errs, s.processes[i].Stop())
	}
	if s.env != nil {
		fmt.Fprintln(s.out, "Stopping the control plane")
		errs = append(errs, s.env.Stop())
	}
	return errors.Join(errs...)
}

// controlPlaneQPS is the client limit (requests per second, and the burst) of
// kube-controller-manager (each of its controllers has its own) and kube-scheduler: 300. The
// Kubernetes project's 5,000-node scale tests on AWS give both 500 by default (kops
// tests/e2e/scenarios/scalability/run-test.sh) and have been run at 300 (kubernetes/kops#17942);
// managed control planes raise them likewise. The defaults (20 and 30 for
// kube-controller-manager, 50 and 100 for kube-scheduler) made the ReplicaSet controller take
// 50 s to create 1,000 pods; at 100, creating them took 9 s and kube-scheduler's marking them
// unschedulable (one status write per pod, the condition a node autoscaler acts on) as long
// again, so that a scale-up measured the control plane's client limits, not the autoscaler.
const controlPlaneQPS = "300"

// schedulerConfigTemplate configures kube-scheduler to pack pods onto the fullest node that fits
// (NodeResourcesFit MostAllocated), as clusters run with a node autoscaler usually are: the
// default spreads pods across the new nodes, leaving the pods a plan packed together pending
// again and buying nodes no plan asked for.
const schedulerConfigTemplate = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %s
  burst: %s
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
`

func writeSchedulerConfig(dir, kubeconfig string) (string, error) {
	path, err := filepath.Abs(filepath.Join(dir, "kube-scheduler.yaml"))
	if err != nil {
		return "", fmt.Errorf("resolving scheduler configuration path, %w", err)
	}
	if err := os.WriteFile(path, fmt.Appendf(nil, schedulerConfigTemplate, kubeconfig, controlPlaneQPS, controlPlaneQPS), 0o600); err != nil {
		return "", fmt.Errorf("writing scheduler configuration, %w", err)
	}
	return path, nil
}

func writeKubeconfig(env *envtest.Environment, dir string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: "joiner-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding admin user, %w", err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering kubeconfig, %w", err)
	}
	path, err := filepath.Abs(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return "", fmt.Errorf("resolving kubeconfig path, %w", err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig, %w", err)
	}
	return path, nil
}

// SampleObjects returns the sample manifests' objects, in apply order, keeping those whose kind
// is in kinds (all when kinds is empty).
func SampleObjects(kinds ...string) ([]client.Object, error) {
	docs, err := samples.Manifests()
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, doc := range docs {
		objects, err := manifest.DecodeBytes(doc)
		if err != nil {
			return nil, fmt.Errorf("decoding sample manifests, %w", err)
		}
		for _, obj := range objects {
			if len(kinds) == 0 || slices.Contains(kinds, obj.GetKind()) {
				out = append(out, obj)
			}
		}
	}
	return out, nil
}

// Apply creates each object, leaving alone those that exist, and reports each it created.
func (s *Stack) Apply(ctx context.Context, objects ...client.Object) error {
	for _, obj := range objects {
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		err := s.Client.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("applying %s %s, %w", kind, obj.GetName(), err)
		}
		name := obj.GetName()
		if ns := obj.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		fmt.Fprintf(s.out, "Applied %s %s\n", kind, name)
	}
	return nil
}

func (s *Stack) applySamples(ctx context.Context) error {
	objects, err := SampleObjects()
	if err != nil {
		return err
	}
	return s.Apply(ctx, objects...)
}

func (s *Stack) logDir() string { return filepath.Join(s.opts.WorkDir, "logs") }

func newGet(ctx context.Context, url string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("building request for %s, %w", url, err)
	}
	return req, nil
}
