package operator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/joinerhq/joiner/pkg/apis"
)

// Operator is a configured manager, not yet started, with the registry its metrics go to.
type Operator struct {
	// Manager runs the controllers, the shared cache and leader election. Its
	// GetEventRecorder returns the operator's recorders (eventRecorder), not controller-runtime's.
	Manager manager.Manager
	// Registry is where controllers register their metrics; /metrics serves it together with
	// controller-runtime's own (workqueue, reconcile and client metrics).
	Registry *prometheus.Registry
	// Options the operator was built with.
	Options Options
}

// NewLogger returns a zap logger writing JSON at the given level, with ISO 8601 times.
func NewLogger(level zapcore.Level) logr.Logger {
	return zap.New(zap.Level(level), zap.JSONEncoder(func(c *zapcore.EncoderConfig) {
		c.TimeKey = "time"
		c.EncodeTime = zapcore.ISO8601TimeEncoder
	}))
}

// New builds the manager for cfg: requests limited to opts.KubeClientQPS and KubeClientBurst,
// the scheme's types cached, leader election on a Lease when
// opts.LeaderElection is set (other replicas wait, running only their probes and metrics),
// /healthz and /readyz on opts.HealthProbeBindAddress (ready once the cache has synced), and
// /metrics on opts.MetricsBindAddress serving registry. The manager's GetEventRecorder returns
// recorders of events.k8s.io/v1 Events with bounded memory (eventRecorder).
func New(cfg *rest.Config, scheme *runtime.Scheme, opts Options, registry *prometheus.Registry, logger logr.Logger) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("validating options, %w", err)
	}
	opts = opts.WithDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(opts.KubeClientQPS), opts.KubeClientBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Logger: logger,
		// The one ConfigMap the operator reads is kube-system/aws-auth (the EC2NodeClass join
		// check): cached alone, so that RBAC get/list/watch on that one object is enough.
		Cache: cache.Options{
			ByObject: map[client.Object]cache.ByObject{
				&corev1.ConfigMap{}: {
					Namespaces: map[string]cache.Config{"kube-system": {}},
					Field:      fields.OneTermEqualSelector("metadata.name", "aws-auth"),
				},
			},
			// No controller reads managedFields, and they are a third to a half of a cached
			// pod's or node's bytes: with thousands of pods they were most of the heap. Nor
			// kubectl's last-applied annotation, nor much of a Pod's and a Node's spec and
			// status (stripUnread). Patches of a cached object without them leave the server's
			// fields as they are. The strings that repeat across Pods, Nodes and NodeClaims
			// are interned (interner).
			DefaultTransform: stripUnread(),
		},
		// controller-runtime's server serves only its global registry, so it is off and the
		// operator serves its own registry below.
		Metrics:                    metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:     opts.HealthProbeBindAddress,
		LeaderElection:             opts.LeaderElection,
		LeaderElectionResourceLock: "leases",
		LeaderElectionNamespace:    opts.LeaderElectionNamespace,
		LeaderElectionID:           opts.LeaderElectionID,
		// Released only once every runnable has stopped (controller-runtime cancels leader
		// election last), so the next leader starts after this one's in-flight work ended.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.LeaderElectionLeaseDuration,
		RenewDeadline:                 &opts.LeaderElectionRenewDeadline,
		RetryPeriod:                   &opts.LeaderElectionRetryPeriod,
		GracefulShutdownTimeout:       &opts.GracefulShutdownTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("building manager, %w", err)
	}
	eventClient, err := eventsv1client.NewForConfigAndClient(cfg, mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("building events client, %w", err)
	}
	events := newEventRecorder(eventClient, scheme, clock.RealClock{}, logger.WithName("events"))
	if err := mgr.Add(events); err != nil {
		return nil, fmt.Errorf("adding event recorder, %w", err)
	}
	if opts.HealthProbeBindAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return nil, fmt.Errorf("adding health check, %w", err)
		}
		if err := mgr.AddReadyzCheck("cache-synced", cacheSynced(mgr)); err != nil {
			return nil, fmt.Errorf("adding readiness check, %w", err)
		}
	}
	if opts.MetricsBindAddress != "0" {
		gatherers := prometheus.Gatherers{registry, ctrlmetrics.Registry}
		server := &metricsServer{addr: opts.MetricsBindAddress, handler: promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{}), profiling: opts.EnableProfiling}
		if err := mgr.Add(server); err != nil {
			return nil, fmt.Errorf("adding metrics server, %w", err)
		}
	}
	return &Operator{Manager: &recordingManager{Manager: mgr, events: events}, Registry: registry, Options: opts}, nil
}

// Start runs the manager until ctx is done.
func (o *Operator) Start(ctx context.Context) error {
	return o.Manager.Start(ctx)
}

// cacheSynced is a readiness check that passes once the manager's cache has synced.
func cacheSynced(mgr manager.Manager) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("cache not synced")
		}
		return nil
	}
}

// metricsServer serves /metrics on every replica, leader or not, and with profiling the Go
// runtime's profiles under /debug/pprof/.
type metricsServer struct {
	addr      string
	handler   http.Handler
	profiling bool
}

func (m *metricsServer) NeedLeaderElection() bool { return false }

func (m *metricsServer) Start(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.handler)
	if m.profiling {
		// pprof.Index serves every named profile (heap, allocs, goroutine...) under its path.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("listening for metrics on %s, %w", m.addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving metrics, %w", err)
	}
	return nil
}

// NewScheme returns a scheme with the client-go types and Joiner's API types.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering client-go types, %w", err)
	}
	if err := apis.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering Joiner types, %w", err)
	}
	return scheme, nil
}
