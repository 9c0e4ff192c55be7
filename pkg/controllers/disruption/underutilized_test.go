package disruption_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
)

// underutilizedPool edits a NodePool to WhenEmptyOrUnderutilized.
func underutilizedPool(np *v1.NodePool) {
	np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
}

// sized gives the Node 2 CPU, 4Gi and 10 pods.
func sized(_ *v1.NodeClaim, n *corev1.Node) {
	n.Status.Allocatable = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("10"),
	}
	n.Status.Capacity = n.Status.Allocatable
}

// requesting returns a pod edit that requests cpu and carries the label app=name.
func requesting(cpu, name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": name}
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
}

// ready removes the not-ready taint that the API server's admission puts on a new Node, as the
// node lifecycle controller (absent here) does once the Node is Ready.
func ready(t *testing.T, node *corev1.Node) {
	t.Helper()
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(node), node); err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(taint corev1.Taint) bool { return taint.Key == corev1.TaintNodeNotReady })
	if err := env.Client.Update(t.Context(), node); err != nil {
		t.Fatal(err)
	}
}

// TestUnderutilized: one node with a pod and one empty node that may not be disrupted itself
// (do-not-disrupt): whether a pass deletes the first because its pod fits on the second.
func TestUnderutilized(t *testing.T) {
	tests := []struct {
		name     string
		nodePool func(*v1.NodePool)
		cpu      string // the pod's request; the other node has 2 CPU
		pod      func(*corev1.Pod)
		receiver func(*v1.NodeClaim, *corev1.Node)
		// pdb, if set, covers the pod, allowing that many disruptions.
		pdb  *int32
		want bool
	}{
		{name: "fits", want: true},
		{name: "too-big", cpu: "3", want: false},
		{name: "when-empty", nodePool: func(np *v1.NodePool) {}, want: false},
		{name: "consolidate-after-never", nodePool: func(np *v1.NodePool) {
			underutilizedPool(np)
			np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
		}, want: false},
		{name: "do-not-disrupt-pod", pod: func(p *corev1.Pod) { doNotDisrupt(p) }, want: false},
		{name: "pdb-allows-none", pdb: new(int32(0)), want: false},
		{name: "pdb-allows-one", pdb: new(int32(1)), want: true},
		{name: "budget-zero-underutilized", nodePool: func(np *v1.NodePool) {
			underutilizedPool(np)
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonUnderutilized}}}
		}, want: false},
		{name: "budget-zero-empty-only", nodePool: func(np *v1.NodePool) {
			underutilizedPool(np)
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}}}
		}, want: true},
		{name: "receiver-tainted", receiver: func(_ *v1.NodeClaim, n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
		}, want: false},
		{name: "receiver-cordoned", receiver: func(_ *v1.NodeClaim, n *corev1.Node) { n.Spec.Unschedulable = true }, want: false},
		{name: "anti-affinity", pod: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "anti-affinity"}},
					TopologyKey:   corev1.LabelHostname,
				}},
			}}
		}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			pool := "u-" + tt.name
			edit := tt.nodePool
			if edit == nil {
				edit = underutilizedPool
			}
			newNodePool(t, pool, edit)
			nc, node := newNode(t, pool, "u-"+tt.name, sized)
			_, other := newNode(t, pool, "u-"+tt.name+"-receiver", func(nc *v1.NodeClaim, n *corev1.Node) {
				sized(nc, n)
				doNotDisrupt(n)
				n.Labels[corev1.LabelHostname] = n.Name
				if tt.receiver != nil {
					tt.receiver(nc, n)
				}
			})
			ready(t, other)
			if tt.name == "anti-affinity" {
				// A pod of the same app on the receiver: the candidate's pod may not join it.
				newPod(t, "u-anti-affinity-other", other.Name, requesting("100m", "anti-affinity"))
			}
			cpu := tt.cpu
			if cpu == "" {
				cpu = "500m"
			}
			newPod(t, "u-"+tt.name, node.Name, func(p *corev1.Pod) {
				requesting(cpu, tt.name)(p)
				if tt.pod != nil {
					tt.pod(p)
				}
			})
			if tt.pdb != nil {
				pdb := &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Name: "u-" + tt.name, Namespace: "default"},
					Spec: policyv1.PodDisruptionBudgetSpec{
						MinAvailable: new(intstr.FromInt32(1)),
						Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": tt.name}},
					},
				}
				create(t, pdb)
				pdb.Status.DisruptionsAllowed = *tt.pdb
				if err := env.Client.Status().Update(t.Context(), pdb); err != nil {
					t.Fatal(err)
				}
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
					nc.Name + " Normal DisruptionTerminating Disrupting NodeClaim: Underutilized, deleting 1 node(s)",
					pool + " Normal DisruptionTerminating Disrupting NodeClaim " + nc.Name + ": Underutilized, deleting 1 node(s)",
					node.Name + " Normal DisruptionTerminating Disrupting Node: Underutilized, deleting 1 node(s)",
				}
			}
			if diff := cmp.Diff(want, terminating(h.events)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			wantCount := 0.0
			if tt.want {
				wantCount = 1
			}
			if v := counter(t, h.reg, "karpenter_voluntary_disruption_decisions_total", map[string]string{"decision": "delete", "reason": "underutilized", "consolidation_type": "single"}); max(v, 0) != wantCount {
				t.Errorf("karpenter_voluntary_disruption_decisions_total = %v, want %v", v, wantCount)
			}
		})
	}
}

