package operator_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	"github.com/joinerhq/joiner/pkg/operator"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

// Short leader election timings, so that a hand-over takes seconds.
const (
	testLease = 4 * time.Second
	testRetry = 250 * time.Millisecond
)

// leadership records when each replica's leader-only work ran.
type leadership struct {
	mu      sync.Mutex
	started map[string]time.Time
	stopped map[string]time.Time
}

// replica builds an operator named name whose only leader-only runnable records its start and,
// after linger past its context's end (an in-flight call finishing), its stop.
func (l *leadership) replica(t *testing.T, name, lease string, linger time.Duration) *operator.Operator {
	t.Helper()
	op, err := operator.New(env.Config, env.Scheme, operator.Options{
		ClusterName: "test", LogLevel: "info", MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		BatchIdleDuration: time.Second, BatchMaxDuration: 10 * time.Second,
		KubeClientQPS: operator.DefaultKubeClientQPS, KubeClientBurst: operator.DefaultKubeClientBurst,
		LeaderElection: true, LeaderElectionNamespace: "default", LeaderElectionID: lease,
		LeaderElectionLeaseDuration: testLease, LeaderElectionRenewDeadline: testLease * 3 / 4, LeaderElectionRetryPeriod: testRetry,
		GracefulShutdownTimeout: 2 * time.Second,
	}, prometheus.NewRegistry(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	err = op.Manager.Add(manager.RunnableFunc(func(ctx context.Context) error {
		l.mu.Lock()
		l.started[name] = time.Now()
		l.mu.Unlock()
		<-ctx.Done()
		time.Sleep(linger) // stands for an in-flight AWS call that does not watch ctx
		l.mu.Lock()
		l.stopped[name] = time.Now()
		l.mu.Unlock()
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func (l *leadership) times(name string) (started, stopped time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started[name], l.stopped[name]
}

// start runs op until the returned cancel, whose result is how long Start took to return after it.
func start(t *testing.T, op *operator.Operator) (cancel func() time.Duration) {
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		_ = op.Start(ctx)
		close(done)
	}()
	return func() time.Duration {
		stop()
		begin := time.Now()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("operator did not stop within 30s")
		}
		return time.Since(begin)
	}
}

func elected(t *testing.T, op *operator.Operator, within time.Duration) time.Duration {
	t.Helper()
	begin := time.Now()
	select {
	case <-op.Manager.Elected():
		return time.Since(begin)
	case <-time.After(within):
		t.Fatalf("not elected within %s", within)
		return 0
	}
}

// TestLeaderHandOverOnShutdown: with two replicas, stopping the leader (SIGTERM cancels its
// context) lets its in-flight work finish, releases the Lease only then, and the standby leads
// at once; the two never do leader work at the same time, and the stop takes well under 10 s.
func TestLeaderHandOverOnShutdown(t *testing.T) {
	l := &leadership{started: map[string]time.Time{}, stopped: map[string]time.Time{}}
	a := l.replica(t, "a", "handover", 500*time.Millisecond)
	stopA := start(t, a)
	elected(t, a, 10*time.Second)
	b := l.replica(t, "b", "handover", 0)
	stopB := start(t, b)
	defer stopB()
	select {
	case <-b.Manager.Elected():
		t.Fatal("standby elected while the leader holds the Lease")
	case <-time.After(3 * testRetry):
	}
	stopped := time.Now()
	took := stopA()
	if took > 10*time.Second {
		t.Errorf("leader took %s to stop after SIGTERM, want under 10s", took)
	}
	elected(t, b, testLease)
	handOver := time.Since(stopped)
	_, aStopped := l.times("a")
	bStarted, _ := l.times("b")
	testkit.Eventually(t, 5*time.Second, func() string {
		if bStarted, _ = l.times("b"); bStarted.IsZero() {
			return "b's leader work has not started"
		}
		return ""
	})
	if aStopped.IsZero() || bStarted.Before(aStopped) {
		t.Errorf("b started leading at %s before a's in-flight work ended at %s", bStarted, aStopped)
	}
	t.Logf("leader stopped in %s (in-flight work 500ms); standby elected %s after SIGTERM", took, handOver)
}

// TestLeaderTakeOverAfterKill: a leader that died without releasing its Lease (SIGKILL) is
// replaced within the Lease duration after its last renewal.
func TestLeaderTakeOverAfterKill(t *testing.T) {
	renewed := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "takeover"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("killed-replica"), LeaseDurationSeconds: ptr.To(int32(testLease / time.Second)),
			AcquireTime: &renewed, RenewTime: &renewed},
	}
	if err := env.Client.Create(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	l := &leadership{started: map[string]time.Time{}, stopped: map[string]time.Time{}}
	b := l.replica(t, "b", "takeover", 0)
	stopB := start(t, b)
	defer stopB()
	elected(t, b, testLease+2*time.Second)
	if since := time.Since(renewed.Time); since < testLease {
		t.Errorf("took over %s after the last renewal, before the %s Lease expired", since, testLease)
	} else {
		t.Logf("took over %s after the killed leader's last renewal (Lease %s, retry %s)", since, testLease, testRetry)
	}
}

// TestShutdownBounded: in-flight work that ignores the shutdown holds the process no longer than
// GracefulShutdownTimeout.
func TestShutdownBounded(t *testing.T) {
	l := &leadership{started: map[string]time.Time{}, stopped: map[string]time.Time{}}
	a := l.replica(t, "stuck", "bounded", time.Minute)
	stopA := start(t, a)
	elected(t, a, 10*time.Second)
	testkit.Eventually(t, 5*time.Second, func() string {
		if s, _ := l.times("stuck"); s.IsZero() {
			return "leader work not started"
		}
		return ""
	})
	if took := stopA(); took > 4*time.Second {
		t.Errorf("stop took %s with a 2s GracefulShutdownTimeout", took)
	}
}
