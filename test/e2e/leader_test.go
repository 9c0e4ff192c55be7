package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
	"github.com/joinerhq/joiner/pkg/operator"
)

// TestLeaderHandOver runs two controller replicas with leader election, as the chart does.
// SIGKILLing the leader mid scale-up hands the Lease to the other replica within the Lease
// duration and 2.4 retry periods (the successor must see the Lease unrenewed for a whole
// duration, and looks every jittered retry period); SIGTERM mid scale-up lets the leader finish its
// in-flight calls and exit within 10 s, releasing the Lease; SIGKILL during the deletion of
// everything hands over again. Throughout, no launch or termination is done twice: every
// instance ever launched carries a NodeClaim of its own, successful CreateFleet calls equal the
// NodeClaims launched and successful TerminateInstances calls the instances terminated.
func TestLeaderHandOver(t *testing.T) {
	const (
		lease = operator.DefaultLeaderElectionLeaseDuration
		retry = operator.DefaultLeaderElectionRetryPeriod
	)
	stack := startStack(t, "--leader-elect=true")
	ctx := t.Context()
	first := stack.Controller
	holder := waitLeader(t, ctx, stack, "")
	second := secondReplica(t, ctx, stack)
	if now := leaseHolder(t, ctx, stack); now != holder {
		t.Fatalf("the second replica took the Lease from %s: %s", holder, now)
	}

	namespace(t, ctx, stack, "leader")
	pool := nodePool("general", 10, "")
	web := deployment("leader", "web", 8, "1", "1Gi")
	if err := stack.Apply(ctx, pool, web); err != nil {
		t.Fatal(err)
	}
	waitNodeClaims(t, ctx, stack, 1)
	// SIGKILL mid scale-up: the Lease stays held until it expires.
	killed := time.Now()
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	holder = waitLeader(t, ctx, stack, holder)
	handOver := time.Since(killed)
	t.Logf("SIGKILL: the second replica leads %s after the kill (Lease %s, retry %s; load %s)", handOver.Round(100*time.Millisecond), lease, retry, loadAverage())
	// The successor sees the last renewal up to one retry period late (client-go jitters it by up
	// to 1.2x), must then see the Lease unrenewed for a whole duration, and tries once per retry
	// period: at most the duration and 2.4 retry periods after the kill, and 3s for an API
	// server loaded as CI's (20.6s was measured at load 42 on 2 cores) and this test's polling.
	if limit := lease + retry*12/5 + 3*time.Second; handOver > limit {
		t.Errorf("hand-over after SIGKILL took %s, more than the Lease duration %s and 2.4 retry periods %s (and 3s)", handOver, lease, retry)
	}
	allRunning(t, stack, "leader", 8)
	checkOnce(t, ctx, stack)

	// SIGTERM mid scale-up: the leader finishes what it does and leaves within 10 s; the Lease is
	// released, so the first replica, started again as a standby, leads at once.
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	before := nodeClaimCount(t, ctx, stack)
	scale(t, ctx, stack.Client, web, 16)
	waitNodeClaims(t, ctx, stack, before+1)
	termed := time.Now()
	if err := syscall.Kill(second.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the leader exits after SIGTERM", func(context.Context) (bool, string, error) {
		return !second.Running(), "still running", nil
	})
	exited := time.Since(termed)
	holder = waitLeader(t, ctx, stack, holder)
	t.Logf("SIGTERM: the leader exited %s after the signal, the first replica led %s after it (load %s)", exited.Round(100*time.Millisecond), time.Since(termed).Round(100*time.Millisecond), loadAverage())
	if exited > 10*time.Second {
		t.Errorf("the leader took %s to exit after SIGTERM, want at most 10s", exited)
	}
	allRunning(t, stack, "leader", 16)
	checkOnce(t, ctx, stack)

	// SIGKILL while everything is deleted: the second replica, a standby again, finishes the
	// deletion, and each instance is terminated once.
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	if err := stack.Client.Delete(ctx, web); err != nil {
		t.Fatal(err)
	}
	if err := stack.Client.Delete(ctx, pool); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "a NodeClaim being deleted", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims); err != nil {
			return false, "", err
		}
		return slices.ContainsFunc(claims.Items, func(nc v1.NodeClaim) bool { return nc.DeletionTimestamp != nil }), "none", nil
	})
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	killed = time.Now()
	waitLeader(t, ctx, stack, holder)
	t.Logf("SIGKILL during deletion: the second replica leads %s after the kill (load %s)", time.Since(killed).Round(100*time.Millisecond), loadAverage())
	checkNothingLeft(t, stack)
	all, err := stack.Instances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if calls := emulatorCalls(t, ctx, stack); calls["TerminateInstances"] != len(all) {
		t.Errorf("%d successful TerminateInstances calls for %d instances: an instance was terminated twice, or one was left", calls["TerminateInstances"], len(all))
	}
}

