package disruption_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
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
			c, events, reg := newController(t)
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
			deleted, err := c.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(deleted, nc.Name); got != tt.want {
				t.Errorf("deleted %v, want %s deleted: %v", deleted, nc.Name, tt.want)
			}
			if got := deleting(t, nc); got != tt.want {
				t.Errorf("nodeclaim deleting = %v, want %v", got, tt.want)
			}
			var want []string
			if tt.want {
				want = []string{nc.Name + " Normal DisruptionTerminating Disrupting NodeClaim: Underutilized", node.Name + " Normal DisruptionTerminating Disrupting Node: Underutilized"}
			}
			if diff := cmp.Diff(want, events.Events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			wantCount := 0.0
			if tt.want {
				wantCount = 1
			}
			if v := counter(t, reg, "karpenter_voluntary_disruption_decisions_total", map[string]string{"decision": "delete", "reason": "underutilized", "consolidation_type": "single"}); max(v, 0) != wantCount {
				t.Errorf("karpenter_voluntary_disruption_decisions_total = %v, want %v", v, wantCount)
			}
		})
	}
}

// TestUnderutilizedOnePerPass: of two nodes whose pods fit on a third, one pass deletes one, the
// one with fewer pods, with DisruptionReason Underutilized; the next pass, with it still being
// deleted, deletes the other only if the third has room for the pods of both.
func TestUnderutilizedOnePerPass(t *testing.T) {
	for _, tt := range []struct {
		name       string
		cpu        string // of each pod; the receiver has 2 CPU
		wantSecond bool
	}{
		{name: "room-for-both", cpu: "500m", wantSecond: true},
		{name: "room-for-one", cpu: "1", wantSecond: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _, reg := newController(t)
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

			deleted, err := c.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{a.Name}, deleted); diff != "" {
				t.Fatalf("first pass deleted (-want +got):\n%s", diff)
			}
			got := &v1.NodeClaim{}
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(a), got); err != nil {
				t.Fatal(err)
			}
			if cond := findCondition(got, v1.ConditionTypeDisruptionReason); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "Underutilized" {
				t.Errorf("DisruptionReason = %+v, want True/Underutilized", cond)
			}
			if deleting(t, b) {
				t.Fatalf("%s deleted in the same pass", b.Name)
			}
			if deleted, err = c.Disrupt(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(deleted, b.Name); got != tt.wantSecond {
				t.Errorf("second pass deleted %v, want %s deleted: %v", deleted, b.Name, tt.wantSecond)
			}
			want := 1.0
			if tt.wantSecond {
				want = 2
			}
			if v := counter(t, reg, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "underutilized", "nodepool": pool, "capacity_type": "spot"}); v != want {
				t.Errorf("karpenter_nodeclaims_disrupted_total = %v, want %v", v, want)
			}
		})
	}
}

// TestUnderutilizedRecheck: a PodDisruptionBudget that the cache has not seen yet stops the
// deletion: the last check reads the API server.
func TestUnderutilizedRecheck(t *testing.T) {
	events := &testenv.Recorder{}
	c, err := disruption.NewController(behindReader{Client: env.Client, hide: withoutPDBs}, cluster.New(env.Client, false), clocktesting.NewFakeClock(time.Now()), events, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c.SetAPIReader(env.Client)
	newNodePool(t, "u-recheck", underutilizedPool)
	nc, node := newNode(t, "u-recheck", "u-recheck", sized)
	_, receiver := newNode(t, "u-recheck", "u-recheck-receiver", func(nc *v1.NodeClaim, n *corev1.Node) { sized(nc, n); doNotDisrupt(n) })
	ready(t, receiver)
	newPod(t, "u-recheck", node.Name, requesting("500m", "u-recheck"))
	create(t, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "u-recheck", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "u-recheck"}}},
	})
	deleted, err := c.Disrupt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
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
