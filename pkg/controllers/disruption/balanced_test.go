package disruption_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// TestBalanced: under the Balanced policy, deleting a node whose pod fits elsewhere saves enough
// for what it disrupts, while replacing the only node of the pool, with four pods, by one 10%
// cheaper does not; WhenEmptyOrUnderutilized takes that replacement.
func TestBalanced(t *testing.T) {
	for _, tt := range []struct {
		name     string
		policy   v1.ConsolidationPolicy
		receiver bool
		pods     int
		want     string // in the decision; "" for none
		wantNote string
	}{
		{name: "delete", policy: v1.ConsolidationPolicyBalanced, receiver: true, pods: 1, want: "deleting 1 node(s)"},
		{name: "replace-refused", policy: v1.ConsolidationPolicyBalanced, pods: 4,
			wantNote: "is Balanced: the move saves 10.0% of its cost ($0.0100/h) but disrupts 100.0% of it (1 node(s), 4 pod(s))"},
		{name: "replace-underutilized", policy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized, pods: 4, want: "replacing 1 node(s) with 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			h.cloud.InstanceTypes = []*cloudprovider.InstanceType{
				instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand),
				instanceType("c7i.large", 0.09, v1.CapacityTypeOnDemand),
			}
			pool := "balanced-" + tt.name
			newNodePool(t, pool, func(np *v1.NodePool) { np.Spec.Disruption.ConsolidationPolicy = tt.policy })
			nc, node := newNode(t, pool, pool, onDemand)
			for i := range tt.pods {
				newPod(t, fmt.Sprintf("%s-%d", pool, i), node.Name, requesting("100m", pool))
			}
			if tt.receiver {
				_, receiver := newNode(t, pool, pool+"-receiver", func(nc *v1.NodeClaim, n *corev1.Node) { onDemand(nc, n); doNotDisrupt(n) })
				ready(t, receiver)
			}
			res, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && res.Decided != "" || !strings.Contains(res.Decided, tt.want) {
				t.Errorf("decided %q, want %q", res.Decided, tt.want)
			}
			if tt.wantNote != "" {
				if e := h.events.Find(nc.Name, corev1.EventTypeNormal, disruption.ReasonDisruptionBlocked); !strings.Contains(e, tt.wantNote) {
					t.Errorf("event %q, want it to contain %q", e, tt.wantNote)
				}
			}
		})
	}
}
