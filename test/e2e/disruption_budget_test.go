package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// onePerNode makes a Deployment's pods refuse a node that runs another of its pods (required
// anti-affinity on the hostname): each pod buys a node of its own.
func onePerNode(app string) func(*corev1.PodSpec) {
	return func(spec *corev1.PodSpec) {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: corev1.LabelHostname,
			}},
		}}
	}
}

// TestBudgetOneNodeAtATime: a NodePool whose only budget is nodes: "1" has five nodes, one pod
// each; scaled to one pod, four nodes are consolidation candidates at once (the Empty method
// would take them all together). Sampled every 250ms from the scale-down until one node is left,
// never are two of the NodePool's nodes disrupting at once (tainted karpenter.sh/disrupted, or
// Node or NodeClaim being deleted), and the four go one after the other.
func TestBudgetOneNodeAtATime(t *testing.T) {
	const replicas, keep = 5, 1
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "one")
	pool := nodePool("one", 10, "")
	pool.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
	pool.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("5s")
	pool.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1"}}
	app := deployment("one", "app", replicas, "500m", "512Mi", onePerNode("app"))
	if err := stack.Apply(ctx, pool, app); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, fmt.Sprintf("%d pods Ready on %d nodes", replicas, replicas), func(ctx context.Context) (bool, string, error) {
		ready, err := appReady(ctx, stack.Client, "one")
		return ready == replicas, fmt.Sprintf("%d/%d Ready", ready, replicas), err
	})

	w := &budgetWatch{pool: "one", allowed: 1, seen: map[string]bool{}}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.run(watchCtx, stack.Client) })
	start := time.Now()
	scale(t, ctx, stack.Client, app, keep)
	eventually(t, 4*time.Minute, fmt.Sprintf("the NodePool down to %d node", keep), func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "one"}); err != nil {
			return false, "", err
		}
		disrupting, _, err := disruptingNodes(ctx, stack.Client, "one")
		if err != nil {
			return false, "", err
		}
		ready, err := appReady(ctx, stack.Client, "one")
		return len(claims.Items) == keep && len(disrupting) == 0 && ready == keep,
			fmt.Sprintf("%d nodeclaims, disrupting %v, %d/%d Ready", len(claims.Items), disrupting, ready, keep), err
	})
	took := time.Since(start)
	stopWatch()
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over != "" {
		t.Errorf("the budget nodes: \"1\" was exceeded: %s", w.over)
	}
	if w.most != 1 || len(w.seen) != replicas-keep {
		t.Errorf("at most %d nodes disrupting at once, %d distinct nodes disrupted (%v); want 1 at a time, %d in all", w.most, len(w.seen), w.seen, replicas-keep)
	}
	t.Logf("%d nodes consolidated one at a time in %s; at most %d disrupting at once over %d samples", len(w.seen), took.Round(time.Second), w.most, w.samples)
}

// budgetWatch samples every 250ms the NodePool's nodes being disrupted (disruptingNodes) and
// remembers the most at once, every node seen disrupting, and the first sample over allowed.
type budgetWatch struct {
	pool    string
	allowed int
	mu      sync.Mutex
	most    int
	samples int
	seen    map[string]bool
	over    string
}

