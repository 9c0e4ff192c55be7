package disruption_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// harness is a controller reading and writing through the direct client, with what drives and
// observes it.
type harness struct {
	*disruption.Controller
	events *testenv.Recorder
	reg    *prometheus.Registry
	clock  *clocktesting.FakeClock
	// cloud has no instance types unless the test gives some: no NodePool can launch a
	// replacement then, and no node has a price.
	cloud *fake.CloudProvider
}

// newController returns a harness on the direct client.
func newController(t *testing.T) *harness {
	t.Helper()
	return newHarness(t, env.Client, cluster.New(env.Client, false))
}

func newHarness(t *testing.T, kube client.Client, view *cluster.Cluster, opts ...disruption.Option) *harness {
	t.Helper()
	h := &harness{events: &testenv.Recorder{}, reg: prometheus.NewRegistry(), clock: clocktesting.NewFakeClock(time.Now()), cloud: &fake.CloudProvider{}}
	c, err := disruption.NewController(kube, view, h.cloud, h.clock, h.events, h.reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h.Controller = c
	return h
}

// decideAndCarryOut runs a pass, which decides, then steps the clock by the validation period
// and runs another, which validates and carries out the decision; it returns the NodeClaims
// deleted by either.
func (h *harness) decideAndCarryOut(t *testing.T) []string {
	t.Helper()
	first, err := h.Disrupt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Step(disruption.ValidationPeriod)
	second, err := h.Disrupt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return append(first.Deleted, second.Deleted...)
}

// terminating returns the DisruptionTerminating events of the recorder.
func terminating(r *testenv.Recorder) []string {
	var out []string
	for _, e := range r.Events() {
		if strings.Contains(e, " "+disruption.ReasonDisruptionTerminating+" ") {
			out = append(out, e)
		}
	}
	return out
}

// cleanup deletes obj after the test, first releasing any finalizer the test put on it.
func cleanup(t *testing.T, obj client.Object) {
	t.Cleanup(func() {
		ctx := context.Background() // t.Context() is done in cleanups
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return
		}
		if len(obj.GetFinalizers()) > 0 {
			obj.SetFinalizers(nil)
			_ = env.Client.Update(ctx, obj)
		}
		_ = env.Client.Delete(ctx, obj)
	})
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	cleanup(t, obj)
}

// newNodePool creates a WhenEmpty NodePool with consolidateAfter 30s and the default budget.
func newNodePool(t *testing.T, name string, edit func(*v1.NodePool)) *v1.NodePool {
	t.Helper()
	np := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
				NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			}},
			Disruption: v1.Disruption{ConsolidationPolicy: v1.ConsolidationPolicyWhenEmpty, ConsolidateAfter: v1.MustParseNillableDuration("30s")},
		},
	}
	if edit != nil {
		edit(np)
	}
	create(t, np)
	return np
}

// newNode creates a Node and its NodeClaim of the NodePool: registered, initialized, Ready and
// Consolidatable. edit may change either before they are created.
func newNode(t *testing.T, pool, name string, edit func(*v1.NodeClaim, *corev1.Node)) (*v1.NodeClaim, *corev1.Node) {
	t.Helper()
	ctx := t.Context()
	providerID := "fake:///" + name
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: pool, v1.CapacityTypeLabelKey: v1.CapacityTypeSpot}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + name, Labels: map[string]string{
		v1.NodePoolLabelKey: pool, v1.NodeInitializedLabelKey: "true", v1.CapacityTypeLabelKey: v1.CapacityTypeSpot,
		corev1.LabelInstanceTypeStable: "m7i.large", corev1.LabelTopologyZone: "us-west-2a", corev1.LabelArchStable: "amd64",
	}}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	now := metav1.NewTime(time.Now().Add(-time.Hour))
	nc.Status = v1.NodeClaimStatus{ProviderID: providerID, NodeName: node.Name, Conditions: []metav1.Condition{
		{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: now},
		{Type: v1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue, Reason: "Consolidatable", LastTransitionTime: now},
	}}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if edit != nil {
		edit(nc, node)
	}
	status, nodeStatus := nc.Status, node.Status
	create(t, nc)
	nc.Status = status
	if err := env.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	create(t, node)
	node.Status = nodeStatus
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	return nc, node
}

