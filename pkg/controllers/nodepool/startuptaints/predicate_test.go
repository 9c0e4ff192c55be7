package startuptaints

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestTaintsChanged: only what the advice reads enqueues a NodePool; a heartbeat does not.
func TestTaintsChanged(t *testing.T) {
	cilium := corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}
	node := func(pool string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{v1.NodePoolLabelKey: pool}}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	beat := node("a", cilium)
	beat.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	beat.ResourceVersion = "2"
	for _, tc := range []struct {
		name     string
		old, new *corev1.Node
		want     bool
	}{
		{"heartbeat", node("a", cilium), beat, false},
		{"taint added", node("a"), node("a", cilium), true},
		{"taint removed", node("a", cilium), node("a"), true},
		{"taint value changed", node("a", cilium), node("a", corev1.Taint{Key: cilium.Key, Value: "false", Effect: cilium.Effect}), true},
		{"nodepool label changed", node("a", cilium), node("b", cilium), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := taintsChanged().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
	if !taintsChanged().Create(event.CreateEvent{Object: node("a")}) {
		t.Error("a new Node does not enqueue its NodePool")
	}
	if taintsChanged().Delete(event.DeleteEvent{Object: node("a", cilium)}) {
		t.Error("a deleted Node enqueues its NodePool")
	}
}
