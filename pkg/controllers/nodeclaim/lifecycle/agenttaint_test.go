package lifecycle_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestUndeclaredAgentTaintDoesNotFailTheNode: a node that registers with an agent taint its
// NodePool does not declare (Cilium's, from the operator's userData) registers and initializes;
// the taint is its agent's to remove, and the scheduling simulation ignores it meanwhile.
func TestUndeclaredAgentTaintDoesNotFailTheNode(t *testing.T) {
	nc := newNodeClaim("agent")
	cilium := corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}
	launchAndRegister(t, nc, "node-agent", v1.UnregisteredNoExecuteTaint(), cilium)
	waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "True")

	ctx := t.Context()
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "node-agent"}, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	removeTaint(t, "node-agent", corev1.TaintNodeNotReady)
	waitCondition(t, nc.Name, v1.ConditionTypeInitialized, "True")
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "node-agent"}, node); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == cilium.Key }) {
		t.Errorf("node taints %v: the agent's taint is the agent's to remove", node.Spec.Taints)
	}
}
