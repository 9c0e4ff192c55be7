package disruption_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// unschedulable marks a pod without a node as kube-scheduler leaves one it could not place.
func unschedulable(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
}

// TestConsolidationLeavesRoomToPending: consolidation during a scale-up. A node whose 1.5 CPU
// pod fits on the receiver (2 CPU, empty) is kept when the room it would take is what a pending
// pod needs, or when the receiver is not initialized yet: deleting it would only make
// provisioning buy the capacity again. With nothing pending and the receiver initialized, it
// goes.
func TestConsolidationLeavesRoomToPending(t *testing.T) {
	for _, tt := range []struct {
		name string
		// pending, if set, is the CPU request of an unschedulable pod; with unseen, of a pod
		// kube-scheduler has not tried yet (no PodScheduled condition).
		pending string
		unseen  bool
		// receiver edits the receiving node; inFlight makes it a NodeClaim with no Node yet.
		receiver func(*v1.NodeClaim, *corev1.Node)
		inFlight bool
		// second adds an initialized receiver like the first, created after it.
		second   bool
		want     bool
		wantNote string
	}{
		{name: "nothing-pending", want: true},
		{name: "pending-fits-elsewhere-too", pending: "100m", want: true},
		{name: "pending-needs-the-room", pending: "1", wantNote: "pending pods would then need $0.1000/h of new nodes instead of $0.0000/h"},
		{name: "pending-fits-nowhere", pending: "100", want: true},
		{name: "unseen-needs-the-room", pending: "1", unseen: true, wantNote: "pending pods would then need $0.1000/h of new nodes instead of $0.0000/h"},
		// Not counting on the receiver, its pod needs a new node, no cheaper.
		{name: "receiver-not-initialized", receiver: func(_ *v1.NodeClaim, n *corev1.Node) {
			delete(n.Labels, v1.NodeInitializedLabelKey)
		}, wantNote: "no cheaper option"},
		{name: "receiver-in-flight", inFlight: true, wantNote: "no cheaper option"},
		// The pod goes to the initialized receiver instead: the move holds.
		{name: "receiver-in-flight-and-one-initialized", inFlight: true, second: true, want: true},
		{name: "receiver-not-initialized-and-one-initialized", receiver: func(_ *v1.NodeClaim, n *corev1.Node) {
			delete(n.Labels, v1.NodeInitializedLabelKey)
		}, second: true, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			h.cloud.InstanceTypes = []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand)}
			pool := "room-" + tt.name
			newNodePool(t, pool, underutilizedPool)
			nc, node := newNode(t, pool, pool, sized)
			if tt.inFlight {
				receiver := &v1.NodeClaim{
					ObjectMeta: metav1.ObjectMeta{Name: pool + "-receiver", Labels: map[string]string{v1.NodePoolLabelKey: pool, v1.CapacityTypeLabelKey: v1.CapacityTypeSpot}},
					Spec: v1.NodeClaimSpec{
						Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
						NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
					},
				}
				create(t, receiver)
				receiver.Status.Allocatable = corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("10"),
				}
				receiver.Status.Capacity = receiver.Status.Allocatable
				if err := env.Client.Status().Update(t.Context(), receiver); err != nil {
					t.Fatal(err)
				}
			} else {
				_, receiver := newNode(t, pool, pool+"-receiver", func(nc *v1.NodeClaim, n *corev1.Node) {
					sized(nc, n)
					doNotDisrupt(n)
					if tt.receiver != nil {
						tt.receiver(nc, n)
					}
				})
				ready(t, receiver)
			}
			if tt.second {
				_, second := newNode(t, pool, pool+"-receiver2", func(nc *v1.NodeClaim, n *corev1.Node) { sized(nc, n); doNotDisrupt(n) })
				ready(t, second)
			}
			newPod(t, pool+"-moving", node.Name, requesting("1500m", pool+"-moving"))
			if tt.pending != "" {
				newPod(t, pool+"-pending", "", func(p *corev1.Pod) {
					requesting(tt.pending, pool+"-pending")(p)
					if tt.unseen {
						p.Status.Phase = corev1.PodPending
					} else {
						unschedulable(p)
					}
				})
			}
			deleted := h.decideAndCarryOut(t)
			if got := slices.Contains(deleted, nc.Name); got != tt.want {
				t.Errorf("deleted %v, want %s deleted: %v", deleted, nc.Name, tt.want)
			}
			if tt.wantNote != "" {
				if e := h.events.Find(nc.Name, corev1.EventTypeNormal, disruption.ReasonDisruptionBlocked); !strings.Contains(e, tt.wantNote) {
					t.Errorf("event %q, want it to contain %q", e, tt.wantNote)
				}
			}
		})
	}
}

