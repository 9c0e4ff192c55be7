package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// ReasonKnownEphemeralTaintsExist is the Initialized reason, Unknown, of a Ready Node that still
// has a taint the control plane puts on a Node that is not ready (node.kubernetes.io/not-ready,
// which admission adds to every new Node): the node lifecycle controller lifts it within moments,
// so it is a wait, not a failure, and tells no event (it told two Warnings, Initialized and
// Ready False, for a fifth of the Nodes of a 1,000-pod scale-up, and a status write).
const ReasonKnownEphemeralTaintsExist = "KnownEphemeralTaintsExist"

// ephemeralTaintKeys are the taints the control plane puts on a Node that is not ready yet.
var ephemeralTaintKeys = []string{
	corev1.TaintNodeNotReady,
	corev1.TaintNodeUnreachable,
	"node.cloudprovider.kubernetes.io/uninitialized",
}

// initialize marks the NodeClaim Initialized once its Node is Ready, has no startup or
// not-ready taint left and advertises the extended resources the NodeClaim was made for.
func (c *Controller) initialize(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	now := c.clock.Now()
	if !isTrue(nodeClaim, v1.ConditionTypeRegistered) {
		setCondition(nodeClaim, v1.ConditionTypeInitialized, metav1.ConditionUnknown, "AwaitingRegistration", "Waiting for the node to register", now)
		return reconcile.Result{}, nil
	}
	node := &corev1.Node{}
	if err := c.kubeClient.Get(ctx, client.ObjectKey{Name: nodeClaim.Status.NodeName}, node); err != nil {
		if apierrors.IsNotFound(err) {
			setCondition(nodeClaim, v1.ConditionTypeInitialized, metav1.ConditionUnknown, "NodeNotFound", "Node "+nodeClaim.Status.NodeName+" not found", now)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("getting node %s, %w", nodeClaim.Status.NodeName, err)
	}
	if node.Labels[v1.NodeInitializedLabelKey] != "true" && !c.initializedNodes.has(nodeClaim.UID, node.UID) {
		if reason, message := uninitialized(nodeClaim, node); reason != "" {
			status := metav1.ConditionFalse
			if reason == ReasonKnownEphemeralTaintsExist {
				status = metav1.ConditionUnknown
			}
			setCondition(nodeClaim, v1.ConditionTypeInitialized, status, reason, message, now)
			return reconcile.Result{}, nil
		}
		stored := node.DeepCopy()
		node.Labels[v1.NodeInitializedLabelKey] = "true"
		log.FromContext(ctx).Info("Initializing node", "node", klog.KObj(node))
		if err := c.kubeClient.Patch(ctx, node, client.MergeFrom(stored)); err != nil {
			return reconcile.Result{}, fmt.Errorf("labelling node %s initialized, %w", node.Name, err)
		}
		c.initializedNodes.add(nodeClaim.UID, node.UID)
	}
	setCondition(nodeClaim, v1.ConditionTypeInitialized, metav1.ConditionTrue, "Initialized", "Node "+node.Name+" is ready", now)
	return reconcile.Result{}, nil
}

// uninitialized returns why the Node is not initialized yet, or "" when it is.
func uninitialized(nodeClaim *v1.NodeClaim, node *corev1.Node) (reason, message string) {
	ready := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
	if ready < 0 || node.Status.Conditions[ready].Status != corev1.ConditionTrue {
		return "NodeNotReady", notReadyMessage(node)
	}
	var left, ephemeral []corev1.Taint
	for _, t := range nodeClaim.Spec.StartupTaints {
		if hasTaint(node.Spec.Taints, t) {
			left = append(left, t)
		}
	}
	for _, t := range node.Spec.Taints {
		if slices.Contains(ephemeralTaintKeys, t.Key) {
			ephemeral = append(ephemeral, t)
		}
	}
	if len(left) > 0 {
		return "StartupTaintsExist", taintsLeftMessage(node, append(left, ephemeral...))
	}
	if len(ephemeral) > 0 {
		return ReasonKnownEphemeralTaintsExist, taintsLeftMessage(node, ephemeral)
	}
	var missing []string
	for name := range nodeClaim.Spec.Resources.Requests {
		if !isExtended(name) {
			continue
		}
		if q, ok := node.Status.Allocatable[name]; !ok || q.IsZero() {
			missing = append(missing, string(name))
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return "ResourceNotRegistered", fmt.Sprintf("Node %s does not advertise the requested resources %s yet", node.Name, strings.Join(missing, ", "))
	}
	return "", ""
}

// isExtended reports whether a resource is an extended resource (not cpu, memory, pods or
// storage), which a device plugin must advertise.
func isExtended(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage, corev1.ResourceStorage:
		return false
	}
	return !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
