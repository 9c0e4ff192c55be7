package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestConsolidationScaleDown: a workload scaled from 100 pods to 30 is consolidated within 3
// minutes to within 10% of what joiner simulate buys for the 30, while, sampled every 250ms,
// its PodDisruptionBudget (maxUnavailable 3) always holds once the scale-down settled, and no
// more nodes are being disrupted at once than the NodePool's budget (nodes: 20%, of the nodes
// then) allows.
func TestConsolidationScaleDown(t *testing.T) {
	const budget = 20
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "shrink")
	pool := nodePool("shrink", 10, "")
	pool.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
	pool.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("10s")
	pool.Spec.Disruption.Budgets = []v1.Budget{{Nodes: fmt.Sprintf("%d%%", budget)}}
	app := deployment("shrink", "app", 100, "500m", "512Mi")
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "shrink"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(3)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
		},
	}
	if err := stack.Apply(ctx, pool, app, pdb); err != nil {
		t.Fatal(err)
	}
	eventually(t, 4*time.Minute, "100 pods Running", func(ctx context.Context) (bool, string, error) {
		_, running, _, err := podCounts(ctx, stack.Client, "shrink")
		return running == 100, fmt.Sprintf("%d/100 Running", running), err
	})
	before, err := liveInstances(ctx, stack)
	if err != nil {
		t.Fatal(err)
	}

	w := &shrinkWatch{namespace: "shrink", pool: "shrink", replicas: 30, lowestReady: 30}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.run(watchCtx, stack.Client, budget) })
	start := time.Now()
	scale(t, ctx, stack.Client, app, 30)
	final := *app
	final.Spec.Replicas = new(int32(30))
	sim := simulate(t, ctx, stack, pool, &final)
	eventually(t, 3*time.Minute, "the cluster within 10% of joiner simulate's cost for 30 pods", func(ctx context.Context) (bool, string, error) {
		instances, err := liveInstances(ctx, stack)
		if err != nil {
			return false, "", err
		}
		ready, err := appReady(ctx, stack.Client, "shrink")
		got := cost(instances)
		return got <= 1.10*sim.TotalHourlyPrice && ready == 30,
			fmt.Sprintf("%d instances at $%.4f/h, plan $%.4f/h (%d nodes), %d/30 Ready", len(instances), got, sim.TotalHourlyPrice, sim.Nodes, ready), err
	})
	took := time.Since(start)
	stopWatch()
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lowestReady < 27 {
		t.Errorf("only %d pods were Ready at one point after the scale-down settled: the PDB allows 3 unavailable of 30", w.lowestReady)
	}
	if w.overBudget != "" {
		t.Errorf("more nodes disrupted at once than the budget of %d%% allows: %s", budget, w.overBudget)
	}
	after, err := liveInstances(ctx, stack)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("consolidated in %s: %d instances at $%.4f/h -> %d at $%.4f/h (joiner simulate: %d nodes, $%.4f/h); at least %d/30 Ready, at most %d nodes disrupting at once, %d samples",
		took.Round(time.Second), len(before), cost(before), len(after), cost(after), sim.Nodes, sim.TotalHourlyPrice, w.lowestReady, w.mostDisrupting, w.samples)
	checkSettled(t, stack.Client, "shrink")
}

// checkSettled, when JOINER_E2E_SETTLE is a duration, waits (up to 5 minutes) until the
// NodePool's NodeClaims have not changed for a minute, then fails the test if any is created or
// deleted during that duration: a cluster at rest makes no moves.
func checkSettled(t *testing.T, c client.Client, pool string) {
	raw := os.Getenv("JOINER_E2E_SETTLE")
	if raw == "" {
		return
	}
	settle, err := time.ParseDuration(raw)
	if err != nil {
		t.Fatalf("JOINER_E2E_SETTLE=%q: want a duration such as 10m", raw)
	}
	names := func(ctx context.Context) (string, error) {
		var claims v1.NodeClaimList
		if err := c.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
			return "", err
		}
		var out []string
		for _, nc := range claims.Items {
			if nc.DeletionTimestamp == nil {
				out = append(out, nc.Name)
			}
		}
		slices.Sort(out)
		return strings.Join(out, ","), nil
	}
	last, since := "", time.Now()
	eventually(t, 5*time.Minute, "no NodeClaim created or deleted for a minute", func(ctx context.Context) (bool, string, error) {
		now, err := names(ctx)
		if err != nil {
			return false, "", err
		}
		if now != last {
			last, since = now, time.Now()
		}
		return time.Since(since) >= time.Minute, fmt.Sprintf("unchanged for %s", time.Since(since).Round(time.Second)), nil
	})
	settledAt := time.Now()
	deadline := time.NewTimer(settle)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-deadline.C:
			t.Logf("settled: no NodeClaim created or deleted in %s (%d NodeClaims)", settle, strings.Count(last, ",")+1)
			return
		case <-tick.C:
			now, err := names(t.Context())
			if err == nil && now != last {
				t.Fatalf("the settled cluster changed %s after settling: NodeClaims %s -> %s", time.Since(settledAt).Round(time.Second), last, now)
			}
		}
	}
}

// shrinkWatch samples every 250ms the Ready pods of the namespace's app (once no more than
// replicas remain, a scale-down itself having settled) and the NodePool's nodes being disrupted
// (tainted karpenter.sh/disrupted or deleted, Node or NodeClaim).
type shrinkWatch struct {
	namespace, pool             string
	replicas                    int
	mu                          sync.Mutex
	settled                     bool
	lowestReady, mostDisrupting int
	// overBudget describes the first sample with more nodes disrupting than budget percent of
	// the NodePool's nodes, rounded up, allows.
	overBudget string
	samples    int
}