// newPod creates a running pod bound to the node.
func newPod(t *testing.T, name, nodeName string, edit func(*corev1.Pod)) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if edit != nil {
		edit(pod)
	}
	status := pod.Status
	if status.Phase == "" {
		status.Phase = corev1.PodRunning
	}
	create(t, pod)
	pod.Status = status
	if err := env.Client.Status().Update(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
}

// deleting reports whether the NodeClaim is gone or being deleted.
func deleting(t *testing.T, nc *v1.NodeClaim) bool {
	t.Helper()
	got := &v1.NodeClaim{}
	err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), got)
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return !got.DeletionTimestamp.IsZero()
}

func daemonSetOwned(pod *corev1.Pod) {
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "ds-uid", Controller: ptr.To(true)}}
}

func doNotDisrupt(o metav1.Object) {
	o.SetAnnotations(map[string]string{v1.DoNotDisruptAnnotationKey: "true"})
}

// TestDisrupt: which single nodes one pass removes.
func TestDisrupt(t *testing.T) {
	tests := []struct {
		name     string
		nodePool func(*v1.NodePool)
		node     func(*v1.NodeClaim, *corev1.Node)
		pod      func(*corev1.Pod) // nil: no pod
		want     bool
	}{
		{name: "empty", want: true},
		{name: "empty-whenemptyorunderutilized", nodePool: func(np *v1.NodePool) {
			np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
		}, want: true},
		{name: "running-pod", pod: func(*corev1.Pod) {}, want: false},
		{name: "daemonset-pod", pod: daemonSetOwned, want: true},
		{name: "mirror-pod", pod: func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}, want: true},
		{name: "succeeded-pod", pod: func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, want: true},
		{name: "do-not-disrupt-pod", pod: func(p *corev1.Pod) { daemonSetOwned(p); doNotDisrupt(p) }, want: false},
		{name: "do-not-disrupt-node", node: func(_ *v1.NodeClaim, n *corev1.Node) { doNotDisrupt(n) }, want: false},
		{name: "do-not-disrupt-nodeclaim", node: func(nc *v1.NodeClaim, _ *corev1.Node) { doNotDisrupt(nc) }, want: false},
		{name: "not-consolidatable", node: func(nc *v1.NodeClaim, _ *corev1.Node) {
			nc.Status.Conditions = nc.Status.Conditions[:1]
		}, want: false},
		{name: "not-initialized", node: func(_ *v1.NodeClaim, n *corev1.Node) {
			delete(n.Labels, v1.NodeInitializedLabelKey)
		}, want: false},
		{name: "consolidate-after-never", nodePool: func(np *v1.NodePool) {
			np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
		}, want: false},
		{name: "budget-zero", nodePool: func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
		}, want: false},
		{name: "budget-zero-for-drift-only", nodePool: func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}}
		}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			pool := "p-" + tt.name
			newNodePool(t, pool, tt.nodePool)
			nc, node := newNode(t, pool, tt.name, tt.node)
			if tt.pod != nil {
				newPod(t, tt.name, node.Name, tt.pod)
			}
			deleted := h.decideAndCarryOut(t)
			if got := slices.Contains(deleted, nc.Name); got != tt.want {
				t.Errorf("deleted %v, want %s deleted: %v", deleted, nc.Name, tt.want)
			}
			if got := deleting(t, nc); got != tt.want {
				t.Errorf("nodeclaim deleting = %v, want %v", got, tt.want)
			}
			var want []string
			if tt.want {
				want = []string{
					nc.Name + " Normal DisruptionTerminating Disrupting NodeClaim: Empty, deleting 1 node(s)",
					pool + " Normal DisruptionTerminating Disrupting NodeClaim " + nc.Name + ": Empty, deleting 1 node(s)",
					node.Name + " Normal DisruptionTerminating Disrupting Node: Empty, deleting 1 node(s)",
				}
			}
			if diff := cmp.Diff(want, terminating(h.events)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBudget: a budget of one node removes one of three empty nodes per pass, and none while
// that one is still being deleted.
func TestBudget(t *testing.T) {
	h := newController(t)
	newNodePool(t, "budget-one", func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1"}} })
	var claims []*v1.NodeClaim
	for _, name := range []string{"budget-a", "budget-b", "budget-c"} {
		nc, _ := newNode(t, "budget-one", name, func(nc *v1.NodeClaim, _ *corev1.Node) {
			nc.Finalizers = []string{v1.TerminationFinalizer} // held, as lifecycle would until the instance is gone
		})
		claims = append(claims, nc)
	}
	deleted := h.decideAndCarryOut(t)
	if len(deleted) != 1 {
		t.Fatalf("first pass deleted %v, want one", deleted)
	}
	got := &v1.NodeClaim{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: deleted[0]}, got); err != nil {
		t.Fatal(err)
	}
	if cond := findCondition(got, v1.ConditionTypeDisruptionReason); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "Empty" {
		t.Errorf("DisruptionReason = %+v, want True/Empty", cond)
	}
	if deleted = h.decideAndCarryOut(t); len(deleted) != 0 {
		t.Fatalf("second pass, with one node deleting, deleted %v, want none", deleted)
	}
	// The first NodeClaim finishes terminating: its Node and NodeClaim go.
	got.Finalizers = nil
	if err := env.Client.Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + got.Name}}); err != nil {
		t.Fatal(err)
	}
	if deleted = h.decideAndCarryOut(t); len(deleted) != 1 {
		t.Fatalf("third pass deleted %v, want one", deleted)
	}
	n := 0
	for _, nc := range claims {
		if deleting(t, nc) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d NodeClaims deleting, want 2", n)
	}
	if v := counter(t, h.reg, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "empty", "nodepool": "budget-one", "capacity_type": "spot",
		"consolidation_policy": "when_empty", "termination_mode": "graceful"}); v != 2 {
		t.Errorf("karpenter_nodeclaims_disrupted_total = %v, want 2", v)
	}
	if v := counter(t, h.reg, "karpenter_voluntary_disruption_decisions_total", map[string]string{"decision": "delete", "reason": "empty", "consolidation_type": "empty"}); v != 2 {
		t.Errorf("karpenter_voluntary_disruption_decisions_total = %v, want 2", v)
	}
	if v := counter(t, h.reg, "karpenter_voluntary_disruption_decisions_by_nodepool_total", map[string]string{"nodepool": "budget-one", "decision": "delete", "reason": "empty", "consolidation_type": "empty"}); v != 2 {
		t.Errorf("karpenter_voluntary_disruption_decisions_by_nodepool_total = %v, want 2", v)
	}
}

