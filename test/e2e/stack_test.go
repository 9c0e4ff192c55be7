package e2e

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/e2estack"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// The suite's names for the shared end-to-end harness (internal/e2estack, which test/chaos also
// runs on); each is documented there.

// fastEmulator are emulator timings that keep the tests short (e2estack.FastEmulator).
var fastEmulator = e2estack.FastEmulator

// simulation is what `joiner simulate -o json` reports.
type simulation = e2estack.Simulation

// startStack starts the local stack with the emulator and the controller at least privilege
// (e2estack.Start).
func startStack(t *testing.T, controllerArgs ...string) *localstack.Stack {
	t.Helper()
	return e2estack.Start(t, bins, controllerArgs...)
}

func leastPrivilege(o localstack.Options) localstack.Options { return bins.LeastPrivilege(o) }

func checkLeastPrivilege(t *testing.T, ctx context.Context, stack *localstack.Stack) {
	t.Helper()
	e2estack.CheckLeastPrivilege(t, ctx, stack)
}

func dumpLogs(t *testing.T, dir string) { e2estack.DumpLogs(t, dir) }

func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	e2estack.Eventually(t, timeout, what, cond)
}

func nodePool(name string, weight int32, cpuLimit string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodePool {
	return e2estack.NodePool(name, weight, cpuLimit, reqs...)
}

func deployment(namespace, name string, replicas int32, cpu, memory string, mutate ...func(*corev1.PodSpec)) *appsv1.Deployment {
	return e2estack.Deployment(namespace, name, replicas, cpu, memory, mutate...)
}

func podCounts(ctx context.Context, c client.Client, namespace string) (total, running, unschedulable int, err error) {
	return e2estack.PodCounts(ctx, c, namespace)
}

func liveInstances(ctx context.Context, stack *localstack.Stack) ([]localstack.Instance, error) {
	return e2estack.LiveInstances(ctx, stack)
}

func checkOneInstancePerNodeClaim(t *testing.T, ctx context.Context, stack *localstack.Stack) ([]v1.NodeClaim, []localstack.Instance) {
	t.Helper()
	return e2estack.CheckOneInstancePerNodeClaim(t, ctx, stack)
}

func allInitialized(ctx context.Context, c client.Client) (bool, string, error) {
	return e2estack.AllInitialized(ctx, c)
}

func daemonSetsRunning(ctx context.Context, c client.Client) (bool, string, error) {
	return e2estack.DaemonSetsRunning(ctx, c)
}

func simulate(t *testing.T, ctx context.Context, stack *localstack.Stack, objects ...client.Object) simulation {
	t.Helper()
	return e2estack.Simulate(t, ctx, bins, stack, objects...)
}

func cost(instances []localstack.Instance) float64 { return e2estack.Cost(instances) }

func namespace(t *testing.T, ctx context.Context, stack *localstack.Stack, name string) {
	t.Helper()
	e2estack.Namespace(t, ctx, stack, name)
}
