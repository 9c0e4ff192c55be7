package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// settleQuiet is how long the NodePool's NodeClaims must stay unchanged, with no node
// disrupting, for consolidation to count as settled: longer than consolidateAfter (30s) plus
// the validation period (15s) plus a pass (10s), so that a move still to come shows up.
const settleQuiet = 90 * time.Second

// TestConsolidationSettlesNearPlan is the measurement of the closing note, run only with
// JOINER_E2E_PODS set (1,000 for the figures): the scale-up test's mixed workload, on one
// WhenEmptyOrUnderutilized NodePool (consolidateAfter 30s, the default 10% budget) and the
// tainted NodePool its db and web pods need (consolidating likewise), runs;
// kube-scheduler strands pods on nodes the plan did not mean for them and more nodes are bought
// for them; then consolidation takes back what is not needed. Once the NodeClaims have not
// changed for settleQuiet, the cluster must cost within 5% of what `joiner simulate` plans for
// the same pods. It reports the cost right after every pod is Running, the cost every 30s from
// the pods' creation (consolidation runs during the scale-up too), how long settling took from
// every pod Running, and the final ratio against the plan. With JOINER_E2E_LOGS set the
// controller's log, which holds every decision, is kept there.
func TestConsolidationSettlesNearPlan(t *testing.T) {
	if os.Getenv("JOINER_E2E_PODS") == "" {
		t.Skip("a measurement: run with JOINER_E2E_PODS=1000 (about 30 minutes on 2 cores)")
	}
	n, _ := podsUnderTest(t)
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "settle")
	workload := mixedWorkload("settle", n)
	want := 0
	for _, obj := range workload {
		want += int(*obj.(*appsv1.Deployment).Spec.Replicas)
	}
	pool := nodePool("settle", 10, "",
		v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}})
	// dedicated holds only the db pod and the web pods that follow it (mixedWorkload), as in
	// the scale-up test; it consolidates too.
	ded := nodePool("dedicated", 1, "16",
		v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}})
	ded.Spec.Template.Spec.Taints = []corev1.Taint{{Key: dedicatedTaint, Effect: corev1.TaintEffectNoSchedule}}
	pools := []client.Object{pool, ded}
	for _, np := range []*v1.NodePool{pool, ded} {
		np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("30s")
		np.Spec.Disruption.Budgets = nil // the API server's default: 10%
	}
	if err := stack.Apply(ctx, pools...); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the NodePools Ready", func(ctx context.Context) (bool, string, error) {
		return nodePoolsReady(ctx, stack.Client, "settle", "dedicated")
	})
	created := time.Now()
	keepControllerLog(t, stack)
	stop := sampleCost(t, stack, "settle", created, 30*time.Second)
	defer stop()
	if err := stack.Apply(ctx, workload...); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Duration(max(8, n/40))*time.Minute, "every pod Running", func(ctx context.Context) (bool, string, error) {
		_, running, _, err := podCounts(ctx, stack.Client, "settle")
		return running == want, fmt.Sprintf("%d/%d pods Running", running, want), err
	})
	toRunning := time.Since(created)
	running := time.Now()
	atRunning, err := liveInstances(ctx, stack)
	if err != nil {
		t.Fatal(err)
	}
	sim := simulate(t, ctx, stack, append(pools, workload...)...)
	if sim.PodsFailed != 0 {
		t.Fatalf("joiner simulate failed %d pods", sim.PodsFailed)
	}
	t.Logf("%d pods Running %s after creation on %d instances at $%.4f/h, %+.1f%% against joiner simulate's %d nodes at $%.4f/h",
		want, toRunning.Round(time.Second), len(atRunning), cost(atRunning), (cost(atRunning)/sim.TotalHourlyPrice-1)*100, sim.Nodes, sim.TotalHourlyPrice)

	last, since := "", time.Now()
	eventually(t, 30*time.Minute, fmt.Sprintf("consolidation settled (NodeClaims unchanged for %s, no node disrupting, every pod Running)", settleQuiet),
		func(ctx context.Context) (bool, string, error) {
			names, err := claimNames(ctx, stack.Client, "settle", "dedicated")
			if err != nil {
				return false, "", err
			}
			var disrupting []string
			for _, np := range []string{"settle", "dedicated"} {
				d, _, err := disruptingNodes(ctx, stack.Client, np)
				if err != nil {
					return false, "", err
				}
				disrupting = append(disrupting, d...)
			}
			if names != last || len(disrupting) > 0 {
				last, since = names, time.Now()
			}
			_, pods, _, err := podCounts(ctx, stack.Client, "settle")
			instances, ierr := liveInstances(ctx, stack)
			if err == nil {
				err = ierr
			}
			return time.Since(since) >= settleQuiet && pods == want,
				fmt.Sprintf("%d nodeclaims unchanged for %s, %d disrupting, %d/%d Running, $%.4f/h against the plan's $%.4f/h",
					strings.Count(names, ",")+1, time.Since(since).Round(time.Second), len(disrupting), pods, want, cost(instances), sim.TotalHourlyPrice), err
		})
	settled := since
	after, err := liveInstances(ctx, stack)
	if err != nil {
		t.Fatal(err)
	}
	ratio := cost(after) / sim.TotalHourlyPrice
	t.Logf("consolidation settled %s after every pod Running (the last NodeClaim change; %s quiet confirmed it): %d instances at $%.4f/h -> %d at $%.4f/h, %+.1f%% against joiner simulate's %d nodes at $%.4f/h",
		settled.Sub(running).Round(time.Second), settleQuiet, len(atRunning), cost(atRunning), len(after), cost(after), (ratio-1)*100, sim.Nodes, sim.TotalHourlyPrice)
	if ratio > 1.05 {
		t.Errorf("settled at $%.4f/h, %+.1f%% against joiner simulate's $%.4f/h (over 5%%)", cost(after), (ratio-1)*100, sim.TotalHourlyPrice)
	}
}

