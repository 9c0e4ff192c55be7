package disruption_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// instanceType is an amd64 type with 2 CPU, 8Gi and 20 pods, offered in us-west-2a at price for
// each capacity type named.
func instanceType(name string, price float64, capacityTypes ...string) *cloudprovider.InstanceType {
	it := &cloudprovider.InstanceType{
		Name:         name,
		Requirements: map[string][]string{corev1.LabelArchStable: {"amd64"}},
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("20"),
		},
	}
	for _, ct := range capacityTypes {
		it.Offerings = append(it.Offerings, &cloudprovider.Offering{Zone: "us-west-2a", CapacityType: ct, Price: price, Available: true})
	}
	return it
}

// onDemand makes the node an on-demand m7i.large.
func onDemand(nc *v1.NodeClaim, n *corev1.Node) {
	sized(nc, n)
	nc.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
	n.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
}

// tainted reports whether the Node carries karpenter.sh/disrupted.
func tainted(t *testing.T, node *corev1.Node) bool {
	t.Helper()
	got := &corev1.Node{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(node), got); err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(got.Spec.Taints, func(taint corev1.Taint) bool { return taint.Key == v1.DisruptedTaintKey })
}

// TestReplace: a node whose pod fits on a cheaper type is replaced: the replacement is launched
// after the validation period with the candidate tainted, and the candidate is deleted once the
// replacement is Initialized; if the replacement goes away instead, the candidate is untainted
// and kept.
func TestReplace(t *testing.T) {
	for _, replacementFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("replacement-fails=%v", replacementFails), func(t *testing.T) {
			h := newController(t)
			h.cloud.InstanceTypes = []*cloudprovider.InstanceType{
				instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand),
				instanceType("c7i.small", 0.05, v1.CapacityTypeOnDemand),
			}
			pool := fmt.Sprintf("replace-%v", replacementFails)
			newNodePool(t, pool, underutilizedPool)
			nc, node := newNode(t, pool, pool, onDemand)
			newPod(t, pool, node.Name, requesting("500m", pool))

			replacement := launchReplacement(t, h, node)
			// Not initialized yet: the candidate waits.
			if res, err := h.Disrupt(t.Context()); err != nil || len(res.Deleted) != 0 {
				t.Fatalf("pass while the replacement launches deleted %v (%v), want none", res.Deleted, err)
			}
			if replacementFails {
				if err := env.Client.Delete(t.Context(), replacement); err != nil {
					t.Fatal(err)
				}
			} else {
				replacement.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: metav1.Now()}}
				if err := env.Client.Status().Update(t.Context(), replacement); err != nil {
					t.Fatal(err)
				}
			}
			res, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(res.Deleted, nc.Name); got == replacementFails {
				t.Errorf("deleted %v; want %s deleted: %v", res.Deleted, nc.Name, !replacementFails)
			}
			if replacementFails {
				if tainted(t, node) || deleting(t, nc) {
					t.Error("candidate still tainted or deleted after its replacement failed")
				}
				if e := h.events.Find(nc.Name, corev1.EventTypeWarning, disruption.ReasonDisruptionAbandoned); e == "" {
					t.Errorf("no abandon event; events: %v", h.events.Events())
				}
				return
			}
			if v := counter(t, h.reg, "karpenter_voluntary_disruption_decisions_total", map[string]string{"decision": "replace", "reason": "underutilized", "consolidation_type": "single"}); v != 1 {
				t.Errorf("replace decisions = %v, want 1", v)
			}
			if v := counter(t, h.reg, "karpenter_nodeclaims_created_total", map[string]string{"reason": "underutilized", "nodepool": pool, "min_values_relaxed": "false"}); v != 1 {
				t.Errorf("replacements created = %v, want 1", v)
			}
			if e := h.events.Find(pool, corev1.EventTypeNormal, disruption.ReasonDisruptionTerminating); !strings.Contains(e, "saving $0.0500/h") {
				t.Errorf("nodepool event %q, want the savings per hour", e)
			}
		})
	}
}