// TestRecheck: a pod that the cache has not seen yet stops the deletion: the last check reads the
// API server.
func TestRecheck(t *testing.T) {
	// The view sees a stale cluster: the pod is filtered out as if the cache had not seen it yet.
	stale := behindReader{Client: env.Client, hide: withoutPods}
	h := newHarness(t, env.Client, cluster.New(stale, false))
	newNodePool(t, "recheck", nil)
	nc, node := newNode(t, "recheck", "recheck", nil)
	newPod(t, "recheck-late", node.Name, nil)
	deleted := h.decideAndCarryOut(t)
	if len(deleted) != 0 || deleting(t, nc) {
		t.Errorf("deleted %v, want none: the API server has a pod on the node", deleted)
	}
	// Tainted before the last check, untainted once the command was abandoned.
	got := &corev1.Node{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(node), got); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(got.Spec.Taints, func(taint corev1.Taint) bool { return taint.Key == v1.DisruptedTaintKey }) {
		t.Errorf("node keeps the %s taint after the command was abandoned: %v", v1.DisruptedTaintKey, got.Spec.Taints)
	}
	if e := h.events.Find(nc.Name, corev1.EventTypeNormal, disruption.ReasonDisruptionAbandoned); !strings.Contains(e, "recheck-late was bound") {
		t.Errorf("abandon event = %q, want it to name the pod bound after the decision", e)
	}
}

// behindReader lists what the API server has, less what hide removes,
// as a cache that is behind would.
type behindReader struct {
	client.Client
	hide func(client.ObjectList)
}

func (r behindReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	r.hide(list)
	return nil
}

// withoutPods hides every pod.
func withoutPods(list client.ObjectList) {
	if pods, ok := list.(*corev1.PodList); ok {
		pods.Items = nil
	}
}

func findCondition(nc *v1.NodeClaim, conditionType string) *metav1.Condition {
	for i := range nc.Status.Conditions {
		if nc.Status.Conditions[i].Type == conditionType {
			return &nc.Status.Conditions[i]
		}
	}
	return nil
}

// counter returns the value of the counter with exactly these labels, or -1.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	t.Logf("metric families: %s", strings.Join(names, ", "))
	return -1
}