// claimNames lists the NodePools' NodeClaims that are not being deleted, sorted and joined.
func claimNames(ctx context.Context, c client.Client, pools ...string) (string, error) {
	var out []string
	for _, pool := range pools {
		var claims v1.NodeClaimList
		if err := c.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
			return "", err
		}
		for _, nc := range claims.Items {
			if nc.DeletionTimestamp == nil {
				out = append(out, nc.Name)
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, ","), nil
}

// sampleCost logs, every period until stop is called, the cluster's instances and their cost,
// the NodeClaims, how many nodes are disrupting and the namespace's pods Running and pending:
// the cost over time of the scale-up and the consolidation after it.
func sampleCost(t *testing.T, stack *localstack.Stack, namespace string, from time.Time, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			instances, err := liveInstances(ctx, stack)
			if err != nil {
				continue
			}
			var claims v1.NodeClaimList
			if err := stack.Client.List(ctx, &claims); err != nil {
				continue
			}
			deleting := 0
			for _, nc := range claims.Items {
				if nc.DeletionTimestamp != nil {
					deleting++
				}
			}
			total, running, unschedulable, err := podCounts(ctx, stack.Client, namespace)
			if err != nil {
				continue
			}
			t.Logf("cost at %s: %d instances $%.4f/h; %d nodeclaims (%d deleting); pods %d Running, %d unschedulable, of %d",
				time.Since(from).Round(time.Second), len(instances), cost(instances), len(claims.Items), deleting, running, unschedulable, total)
		}
	}()
	return func() { cancel(); <-done }
}

// keepControllerLog copies the controller's log to $JOINER_E2E_LOGS/<test>-controller.log when
// the test ends, passed or not: a measurement's decisions are read from it.
func keepControllerLog(t *testing.T, stack *localstack.Stack) {
	root := os.Getenv("JOINER_E2E_LOGS")
	if root == "" || stack.Controller == nil {
		return
	}
	t.Cleanup(func() {
		raw, err := os.ReadFile(stack.Controller.LogPath)
		if err == nil {
			err = os.MkdirAll(root, 0o755)
		}
		if err == nil {
			dst := filepath.Join(root, t.Name()+"-controller.log")
			err = os.WriteFile(dst, raw, 0o644)
			t.Logf("controller log kept in %s", dst)
		}
		if err != nil {
			t.Logf("keeping the controller log: %v", err)
		}
	})
}