// launchReplacement runs the pass that decides to replace the node with one c7i.small, saving
// $0.05/h, and, after the validation period, the pass that taints it and launches the
// replacement, which it returns.
func launchReplacement(t *testing.T, h *harness, node *corev1.Node) *v1.NodeClaim {
	t.Helper()
	first, err := h.Disrupt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Decided, "replacing 1 node(s) with 1") || !strings.Contains(first.Decided, "saving $0.0500/h") {
		t.Fatalf("decided %q, want a replacement saving $0.05/h", first.Decided)
	}
	if tainted(t, node) {
		t.Fatal("candidate tainted before the validation period")
	}
	h.clock.Step(disruption.ValidationPeriod)
	second, err := h.Disrupt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Launched) != 1 || len(second.Deleted) != 0 {
		t.Fatalf("second pass launched %v and deleted %v, want one replacement and nothing deleted", second.Launched, second.Deleted)
	}
	if !tainted(t, node) {
		t.Error("candidate not tainted while its replacement launches")
	}
	replacement := &v1.NodeClaim{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: second.Launched[0]}, replacement); err != nil {
		t.Fatal(err)
	}
	cleanup(t, replacement)
	if i := slices.IndexFunc(replacement.Spec.Requirements, func(r v1.NodeSelectorRequirementWithMinValues) bool {
		return r.Key == corev1.LabelInstanceTypeStable
	}); i < 0 || !slices.Equal(replacement.Spec.Requirements[i].Values, []string{"c7i.small"}) {
		t.Errorf("replacement requirements %v, want instance types [c7i.small] only", replacement.Spec.Requirements)
	}
	return replacement
}

// TestNoChurn: no replacement is taken that does not save MinReplacementSavings, and a spot node
// is replaced by spot only with the SpotToSpotConsolidation gate and MinSpotToSpotOptions
// cheaper types; the NodeClaim says why.
func TestNoChurn(t *testing.T) {
	cheapSpot := func(n int) []*cloudprovider.InstanceType {
		out := []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeSpot)}
		for i := range n {
			out = append(out, instanceType(fmt.Sprintf("c%d.small", i), 0.05, v1.CapacityTypeSpot))
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		types []*cloudprovider.InstanceType
		node  func(*v1.NodeClaim, *corev1.Node)
		// spotToSpot is the SpotToSpotConsolidation feature gate.
		spotToSpot bool
		want       bool
		wantNote   string
	}{
		{name: "same-type", types: []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand)}, node: onDemand,
			wantNote: "no cheaper option: the cheapest replacement, m7i.large on-demand, costs $0.1000/h against $0.1000/h now"},
		{name: "saves-too-little", types: []*cloudprovider.InstanceType{
			instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand), instanceType("m6i.large", 0.097, v1.CapacityTypeOnDemand),
		}, node: onDemand, wantNote: "no cheaper option: the cheapest replacement, m6i.large on-demand, costs $0.0970/h"},
		{name: "spot-to-spot-few", types: cheapSpot(3), node: sized, spotToSpot: true, wantNote: "spot-to-spot replacement needs at least 15 cheaper instance types, found 3"},
		{name: "spot-to-spot-enough", types: cheapSpot(15), node: sized, spotToSpot: true, want: true},
		{name: "spot-to-spot-gate-off", types: cheapSpot(15), node: sized, wantNote: disruption.SpotToSpotOff},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, env.Client, cluster.New(env.Client, false), disruption.WithSpotToSpotConsolidation(tt.spotToSpot))
			h.cloud.InstanceTypes = tt.types
			pool := "churn-" + tt.name
			newNodePool(t, pool, underutilizedPool)
			nc, node := newNode(t, pool, pool, tt.node)
			newPod(t, pool, node.Name, requesting("500m", pool))
			res, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Decided != ""; got != tt.want {
				t.Fatalf("decided %q, want a decision: %v", res.Decided, tt.want)
			}
			if tt.wantNote != "" {
				if e := h.events.Find(nc.Name, corev1.EventTypeNormal, disruption.ReasonDisruptionBlocked); !strings.Contains(e, tt.wantNote) {
					t.Errorf("event %q, want it to contain %q", e, tt.wantNote)
				}
				// Once per change: a second pass says nothing new.
				before := len(h.events.Events())
				if _, err := h.Disrupt(t.Context()); err != nil {
					t.Fatal(err)
				}
				if after := h.events.Events(); len(after) != before {
					t.Errorf("second pass added events %v", after[before:])
				}
			}
		})
	}
}

