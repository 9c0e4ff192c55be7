package disruption_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// drifted marks the NodeClaim Drifted.
func drifted(nc *v1.NodeClaim, n *corev1.Node) {
	sized(nc, n)
	nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "AMIDrift", LastTransitionTime: metav1.Now()})
}

// TestDrifted: a drifted node goes even where consolidation may not (consolidateAfter Never): at
// once when its pods fit elsewhere, through a replacement when they need one (whatever it
// costs), and not while a Drifted budget of 0 holds.
func TestDrifted(t *testing.T) {
	never := func(np *v1.NodePool) { np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never) }
	for _, tt := range []struct {
		name        string
		nodePool    func(*v1.NodePool)
		receiver    bool
		wantDeleted bool
		wantLaunch  bool
	}{
		{name: "fits-elsewhere", nodePool: never, receiver: true, wantDeleted: true},
		{name: "needs-replacement", nodePool: never, wantLaunch: true},
		{name: "budget-zero", nodePool: func(np *v1.NodePool) {
			never(np)
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}}
		}, receiver: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			// The same type as the node: drift takes a replacement at any price.
			h.cloud.InstanceTypes = []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeSpot)}
			pool := "drift-" + tt.name
			newNodePool(t, pool, tt.nodePool)
			nc, node := newNode(t, pool, pool, drifted)
			newPod(t, pool, node.Name, requesting("500m", pool))
			if tt.receiver {
				_, receiver := newNode(t, pool, pool+"-receiver", func(nc *v1.NodeClaim, n *corev1.Node) { sized(nc, n); doNotDisrupt(n) })
				ready(t, receiver)
			}
			first, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			h.clock.Step(disruption.ValidationPeriod)
			second, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			deleted := slices.Concat(first.Deleted, second.Deleted)
			if got := slices.Contains(deleted, nc.Name); got != tt.wantDeleted {
				t.Errorf("deleted %v, want %s deleted: %v (decided %q)", deleted, nc.Name, tt.wantDeleted, first.Decided)
			}
			if got := len(second.Launched) == 1; got != tt.wantLaunch {
				t.Errorf("launched %v, want a replacement: %v (decided %q)", second.Launched, tt.wantLaunch, first.Decided)
			}
			for _, name := range second.Launched {
				cleanup(t, &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}})
			}
		})
	}
}