// TestUnderutilizedMulti: two nodes whose pods fit on a third go together (multi-node
// consolidation) when the third has room for the pods of both; else the one with fewer pods goes
// alone (single-node), and the other stays.
func TestUnderutilizedMulti(t *testing.T) {
	for _, tt := range []struct {
		name string
		cpu  string // of each pod; the receiver has 2 CPU
		want []string
		// consolidationType of the decision.
		consolidationType string
	}{
		{name: "room-for-both", cpu: "500m", want: []string{"a", "b"}, consolidationType: "multi"},
		{name: "room-for-one", cpu: "1", want: []string{"a"}, consolidationType: "single"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			pool := "one-" + tt.name
			newNodePool(t, pool, func(np *v1.NodePool) {
				underutilizedPool(np)
				np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "10"}}
			})
			held := func(nc *v1.NodeClaim, n *corev1.Node) {
				sized(nc, n)
				nc.Finalizers = []string{v1.TerminationFinalizer} // held, as lifecycle would until the instance is gone
			}
			a, nodeA := newNode(t, pool, pool+"-a", held)
			b, nodeB := newNode(t, pool, pool+"-b", held)
			_, receiver := newNode(t, pool, pool+"-receiver", func(nc *v1.NodeClaim, n *corev1.Node) { sized(nc, n); doNotDisrupt(n) })
			ready(t, receiver)
			// b has two small pods, a one: a goes first.
			newPod(t, pool+"-a", nodeA.Name, requesting(tt.cpu, "a"))
			newPod(t, pool+"-b1", nodeB.Name, requesting("100m", "b"))
			newPod(t, pool+"-b2", nodeB.Name, requesting(tt.cpu, "b"))

			deleted := h.decideAndCarryOut(t)
			var want []string
			for _, n := range tt.want {
				want = append(want, map[string]string{"a": a.Name, "b": b.Name}[n])
			}
			if diff := cmp.Diff(want, deleted); diff != "" {
				t.Fatalf("deleted (-want +got):\n%s", diff)
			}
			got := &v1.NodeClaim{}
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(a), got); err != nil {
				t.Fatal(err)
			}
			if cond := findCondition(got, v1.ConditionTypeDisruptionReason); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "Underutilized" {
				t.Errorf("DisruptionReason = %+v, want True/Underutilized", cond)
			}
			if deleted = h.decideAndCarryOut(t); len(deleted) != 0 {
				t.Errorf("next pass deleted %v, want none", deleted)
			}
			if v := counter(t, h.reg, "karpenter_voluntary_disruption_decisions_total", map[string]string{"decision": "delete", "reason": "underutilized", "consolidation_type": tt.consolidationType}); v != 1 {
				t.Errorf("karpenter_voluntary_disruption_decisions_total{consolidation_type=%s} = %v, want 1", tt.consolidationType, v)
			}
			if v := counter(t, h.reg, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "underutilized", "nodepool": pool, "capacity_type": "spot",
				"consolidation_policy": "when_empty_or_underutilized", "termination_mode": "graceful"}); v != float64(len(want)) {
				t.Errorf("karpenter_nodeclaims_disrupted_total = %v, want %d", v, len(want))
			}
		})
	}
}

// TestUnderutilizedRecheck: a PodDisruptionBudget that the cache has not seen yet stops the
// deletion: the last check reads the API server.
func TestUnderutilizedRecheck(t *testing.T) {
	h := newHarness(t, behindReader{Client: env.Client, hide: withoutPDBs}, cluster.New(env.Client, false))
	h.SetAPIReader(env.Client)
	newNodePool(t, "u-recheck", underutilizedPool)
	nc, node := newNode(t, "u-recheck", "u-recheck", sized)
	_, receiver := newNode(t, "u-recheck", "u-recheck-receiver", func(nc *v1.NodeClaim, n *corev1.Node) { sized(nc, n); doNotDisrupt(n) })
	ready(t, receiver)
	newPod(t, "u-recheck", node.Name, requesting("500m", "u-recheck"))
	create(t, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "u-recheck", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "u-recheck"}}},
	})
	deleted := h.decideAndCarryOut(t)
	if len(deleted) != 0 || deleting(t, nc) {
		t.Errorf("deleted %v, want none: the API server has a PodDisruptionBudget allowing no disruption", deleted)
	}
}

// withoutPDBs hides every PodDisruptionBudget.
func withoutPDBs(list client.ObjectList) {
	if pdbs, ok := list.(*policyv1.PodDisruptionBudgetList); ok {
		pdbs.Items = nil
	}
}
