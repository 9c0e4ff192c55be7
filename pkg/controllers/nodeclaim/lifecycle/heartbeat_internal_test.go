package lifecycle

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// TestNotHeartbeat: a heartbeat alone does not reconcile the Node's NodeClaim; any other change
// of the Node does.
func TestNotHeartbeat(t *testing.T) {
	then, now := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(1010, 0))
	base := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "1", Labels: map[string]string{"a": "b"}},
			Spec:       corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-1"},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: then, LastTransitionTime: then},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: then, LastTransitionTime: then},
			}},
		}
	}
	beat := func(n *corev1.Node) *corev1.Node {
		n.ResourceVersion = "2"
		n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Time: &now}}
		for i := range n.Status.Conditions {
			n.Status.Conditions[i].LastHeartbeatTime = now
		}
		return n
	}
	for _, tc := range []struct {
		name   string
		change func(*corev1.Node) *corev1.Node
		want   bool
	}{
		{"heartbeat", beat, false},
		{"not ready", func(n *corev1.Node) *corev1.Node {
			n = beat(n)
			n.Status.Conditions[0].Status, n.Status.Conditions[0].Reason = corev1.ConditionFalse, "KubeletNotReady"
			return n
		}, true},
		{"message", func(n *corev1.Node) *corev1.Node {
			n.Status.Conditions[0].Message = "container runtime network not ready"
			return n
		}, true},
		{"taint removed", func(n *corev1.Node) *corev1.Node {
			n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}
			return n
		}, true},
		{"label", func(n *corev1.Node) *corev1.Node { n.Labels["a"] = "c"; return n }, true},
		{"deleting", func(n *corev1.Node) *corev1.Node { n.DeletionTimestamp = &now; return n }, true},
		{"capacity", func(n *corev1.Node) *corev1.Node {
			n.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("29")}
			return n
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := base()
			if got := notHeartbeat().Update(event.UpdateEvent{ObjectOld: old, ObjectNew: tc.change(base())}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
	if !notHeartbeat().Create(event.CreateEvent{Object: base()}) || !notHeartbeat().Delete(event.DeleteEvent{Object: base()}) {
		t.Error("a Node's creation or deletion does not reconcile its NodeClaim")
	}
}