// TestSplit: a node whose two pods fit on no cheaper single type, but on two smaller nodes that
// together cost less, is replaced by those two; when the two cost too much it is kept and says
// why.
func TestSplit(t *testing.T) {
	small := func(price float64) *cloudprovider.InstanceType {
		it := instanceType("c7i.medium", price, v1.CapacityTypeOnDemand)
		it.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourcePods: resource.MustParse("10")}
		return it
	}
	for _, tt := range []struct {
		name      string
		smallCost float64
		want      string
	}{
		{name: "two-cheaper", smallCost: 0.04, want: "replacing 1 node(s) with 2 (cheapest options c7i.medium on-demand, c7i.medium on-demand, $0.0800/h together), saving $0.0200/h"},
		{name: "two-too-dear", smallCost: 0.049, want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			h.cloud.InstanceTypes = []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand), small(tt.smallCost)}
			pool := "split-" + tt.name
			newNodePool(t, pool, underutilizedPool)
			nc, node := newNode(t, pool, pool, onDemand)
			newPod(t, pool+"-1", node.Name, requesting("900m", pool))
			newPod(t, pool+"-2", node.Name, requesting("900m", pool))
			first, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(first.Decided, tt.want) || (tt.want == "") != (first.Decided == "") {
				t.Fatalf("decided %q, want %q", first.Decided, tt.want)
			}
			if tt.want == "" {
				// The solver holds both pods on one m7i.large then: no cheaper.
				want := "no cheaper option: the cheapest replacement, m7i.large on-demand, costs $0.1000/h against $0.1000/h now"
				if e := h.events.Find(nc.Name, corev1.EventTypeNormal, disruption.ReasonDisruptionBlocked); !strings.Contains(e, want) {
					t.Errorf("event %q, want it to contain %q", e, want)
				}
				return
			}
			h.clock.Step(disruption.ValidationPeriod)
			second, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(second.Launched) != 2 || len(second.Deleted) != 0 {
				t.Fatalf("second pass launched %v and deleted %v, want two replacements and nothing deleted", second.Launched, second.Deleted)
			}
			for _, name := range second.Launched {
				replacement := &v1.NodeClaim{}
				if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, replacement); err != nil {
					t.Fatal(err)
				}
				cleanup(t, replacement)
				if i := slices.IndexFunc(replacement.Spec.Requirements, func(r v1.NodeSelectorRequirementWithMinValues) bool {
					return r.Key == corev1.LabelInstanceTypeStable
				}); i < 0 || !slices.Equal(replacement.Spec.Requirements[i].Values, []string{"c7i.medium"}) {
					t.Errorf("replacement %s requirements %v, want instance types [c7i.medium] only", name, replacement.Spec.Requirements)
				}
			}
			if !tainted(t, node) {
				t.Error("candidate not tainted while its replacements launch")
			}
		})
	}
}

// TestRepack: two m7i.large nodes (2 CPU) holding 1.4 CPU each, neither of which a cheaper type
// holds alone, are replaced together by an m7i.large and a c7i.medium (1 CPU; $0.16/h against
// $0.20/h, where three c7i.medium would cost $0.18/h): re-packed onto several nodes, a
// replacement may be of a candidate's type.
func TestRepack(t *testing.T) {
	h := newController(t)
	medium := instanceType("c7i.medium", 0.06, v1.CapacityTypeOnDemand)
	medium.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourcePods: resource.MustParse("10")}
	h.cloud.InstanceTypes = []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand), medium}
	pool := "repack"
	newNodePool(t, pool, func(np *v1.NodePool) {
		underutilizedPool(np)
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "10"}}
	})
	_, a := newNode(t, pool, pool+"-a", onDemand)
	_, b := newNode(t, pool, pool+"-b", onDemand)
	newPod(t, pool+"-a1", a.Name, requesting("1", pool))
	newPod(t, pool+"-a2", a.Name, requesting("400m", pool))
	newPod(t, pool+"-b1", b.Name, requesting("600m", pool))
	newPod(t, pool+"-b2", b.Name, requesting("400m", pool))
	newPod(t, pool+"-b3", b.Name, requesting("400m", pool))
	res, err := h.Disrupt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := "replacing 2 node(s) with 2"; !strings.Contains(res.Decided, want) {
		t.Errorf("decided %q, want %q", res.Decided, want)
	}
}
