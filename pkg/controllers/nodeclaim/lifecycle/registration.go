package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// ReasonUnregisteredTaintNotFound is the Registered reason of a Node that joined without the
// karpenter.sh/unregistered:NoExecute taint.
const ReasonUnregisteredTaintNotFound = "UnregisteredTaintNotFound"

// register matches the Node that carries the NodeClaim's providerID and, the first time, syncs the
// NodeClaim's labels, annotations and taints onto it and lifts the unregistered taint.
func (c *Controller) register(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	now := c.clock.Now()
	if !isTrue(nodeClaim, v1.ConditionTypeLaunched) {
		setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionUnknown, "AwaitingLaunch", "Waiting for the instance to launch", now)
		return reconcile.Result{}, nil
	}
	nodes, err := c.nodesFor(ctx, nodeClaim)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch len(nodes) {
	case 0:
		if isTrue(nodeClaim, v1.ConditionTypeRegistered) {
			// The Node was deleted after registering: not a join failure.
			return reconcile.Result{}, nil
		}
		return c.diagnose(ctx, nodeClaim, now)
	case 1:
	default:
		names := make([]string, 0, len(nodes))
		for i := range nodes {
			names = append(names, nodes[i].Name)
		}
		setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionFalse, "MultipleNodesFound",
			fmt.Sprintf("Nodes %v all have providerID %s; delete the ones that are not this instance", names, nodeClaim.Status.ProviderID), now)
		return reconcile.Result{}, nil
	}
	node := &nodes[0]
	if node.Labels[v1.NodeRegisteredLabelKey] != "true" {
		if !hasTaint(node.Spec.Taints, v1.UnregisteredNoExecuteTaint()) {
			// Certain: the kubelet registered without the taint its userData was to give it, and
			// another instance from the same userData would do the same.
			return reconcile.Result{}, c.failJoin(ctx, nodeClaim, ReasonUnregisteredTaintNotFound, unregisteredTaintMessage(node.Name), true, now)
		}
		if err := c.syncNode(ctx, nodeClaim, node); err != nil {
			return reconcile.Result{}, err
		}
	}
	nodeClaim.Status.NodeName = node.Name
	if !isTrue(nodeClaim, v1.ConditionTypeRegistered) {
		if err := c.clearJoinFailure(ctx, nodeClaim); err != nil {
			return reconcile.Result{}, err
		}
	}
	setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionTrue, "Registered", "Node "+node.Name+" registered", now)
	return reconcile.Result{}, nil
}

// unregisteredTaintMessage explains a Node that joined without the unregistered taint, and what to
// look at.
func unregisteredTaintMessage(nodeName string) string {
	return fmt.Sprintf("Node %s joined without the taint %s:NoExecute, so pods may land on it before its labels and taints are synced, and Joiner will not register it. "+
		"The instance's userData dropped or replaced the kubelet's --register-with-taints flag "+
		"(for example bootstrap.sh given --kubelet-extra-args=... as one word, or a nodeadm NodeConfig whose kubelet flags set their own taints; "+
		"agent taints such as Cilium's belong in the NodePool's spec.template.spec.startupTaints). "+
		"Run `joiner render-userdata` for the EC2NodeClass to see the userData the instance receives and the checks it fails",
		nodeName, v1.UnregisteredTaintKey)
}

// syncNode copies the NodeClaim's labels, annotations and taints onto the Node (union, unless the
// Node asks not to sync taints), removes the unregistered taint, adds the termination finalizer and
// the NodeClaim as owner, and labels the Node registered. One patch, with optimistic locking.
func (c *Controller) syncNode(ctx context.Context, nodeClaim *v1.NodeClaim, node *corev1.Node) error {
	stored := node.DeepCopy()
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	maps.Copy(node.Labels, nodeClaim.Labels)
	node.Labels[v1.NodeRegisteredLabelKey] = "true"
	if len(nodeClaim.Annotations) > 0 {
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		for k, v := range nodeClaim.Annotations {
			if k == v1.NodeClaimTerminationTimestampAnnotationKey {
				continue
			}
			node.Annotations[k] = v
		}
	}
	if node.Labels[v1.NodeDoNotSyncTaintsLabelKey] != "true" {
		for _, t := range slices.Concat(nodeClaim.Spec.Taints, nodeClaim.Spec.StartupTaints) {
			if !hasTaint(node.Spec.Taints, t) {
				node.Spec.Taints = append(node.Spec.Taints, t)
			}
		}
	}
	unregistered := v1.UnregisteredNoExecuteTaint()
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&unregistered) })
	controllerutil.AddFinalizer(node, v1.TerminationFinalizer)
	owner := metav1.OwnerReference{
		APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodeClaim", Name: nodeClaim.Name, UID: nodeClaim.UID,
		BlockOwnerDeletion: ptr.To(true),
	}
	if !slices.ContainsFunc(node.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owner.UID }) {
		node.OwnerReferences = append(node.OwnerReferences, owner)
	}
	log.FromContext(ctx).Info("Registering node", "node", klog.KObj(node))
	if err := c.kubeClient.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("registering node %s, %w", node.Name, err)
	}
	return nil
}