func (w *budgetWatch) run(ctx context.Context, c client.Client) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		disrupting, nodes, err := disruptingNodes(ctx, c, w.pool)
		if err == nil {
			w.mu.Lock()
			w.samples++
			w.most = max(w.most, len(disrupting))
			for _, n := range disrupting {
				w.seen[n] = true
			}
			if len(disrupting) > w.allowed && w.over == "" {
				w.over = fmt.Sprintf("%d of %d nodes disrupting at %s: %v", len(disrupting), nodes, time.Now().UTC().Format(time.StampMilli), disrupting)
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

// gracePeriod is the NodePool's terminationGracePeriod in TestDriftHoldsDoNotDisruptPod.
const gracePeriod = 60 * time.Second

// TestDriftHoldsDoNotDisruptPod: a NodePool with terminationGracePeriod 60s runs two app pods, one
// per node, and a pod annotated karpenter.sh/do-not-disrupt. Pinning the EC2NodeClass's AMI
// alias to an older release drifts both nodes; drift replaces them one at a time (the default
// 10% budget), each only once a new node is Initialized, while the app's PodDisruptionBudget
// (minAvailable 1) holds. The do-not-disrupt pod keeps its node's drain waiting: it is deleted
// no sooner than terminationGracePeriod after its NodeClaim's deletion, and then the node goes.
func TestDriftHoldsDoNotDisruptPod(t *testing.T) {
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "grace")
	pool := nodePool("grace", 10, "")
	pool.Spec.Disruption.Budgets = nil // the API server's default: 10%
	pool.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: gracePeriod}
	app := deployment("grace", "app", 2, "500m", "512Mi", onePerNode("app"))
	pinned := deployment("grace", "pinned", 1, "250m", "256Mi")
	pinned.Spec.Template.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "grace"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
		},
	}
	if err := stack.Apply(ctx, pool, app, pinned, pdb); err != nil {
		t.Fatal(err)
	}
	held, heldClaim, old := heldPod(t, ctx, stack.Client)
	w := &rollWatch{pool: "grace", held: client.ObjectKeyFromObject(&held), deleted: map[string]time.Time{}, initialized: map[string]time.Time{}, lowestReady: 2}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.run(watchCtx, stack.Client) })
	start := time.Now()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"amiSelectorTerms":[{"alias":"al2023@v20251001"}]}}`))
	if err := stack.Client.Patch(ctx, &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, "both old nodes replaced and gone", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "grace"}); err != nil {
			return false, "", err
		}
		left := 0
		for _, nc := range claims.Items {
			if _, ok := old[nc.Name]; ok {
				left++
			}
		}
		var node corev1.Node
		err := stack.Client.Get(ctx, client.ObjectKey{Name: held.Spec.NodeName}, &node)
		heldNodeGone := err != nil && client.IgnoreNotFound(err) == nil
		ready, err := appReady(ctx, stack.Client, "grace")
		return left == 0 && heldNodeGone && ready == 2, fmt.Sprintf("%d of %d old nodeclaims left, node %s gone: %v, %d/2 app pods Ready", left, len(old), held.Spec.NodeName, heldNodeGone, ready), err
	})
	took := time.Since(start)
	stopWatch()
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	checkReplacementsFirst(t, old, w.deleted, w.initialized)
	if w.lowestReady < 1 {
		t.Errorf("no app pod was Ready at one point: the PDB keeps one available")
	}
	deletedAt, ok := w.deleted[heldClaim]
	switch {
	case !ok:
		t.Errorf("NodeClaim %s of the do-not-disrupt pod was never seen being deleted", heldClaim)
	case w.heldDeleted.IsZero():
		t.Errorf("the do-not-disrupt pod %s was never seen being deleted", held.Name)
	case w.heldDeleted.Before(deletedAt.Add(gracePeriod - time.Second)):
		t.Errorf("the do-not-disrupt pod was deleted at %s, %s after its NodeClaim's deletion at %s: before terminationGracePeriod %s",
			w.heldDeleted.Format(time.RFC3339), w.heldDeleted.Sub(deletedAt), deletedAt.Format(time.RFC3339), gracePeriod)
	case w.heldDeleted.After(deletedAt.Add(gracePeriod + 45*time.Second)):
		t.Errorf("the do-not-disrupt pod was deleted %s after its NodeClaim's deletion: long after terminationGracePeriod %s", w.heldDeleted.Sub(deletedAt), gracePeriod)
	}
	t.Logf("rolled %d nodes in %s; the do-not-disrupt pod's node drained %s after its deletion (terminationGracePeriod %s); at least %d/2 app pods Ready",
		len(old), took.Round(time.Second), w.heldDeleted.Sub(deletedAt), gracePeriod, w.lowestReady)
}

// heldPod waits for the two app pods and the do-not-disrupt pod of TestDriftHoldsDoNotDisruptPod
// to be Ready, and returns the do-not-disrupt pod, its NodeClaim's name, and the NodePool's
// NodeClaims with their Nodes.
func heldPod(t *testing.T, ctx context.Context, c client.Client) (held corev1.Pod, heldClaim string, old map[string]string) {
	t.Helper()
	eventually(t, 3*time.Minute, "2 app pods and the do-not-disrupt pod Ready", func(ctx context.Context) (bool, string, error) {
		ready, err := appReady(ctx, c, "grace")
		if err != nil {
			return false, "", err
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace("grace"), client.MatchingLabels{"app": "pinned"}); err != nil {
			return false, "", err
		}
		pinnedReady := len(pods.Items) == 1 && podReady(&pods.Items[0])
		if pinnedReady {
			held = pods.Items[0]
		}
		return ready == 2 && pinnedReady, fmt.Sprintf("%d/2 app pods Ready, do-not-disrupt pod Ready: %v", ready, pinnedReady), nil
	})
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "grace"}); err != nil {
		t.Fatal(err)
	}
	old = map[string]string{}
	for _, nc := range claims.Items {
		old[nc.Name] = nc.Status.NodeName
		if nc.Status.NodeName == held.Spec.NodeName {
			heldClaim = nc.Name
		}
	}
	if heldClaim == "" {
		t.Fatalf("the do-not-disrupt pod runs on %s, no NodeClaim of nodepool grace (%v)", held.Spec.NodeName, old)
	}
	return held, heldClaim, old
}

// checkReplacementsFirst fails the test unless, when each old NodeClaim's deletion began, more
// new NodeClaims (not in old) were Initialized than old ones had been deleted before it: every
// node went only once a replacement was up for it.
func checkReplacementsFirst(t *testing.T, old map[string]string, deleted, initialized map[string]time.Time) {
	t.Helper()
	var order []string
	for name := range old {
		if _, ok := deleted[name]; !ok {
			t.Errorf("old NodeClaim %s was never seen being deleted", name)
			continue
		}
		order = append(order, name)
	}
	slices.SortFunc(order, func(a, b string) int { return deleted[a].Compare(deleted[b]) })
	for i, name := range order {
		up := 0
		for n, at := range initialized {
			if _, isOld := old[n]; !isOld && !at.After(deleted[name]) {
				up++
			}
		}
		if up < i+1 {
			t.Errorf("old NodeClaim %s (%d of %d) was deleted at %s with %d replacement(s) Initialized: replacements first", name, i+1, len(order), deleted[name].Format(time.RFC3339), up)
		}
	}
}

// rollWatch samples every 250ms the NodePool's NodeClaims (when each was first seen being deleted,
// by its deletionTimestamp, and when each new one was Initialized), the app's Ready pods, and
// when the held pod's deletion began.
type rollWatch struct {
	pool                 string
	held                 client.ObjectKey
	mu                   sync.Mutex
	deleted, initialized map[string]time.Time
	heldDeleted          time.Time
	lowestReady          int
}

func (w *rollWatch) run(ctx context.Context, c client.Client) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		w.sample(ctx, c)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *rollWatch) sample(ctx context.Context, c client.Client) {
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: w.pool}); err != nil {
		return
	}
	ready, readyErr := appReady(ctx, c, w.held.Namespace)
	var held corev1.Pod
	heldErr := c.Get(ctx, w.held, &held)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, nc := range claims.Items {
		if _, ok := w.deleted[nc.Name]; !ok && nc.DeletionTimestamp != nil {
			w.deleted[nc.Name] = nc.DeletionTimestamp.Time
		}
		if cond := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeInitialized); cond != nil && cond.Status == metav1.ConditionTrue {
			w.initialized[nc.Name] = cond.LastTransitionTime.Time
		}
	}
	if readyErr == nil {
		w.lowestReady = min(w.lowestReady, ready)
	}
	// A pod's deletionTimestamp is when its grace period ends; the deletion began that much
	// earlier.
	if heldErr == nil && held.DeletionTimestamp != nil && w.heldDeleted.IsZero() {
		began := held.DeletionTimestamp.Time
		if held.DeletionGracePeriodSeconds != nil {
			began = began.Add(-time.Duration(*held.DeletionGracePeriodSeconds) * time.Second)
		}
		w.heldDeleted = began
	}
	// The emulated kubelet finishes a deletion as soon as it sees it, often between two samples:
	// a pod seen gone was deleted no later than now (within one sample of it).
	if apierrors.IsNotFound(heldErr) && w.heldDeleted.IsZero() {
		w.heldDeleted = time.Now()
	}
}

// podReady reports whether the pod is Ready and not being deleted.
func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