func (w *shrinkWatch) run(ctx context.Context, c client.Client, budget int) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ready, total, err := appCounts(ctx, c, w.namespace)
		disrupting, nodes, derr := disruptingNodes(ctx, c, w.pool)
		if err == nil && derr == nil {
			w.mu.Lock()
			w.samples++
			if total <= w.replicas && ready == w.replicas {
				w.settled = true
			}
			if w.settled {
				w.lowestReady = min(w.lowestReady, ready)
			}
			w.mostDisrupting = max(w.mostDisrupting, len(disrupting))
			if allowed := (nodes*budget + 99) / 100; len(disrupting) > allowed && w.overBudget == "" {
				w.overBudget = fmt.Sprintf("%d of %d nodes disrupting (%v), %d allowed", len(disrupting), nodes, disrupting, allowed)
			}
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func appReady(ctx context.Context, c client.Client, namespace string) (int, error) {
	ready, _, err := appCounts(ctx, c, namespace)
	return ready, err
}

// appCounts counts the namespace's app pods that are not being deleted, and of those the Ready
// ones.
func appCounts(ctx context.Context, c client.Client, namespace string) (ready, total int, err error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"app": "app"}); err != nil {
		return 0, 0, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		total++
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, total, nil
}

// disruptingNodes names the NodePool's nodes tainted karpenter.sh/disrupted or being deleted,
// and its NodeClaims being deleted, each node once; and counts its initialized nodes with the
// NodeClaims deleting after their Node went.
func disruptingNodes(ctx context.Context, c client.Client, pool string) ([]string, int, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		return nil, 0, err
	}
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		return nil, 0, err
	}
	initialized := 0
	for _, n := range nodes.Items {
		if n.Labels[v1.NodeInitializedLabelKey] == "true" {
			initialized++
		}
	}
	var out []string
	for _, n := range nodes.Items {
		if n.DeletionTimestamp != nil || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == v1.DisruptedTaintKey }) {
			out = append(out, n.Name)
		}
	}
	// A NodeClaim deleting after its Node went (its instance still terminating) is disrupting and,
	// as the disruption controller counts the NodePool's nodes by their NodeClaims, one of the
	// nodes the budget's percentage is of.
	for _, nc := range claims.Items {
		if nc.DeletionTimestamp != nil && nc.Status.NodeName != "" && !slices.Contains(out, nc.Status.NodeName) {
			out = append(out, nc.Status.NodeName)
			initialized++
		}
	}
	return out, initialized, nil
}

// TestDriftRollsNodesOnAMIChange: pinning the EC2NodeClass's AMI alias to an older release drifts
// every node of its NodePool (AMIDrift), and disruption replaces them all, one at a time under the
// default 10% budget, replacements first: sampled every 250ms, the PDB (minAvailable 9 of 10)
// and the budget hold.
func TestDriftRollsNodesOnAMIChange(t *testing.T) {
	const budget = 10
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "roll")
	pool := nodePool("roll", 10, "")
	pool.Spec.Disruption.Budgets = nil // the API server's default: 10%
	app := deployment("roll", "app", 10, "500m", "512Mi")
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "roll"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(9)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
		},
	}
	if err := stack.Apply(ctx, pool, app, pdb); err != nil {
		t.Fatal(err)
	}
	eventually(t, 4*time.Minute, "10 pods Ready", func(ctx context.Context) (bool, string, error) {
		ready, err := appReady(ctx, stack.Client, "roll")
		return ready == 10, fmt.Sprintf("%d/10 Ready", ready), err
	})
	old := map[string]string{}
	var claims v1.NodeClaimList
	if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "roll"}); err != nil {
		t.Fatal(err)
	}
	for _, nc := range claims.Items {
		old[nc.Name] = nc.Status.ImageID
	}

	w := &shrinkWatch{namespace: "roll", pool: "roll", replicas: 10, lowestReady: 10, settled: true}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.run(watchCtx, stack.Client, budget) })
	start := time.Now()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"amiSelectorTerms":[{"alias":"al2023@v20251001"}]}}`))
	if err := stack.Client.Patch(ctx, &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, patch); err != nil {
		t.Fatal(err)
	}
	var images map[string]bool
	eventually(t, 8*time.Minute, "every node of the NodePool replaced, on the pinned AMI", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "roll"}); err != nil {
			return false, "", err
		}
		left := 0
		images = map[string]bool{}
		for _, nc := range claims.Items {
			if _, ok := old[nc.Name]; ok {
				left++
				continue
			}
			images[nc.Status.ImageID] = true
		}
		ready, err := appReady(ctx, stack.Client, "roll")
		return left == 0 && ready == 10, fmt.Sprintf("%d of %d old nodeclaims left, %d/10 Ready, new images %v", left, len(old), ready, images), err
	})
	took := time.Since(start)
	stopWatch()
	wg.Wait()
	for image := range images {
		for _, was := range old {
			if image == was {
				t.Errorf("a replacement runs the old image %s", image)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lowestReady < 9 {
		t.Errorf("only %d pods were Ready at one point: the PDB allows one unavailable of 10", w.lowestReady)
	}
	if w.overBudget != "" {
		t.Errorf("more nodes disrupted at once than the budget of %d%% allows: %s", budget, w.overBudget)
	}
	t.Logf("rolled %d nodes in %s onto %v; at least %d/10 Ready, at most %d nodes disrupting at once", len(old), took.Round(time.Second), images, w.lowestReady, w.mostDisrupting)
}
