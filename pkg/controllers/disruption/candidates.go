package disruption

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
)

// emptyAllowed reports whether the NodePool lets consolidation remove empty nodes: both policies
// do, unless consolidateAfter is Never.
func emptyAllowed(nodePool *v1.NodePool) bool {
	d := nodePool.Spec.Disruption
	if d.ConsolidateAfter.Duration == nil {
		return false
	}
	return d.ConsolidationPolicy == v1.ConsolidationPolicyWhenEmpty || d.ConsolidationPolicy == v1.ConsolidationPolicyWhenEmptyOrUnderutilized
}

// underutilizedAllowed reports whether the NodePool lets consolidation remove nodes whose pods fit
// elsewhere: only WhenEmptyOrUnderutilized does, unless consolidateAfter is Never.
func underutilizedAllowed(nodePool *v1.NodePool) bool {
	d := nodePool.Spec.Disruption
	return d.ConsolidateAfter.Duration != nil && d.ConsolidationPolicy == v1.ConsolidationPolicyWhenEmptyOrUnderutilized
}

// notCandidate returns why the node may not be removed as empty, or "" if it may: it must be
// disruptable (see notDisruptable) and empty (see blockingPod).
func notCandidate(sn *cluster.StateNode) string {
	if reason := notDisruptable(sn); reason != "" {
		return reason
	}
	return blockingPod(sn.Pods)
}

// notDisruptable returns why consolidation may not touch the node at all, or "": it must be a
// Node with its NodeClaim, neither being deleted, initialized, Consolidatable and without the
// do-not-disrupt annotation.
func notDisruptable(sn *cluster.StateNode) string {
	switch {
	case sn.NodeClaim == nil || sn.Node == nil:
		return "not a registered node of a NodeClaim"
	case sn.Deleting():
		return "being deleted"
	case !sn.Initialized() || !isTrue(sn.NodeClaim, v1.ConditionTypeInitialized):
		return "not initialized"
	case !isTrue(sn.NodeClaim, v1.ConditionTypeConsolidatable):
		return "not consolidatable"
	}
	return doNotDisrupt(sn.Node, sn.NodeClaim)
}

// doNotDisrupt returns which of the objects carries karpenter.sh/do-not-disrupt=true, or "".
func doNotDisrupt(node *corev1.Node, nodeClaim *v1.NodeClaim) string {
	if node.Annotations[v1.DoNotDisruptAnnotationKey] == "true" {
		return "node has " + v1.DoNotDisruptAnnotationKey
	}
	if nodeClaim.Annotations[v1.DoNotDisruptAnnotationKey] == "true" {
		return "nodeclaim has " + v1.DoNotDisruptAnnotationKey
	}
	return ""
}

// blockingPod returns why the pods keep the node from being empty, or "". Pods that are finished
// or terminating are gone already. Any other pod annotated do-not-disrupt blocks, DaemonSet and
// mirror pods included (as in Karpenter). Any other pod that is not a DaemonSet's or a mirror
// pod would have to be rescheduled, so the node is not empty.
func blockingPod(pods []*corev1.Pod) string {
	for _, pod := range pods {
		if finished(pod) || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		if pod.Annotations[v1.DoNotDisruptAnnotationKey] == "true" {
			return fmt.Sprintf("pod %s/%s has %s", pod.Namespace, pod.Name, v1.DoNotDisruptAnnotationKey)
		}
		if !ownedByDaemonSet(pod) && !mirror(pod) {
			return fmt.Sprintf("pod %s/%s would have to be rescheduled", pod.Namespace, pod.Name)
		}
	}
	return ""
}

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func ownedByDaemonSet(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "DaemonSet"
}

func mirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

func isTrue(nodeClaim *v1.NodeClaim, conditionType string) bool {
	return meta.IsStatusConditionTrue(nodeClaim.Status.Conditions, conditionType)
}

// ready reports whether the Node's Ready condition is True.
func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
