package disruption_test

import (
	"slices"
	"testing"
	"time"

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
// costs), and not while a Drifted budget of 0 holds. A pod with karpenter.sh/do-not-disrupt
// keeps it, unless its NodeClaim has a terminationGracePeriod (as Karpenter's eventual
// disruption: termination then holds the pod until the grace period ends); do-not-disrupt on the
// Node keeps it whatever the grace period.
func TestDrifted(t *testing.T) {
	never := func(np *v1.NodePool) { np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never) }
	for _, tt := range []struct {
		name        string
		nodePool    func(*v1.NodePool)
		receiver    bool
		node        func(*v1.NodeClaim, *corev1.Node)
		pod         func(*corev1.Pod)
		wantDeleted bool
		wantLaunch  bool
	}{
		{name: "fits-elsewhere", nodePool: never, receiver: true, wantDeleted: true},
		{name: "needs-replacement", nodePool: never, wantLaunch: true},
		{name: "budget-zero", nodePool: func(np *v1.NodePool) {
			never(np)
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}}
		}, receiver: true},
		{name: "do-not-disrupt-pod", nodePool: never, receiver: true, pod: doNotDisruptPod},
		{name: "do-not-disrupt-pod-grace-period", nodePool: never, receiver: true, node: gracePeriod, pod: doNotDisruptPod, wantDeleted: true},
		{name: "do-not-disrupt-node-grace-period", nodePool: never, receiver: true, node: func(nc *v1.NodeClaim, n *corev1.Node) {
			gracePeriod(nc, n)
			doNotDisrupt(n)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			// The same type as the node: drift takes a replacement at any price.
			h.cloud.InstanceTypes = []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeSpot)}
			pool := "drift-" + tt.name
			newNodePool(t, pool, tt.nodePool)
			nc, node := newNode(t, pool, pool, func(nc *v1.NodeClaim, n *corev1.Node) {
				drifted(nc, n)
				if tt.node != nil {
					tt.node(nc, n)
				}
			})
			newPod(t, pool, node.Name, func(p *corev1.Pod) {
				requesting("500m", pool)(p)
				if tt.pod != nil {
					tt.pod(p)
				}
			})
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

// gracePeriod gives the NodeClaim a terminationGracePeriod of a minute.
func gracePeriod(nc *v1.NodeClaim, _ *corev1.Node) {
	nc.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Minute}
}

func doNotDisruptPod(p *corev1.Pod) {
	p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
}