// TestPendingPodDoesNotBlock: a pending pod that fits nowhere does not keep a node whose pods fit
// elsewhere.
func TestPendingPodDoesNotBlock(t *testing.T) {
	h := newController(t)
	newNodePool(t, "pending", underutilizedPool)
	nc, node := newNode(t, "pending", "pending", sized)
	_, receiver := newNode(t, "pending", "pending-receiver", func(nc *v1.NodeClaim, n *corev1.Node) { sized(nc, n); doNotDisrupt(n) })
	ready(t, receiver)
	newPod(t, "pending-moving", node.Name, requesting("500m", "moving"))
	newPod(t, "pending-huge", "", func(p *corev1.Pod) {
		requesting("100", "huge")(p)
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	})
	if deleted := h.decideAndCarryOut(t); !slices.Contains(deleted, nc.Name) {
		t.Errorf("deleted %v, want %s: the pending pod fits nowhere anyway", deleted, nc.Name)
	}
}

// TestExpire: a NodeClaim past its expireAfter is deleted in one pass, do-not-disrupt and a zero
// budget notwithstanding.
func TestExpire(t *testing.T) {
	h := newController(t)
	newNodePool(t, "expire", func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}} })
	nc, _ := newNode(t, "expire", "expire", func(nc *v1.NodeClaim, _ *corev1.Node) {
		doNotDisrupt(nc)
		nc.Spec.ExpireAfter = v1.MustParseNillableDuration("1h")
	})
	res, err := h.Disrupt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The API server dates the NodeClaim to the second, the test clock to the nanosecond: when a
	// second began between the clock's start and the create, expiry is up to a second past an
	// hour on the test clock.
	if len(res.Deleted) != 0 || res.RequeueAfter <= 0 || res.RequeueAfter > time.Hour+time.Second {
		t.Fatalf("before expiry: deleted %v, requeue after %s; want none deleted and a requeue at expiry, within the hour", res.Deleted, res.RequeueAfter)
	}
	h.clock.Step(res.RequeueAfter)
	if res, err = h.Disrupt(t.Context()); err != nil || !slices.Contains(res.Deleted, nc.Name) {
		t.Fatalf("after expiry: deleted %v (%v), want %s", res.Deleted, err, nc.Name)
	}
	if v := counter(t, h.reg, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "expired", "nodepool": "expire", "capacity_type": "spot",
		"consolidation_policy": "", "termination_mode": "graceful"}); v != 1 {
		t.Errorf("expired disruptions = %v, want 1", v)
	}
}

// TestBudgetHoldsWhileReplacing: with a budget of one node, the node being replaced (tainted
// while its replacement launches) takes the budget: an empty node of the same NodePool waits,
// with the budget named as the reason, until the replacement is done.
func TestBudgetHoldsWhileReplacing(t *testing.T) {
	h := newController(t)
	h.cloud.InstanceTypes = []*cloudprovider.InstanceType{
		instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand),
		instanceType("c7i.small", 0.05, v1.CapacityTypeOnDemand),
	}
	pool := "budget-replacing"
	newNodePool(t, pool, func(np *v1.NodePool) {
		underutilizedPool(np)
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1"}}
	})
	nc, node := newNode(t, pool, pool, onDemand)
	newPod(t, pool, node.Name, requesting("500m", pool))
	first, err := h.Disrupt(t.Context())
	if err != nil || !strings.Contains(first.Decided, "replacing") {
		t.Fatalf("decided %q (%v), want a replacement", first.Decided, err)
	}
	h.clock.Step(disruption.ValidationPeriod)
	second, err := h.Disrupt(t.Context())
	if err != nil || len(second.Launched) != 1 {
		t.Fatalf("launched %v (%v), want one replacement", second.Launched, err)
	}
	cleanup(t, &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: second.Launched[0]}})
	// An empty node appears while the replacement launches.
	empty, _ := newNode(t, pool, pool+"-empty", onDemand)
	for range 3 {
		res, err := h.Disrupt(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Decided != "" || len(res.Deleted) != 0 {
			t.Fatalf("decided %q and deleted %v while %s is being replaced under a budget of one node", res.Decided, res.Deleted, nc.Name)
		}
		h.clock.Step(disruption.ValidationPeriod)
	}
	if e := h.events.Find(empty.Name, corev1.EventTypeNormal, disruption.ReasonDisruptionBlocked); !strings.Contains(e, "disruption budget exhausted for Empty: budget 0 of nodepool budget-replacing (nodes: 1) allows 1 node(s) disrupted at once") {
		t.Errorf("event %q, want the budget named", e)
	}
	if deleting(t, empty) {
		t.Error("the empty node was deleted while the budget was taken")
	}
}
