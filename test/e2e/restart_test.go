package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestControllerRestartsDuringScaleUp kills the controller with SIGKILL at random points of a
// scale-up in three waves, twelve times, and starts it again each time: every pod still runs, no
// instance is leaked or launched twice, no two NodeClaims share an instance, and the capacity
// bought stays close to the plan of joiner simulate (a duplicated NodeClaim would show there).
func TestControllerRestartsDuringScaleUp(t *testing.T) {
	const kills = 12
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "restarts")
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("kill points from seed %d", seed)

	pool := nodePool("general", 10, "")
	web := deployment("restarts", "web", 20, "1", "1Gi")
	batch := deployment("restarts", "batch", 10, "500m", "2Gi")
	if err := stack.Apply(ctx, pool, web, batch); err != nil {
		t.Fatal(err)
	}
	// The waves raise the replicas while the controller keeps dying.
	waves := map[int]map[*appsv1.Deployment]int32{4: {web: 45}, 8: {web: 60, batch: 40}}
	for k := 1; k <= kills; k++ {
		uptime := time.Duration(300+rng.IntN(4000)) * time.Millisecond
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(uptime):
		}
		if err := stack.Controller.Kill(); err != nil {
			t.Fatal(err)
		}
		for d, replicas := range waves[k] {
			scale(t, ctx, stack.Client, d, replicas)
		}
		downtime := time.Duration(rng.IntN(1000)) * time.Millisecond
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(downtime):
		}
		if err := stack.Controller.Start(); err != nil {
			t.Fatal(err)
		}
		t.Logf("kill %d after %s up, %s down", k, uptime, downtime)
	}

	const want = 100
	eventually(t, 6*time.Minute, "every pod Running after the restarts", func(ctx context.Context) (bool, string, error) {
		_, running, _, err := podCounts(ctx, stack.Client, "restarts")
		return running == want, fmt.Sprintf("%d/%d pods Running", running, want), err
	})
	eventually(t, time.Minute, "every NodeClaim initialized", func(ctx context.Context) (bool, string, error) {
		return allInitialized(ctx, stack.Client)
	})
	claims, instances := checkOneInstancePerNodeClaim(t, ctx, stack)
	final60, final40 := *web, *batch
	final60.Spec.Replicas, final40.Spec.Replicas = new(int32(60)), new(int32(40))
	sim := simulate(t, ctx, stack, pool, &final60, &final40)
	// The waves arrive in separate batches and kube-scheduler strands some pods (see
	// TestMixedPodsRunWithinLimitsAtSimulatedCost), so the cluster holds more than one plan for
	// all the pods would buy; a NodeClaim created twice per batch would double it.
	if launched := cost(instances); launched > 1.5*sim.TotalHourlyPrice {
		t.Errorf("after %d restarts the instances cost $%.4f/h, more than 1.5x joiner simulate's $%.4f/h: duplicated NodeClaims?", kills, launched, sim.TotalHourlyPrice)
	}
	t.Logf("after %d kills: %d NodeClaims, %d live instances, $%.4f/h (joiner simulate for all pods at once: %d nodes, $%.4f/h)",
		kills, len(claims), len(instances), cost(instances), sim.Nodes, sim.TotalHourlyPrice)
}

// scale sets a Deployment's replicas.
func scale(t *testing.T, ctx context.Context, c client.Client, d *appsv1.Deployment, replicas int32) {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))
	if err := c.Patch(ctx, &appsv1.Deployment{ObjectMeta: d.ObjectMeta}, patch); err != nil {
		t.Fatalf("scaling %s to %d: %v", d.Name, replicas, err)
	}
}
