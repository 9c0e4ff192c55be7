package kubelets

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AgentReadyAfter is how long after a Node turns Ready a node agent's DaemonSet pod takes to start
// on it and delete the agent's taint (a Cilium agent takes a few seconds to a minute on EC2).
const AgentReadyAfter = 5 * time.Second

// agentTaintKeys are the taints the node agents the emulator stands in for delete from their
// node once their own pod there is ready: Cilium's agent, Istio's CNI node agent and the
// EBS, EFS, FSx for Lustre and Mountpoint for S3 CSI node plugins. Each key is the one the
// project's agent deletes at startup; an agent deletes its key whatever the effect or value.
//
// A node carries one of these only when the operator asked for it (in userData or
// startupTaints) because the cluster runs that agent, so the stand-in takes the taint as the sign
// that the agent is installed. A taint outside this list is never removed, as no agent would.
var agentTaintKeys = []string{
	"node.cilium.io/agent-not-ready",
	"cni.istio.io/not-ready",
	"ebs.csi.aws.com/agent-not-ready",
	"efs.csi.aws.com/agent-not-ready",
	"fsx.csi.aws.com/agent-not-ready",
	"s3.csi.aws.com/agent-not-ready",
}

// removeAgentTaints is the node agents' DaemonSet pods on the Node named name: it deletes the
// agent taints the Node carries, as each agent does once it runs there, and leaves every other
// taint as it is. It reports whether the Node is done with (it has no agent taint left, or it is
// gone).
func removeAgentTaints(ctx context.Context, c client.Client, name string) (bool, error) {
	node := &corev1.Node{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("reading node %s for its agents, %w", name, err)
	}
	base := node.DeepCopy()
	kept := slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return slices.Contains(agentTaintKeys, t.Key) })
	if len(kept) == len(base.Spec.Taints) {
		return true, nil
	}
	node.Spec.Taints = kept
	// An optimistic-lock merge patch: the controller may be deleting its own taint at the same
	// time, and a stale list must not put that taint back.
	if err := c.Patch(ctx, node, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("deleting the agent taints of node %s, %w", name, err)
	}
	return true, nil
}