// secondReplica starts another `joiner controller` like the stack's, on its own metrics and
// probe ports and log; it is stopped when the test ends.
func secondReplica(t *testing.T, ctx context.Context, stack *localstack.Stack) *localstack.Process {
	t.Helper()
	p := &localstack.Process{Name: "joiner-controller-2", Path: stack.Controller.Path, Env: stack.Controller.Env,
		Args: slices.Clone(stack.Controller.Args), LogPath: filepath.Join(t.TempDir(), "joiner-controller-2.log")}
	var health string
	for i, a := range p.Args {
		switch a {
		case "--metrics-bind-address":
			p.Args[i+1] = loopbackAddress(t)
		case "--health-probe-bind-address":
			health = loopbackAddress(t)
			p.Args[i+1] = health
		}
	}
	if health == "" {
		t.Fatalf("the controller's arguments have no --health-probe-bind-address: %v", p.Args)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, filepath.Dir(p.LogPath))
		}
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	})
	eventually(t, 2*time.Minute, "the second replica ready", func(ctx context.Context) (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+health+"/readyz", nil)
		if err != nil {
			return false, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	})
	return p
}

// loopbackAddress is a loopback address with a port free now.
func loopbackAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// leaseHolder is the holder of the controller's leader Lease, "" while none holds it.
func leaseHolder(t *testing.T, ctx context.Context, stack *localstack.Stack) string {
	t.Helper()
	var l coordinationv1.Lease
	key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: operator.DefaultLeaderElectionID}
	if err := stack.Client.Get(ctx, key, &l); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitLeader waits, polling every 100ms, for the Lease to be held by another replica than
// previous, and returns the holder.
func waitLeader(t *testing.T, ctx context.Context, stack *localstack.Stack, previous string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if h := leaseHolder(t, ctx, stack); h != "" && h != previous {
			return h
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("no replica but %q took the Lease within a minute", previous)
	return ""
}

func nodeClaimCount(t *testing.T, ctx context.Context, stack *localstack.Stack) int {
	t.Helper()
	var claims v1.NodeClaimList
	if err := stack.Client.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	return len(claims.Items)
}

// waitNodeClaims waits for at least n NodeClaims: a scale-up in flight.
func waitNodeClaims(t *testing.T, ctx context.Context, stack *localstack.Stack, n int) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("%d NodeClaims", n), func(ctx context.Context) (bool, string, error) {
		got := nodeClaimCount(t, ctx, stack)
		return got >= n, fmt.Sprintf("%d NodeClaims", got), nil
	})
}

// allRunning waits for want Running pods in the namespace and every NodeClaim initialized.
func allRunning(t *testing.T, stack *localstack.Stack, ns string, want int) {
	t.Helper()
	eventually(t, 4*time.Minute, fmt.Sprintf("%d pods Running", want), func(ctx context.Context) (bool, string, error) {
		_, running, _, err := podCounts(ctx, stack.Client, ns)
		return running == want, fmt.Sprintf("%d/%d Running", running, want), err
	})
	eventually(t, 2*time.Minute, "every NodeClaim initialized", func(ctx context.Context) (bool, string, error) {
		return allInitialized(ctx, stack.Client)
	})
}

// checkOnce fails the test when a launch was done twice: live instances and NodeClaims pair one
// to one, no two instances ever launched (live or not) carry the same NodeClaim, and the
// successful CreateFleet calls are as many as the NodeClaims (none has been deleted yet).
func checkOnce(t *testing.T, ctx context.Context, stack *localstack.Stack) {
	t.Helper()
	claims, _ := checkOneInstancePerNodeClaim(t, ctx, stack)
	all, err := stack.Instances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Launches are batched and an instance gets its NodeClaim's tag only once its node
	// registered: no NodeClaim launched twice is as many instances ever launched as NodeClaims
	// (none deleted yet), through no more CreateFleet calls than NodeClaims.
	launched := map[string][]string{}
	for _, i := range all {
		if name := i.Tags[awsv1.TagKeyNodeClaim]; name != "" {
			launched[name] = append(launched[name], i.ID)
		}
	}
	for name, ids := range launched {
		if len(ids) > 1 {
			t.Errorf("nodeclaim %s was launched %d times: %v", name, len(ids), ids)
		}
	}
	if len(all) != len(claims) {
		t.Errorf("%d instances ever launched for %d NodeClaims", len(all), len(claims))
	}
	calls := emulatorCalls(t, ctx, stack)
	if calls["CreateFleet"] > len(claims) {
		t.Errorf("%d successful CreateFleet calls for %d NodeClaims", calls["CreateFleet"], len(claims))
	}
	t.Logf("%d NodeClaims, %d instances ever launched, emulator calls %v", len(claims), len(all), calls)
}

// emulatorCalls reads the emulator's count of successful EC2 calls by action.
func emulatorCalls(t *testing.T, ctx context.Context, stack *localstack.Stack) map[string]int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.EmulatorURL+"/_awsemu/calls", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	calls := map[string]int{}
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
		t.Fatal(err)
	}
	return calls
}

// loadAverage is the machine's one-minute load, to read timings by.
func loadAverage() string {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f", float64(info.Loads[0])/65536)
}
