package disruption

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	return d.ConsolidationPolicy == v1.ConsolidationPolicyWhenEmpty || d.ConsolidationPolicy == v1.ConsolidationPolicyWhenEmptyOrUnderutilized ||
		d.ConsolidationPolicy == v1.ConsolidationPolicyBalanced
}

// underutilizedAllowed reports whether the NodePool lets consolidation remove nodes whose pods fit
// elsewhere: only WhenEmptyOrUnderutilized does, unless consolidateAfter is Never.
func underutilizedAllowed(nodePool *v1.NodePool) bool {
	d := nodePool.Spec.Disruption
	return d.ConsolidateAfter.Duration != nil &&
		(d.ConsolidationPolicy == v1.ConsolidationPolicyWhenEmptyOrUnderutilized || d.ConsolidationPolicy == v1.ConsolidationPolicyBalanced)
}

// notInitialized is the note of a node not initialized yet. It is kept (explain shows it) but
// not told as an event: every new node has it until its NodeClaim's Initialized event, so it
// told nothing, once per node of a scale-up.
const notInitialized = "not initialized"

// notDisruptable returns why no method may touch the node at all, or "": it must be a Node
// with its NodeClaim, neither being deleted, initialized and without the do-not-disrupt
// annotation on either.
func notDisruptable(sn *cluster.StateNode) string {
	switch {
	case sn.NodeClaim == nil || sn.Node == nil:
		return "not a registered node of a NodeClaim"
	case sn.Deleting():
		return "being deleted"
	case !sn.Initialized() || !isTrue(sn.NodeClaim, v1.ConditionTypeInitialized):
		return notInitialized
	}
	return doNotDisrupt(sn.Node, sn.NodeClaim)
}

// notConsolidatable returns why consolidation may not take the node, or "": its NodePool's
// policy must allow it (WhenEmpty only empty nodes), consolidateAfter must not be Never, and
// the NodeClaim must be Consolidatable (quiet for consolidateAfter; the message says how long
// is left).
func notConsolidatable(nodePool *v1.NodePool, sn *cluster.StateNode, empty bool, now time.Time) string {
	d := nodePool.Spec.Disruption
	switch {
	case d.ConsolidateAfter.Duration == nil:
		return fmt.Sprintf("nodepool %s has consolidateAfter: Never", nodePool.Name)
	case !empty && !underutilizedAllowed(nodePool):
		return fmt.Sprintf("nodepool %s has consolidationPolicy %s and the node has pods", nodePool.Name, d.ConsolidationPolicy)
	case empty && !emptyAllowed(nodePool):
		return fmt.Sprintf("nodepool %s has consolidationPolicy %q", nodePool.Name, d.ConsolidationPolicy)
	case !isTrue(sn.NodeClaim, v1.ConditionTypeConsolidatable):
		return "not consolidatable yet: " + timeLeft(sn.NodeClaim, *d.ConsolidateAfter.Duration, now)
	}
	return ""
}

// timeLeft says how long until the NodeClaim has been quiet (no pod bound or removed since it
// was initialized) for consolidateAfter, as nodeclaim/consolidatable decides.
func timeLeft(nc *v1.NodeClaim, consolidateAfter time.Duration, now time.Time) string {
	initialized := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeInitialized)
	if initialized == nil {
		return "not initialized"
	}
	quiet := initialized.LastTransitionTime.Time
	if last := nc.Status.LastPodEventTime.Time; last.After(quiet) {
		quiet = last
	}
	left := quiet.Add(consolidateAfter).Sub(now)
	if left <= 0 {
		return fmt.Sprintf("quiet for consolidateAfter %s, waiting for the Consolidatable condition", consolidateAfter)
	}
	return fmt.Sprintf("%s left of consolidateAfter %s since the last pod was bound or removed", left.Round(time.Second), consolidateAfter)
}

// doNotDisrupt returns which of the objects carries karpenter.sh/do-not-disrupt=true, or "".
// Only "true" protects a Node or NodeClaim (v1.ObjectDoNotDisrupt); invalidDoNotDisrupt tells
// other values.
func doNotDisrupt(node *corev1.Node, nodeClaim *v1.NodeClaim) string {
	if ok, _ := v1.ObjectDoNotDisrupt(node.Annotations); ok {
		return "node has " + v1.DoNotDisruptAnnotationKey
	}
	if ok, _ := v1.ObjectDoNotDisrupt(nodeClaim.Annotations); ok {
		return "nodeclaim has " + v1.DoNotDisruptAnnotationKey
	}
	return ""
}

// invalidDoNotDisrupt is an object whose karpenter.sh/do-not-disrupt value protects nothing
// because it is none of the accepted forms; the controller tells it in an event on the object.
type invalidDoNotDisrupt struct {
	object client.Object
	err    error
}

// invalidDoNotDisrupts returns the node's Node, NodeClaim and pods (not finished or
// terminating) whose karpenter.sh/do-not-disrupt value is invalid.
func invalidDoNotDisrupts(sn *cluster.StateNode, now time.Time) []invalidDoNotDisrupt {
	var out []invalidDoNotDisrupt
	if sn.Node != nil {
		if _, err := v1.ObjectDoNotDisrupt(sn.Node.Annotations); err != nil {
			out = append(out, invalidDoNotDisrupt{sn.Node, err})
		}
	}
	if sn.NodeClaim != nil {
		if _, err := v1.ObjectDoNotDisrupt(sn.NodeClaim.Annotations); err != nil {
			out = append(out, invalidDoNotDisrupt{sn.NodeClaim, err})
		}
	}
	for _, pod := range sn.Pods {
		if finished(pod) || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		if _, _, err := v1.PodDoNotDisrupt(pod, now); err != nil {
			out = append(out, invalidDoNotDisrupt{pod, err})
		}
	}
	return out
}

// reschedulable returns the pods that would have to move if the node went: not finished, not
// terminating, not a DaemonSet's and not mirror pods.
func reschedulable(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range pods {
		if finished(pod) || !pod.DeletionTimestamp.IsZero() || ownedByDaemonSet(pod) || mirror(pod) {
			continue
		}
		out = append(out, pod)
	}
	return out
}

// eventual reports whether the NodeClaim's pods do not keep it from drift: it has a
// terminationGracePeriod, so termination drains it within that time whatever do-not-disrupt
// pods and PodDisruptionBudgets say (Karpenter's eventual disruption). Consolidation and the
// do-not-disrupt annotation of the Node or NodeClaim still keep it.
func eventual(nodeClaim *v1.NodeClaim) bool {
	return nodeClaim.Spec.TerminationGracePeriod != nil
}

// blockingMove returns why the node's pods keep it at now, or "": a pod that is not finished or
// terminating and that karpenter.sh/do-not-disrupt protects (DaemonSet and mirror pods
// included, as in blockingPod), or a pod to move that a PodDisruptionBudget allowing no
// disruption covers, or that more than one covers (the Eviction API refuses both, as Karpenter
// checks).
func blockingMove(pods []*corev1.Pod, pdbs []policyv1.PodDisruptionBudget, now time.Time) string {
	if reason, _ := doNotDisruptPod(pods, now); reason != "" {
		return reason
	}
	for _, pod := range reschedulable(pods) {
		var covering []string
		for i := range pdbs {
			pdb := &pdbs[i]
			if pdb.Namespace != pod.Namespace {
				continue
			}
			selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil {
				return fmt.Sprintf("poddisruptionbudget %s/%s has a selector that cannot be read: %v", pdb.Namespace, pdb.Name, err)
			}
			if !selector.Matches(labels.Set(pod.Labels)) {
				continue
			}
			if pdb.Status.DisruptionsAllowed <= 0 {
				return fmt.Sprintf("poddisruptionbudget %s/%s allows no disruption of pod %s", pdb.Namespace, pdb.Name, pod.Name)
			}
			covering = append(covering, pdb.Name)
		}
		if len(covering) > 1 {
			return fmt.Sprintf("pod %s/%s is covered by more than one poddisruptionbudget: %s", pod.Namespace, pod.Name, strings.Join(covering, ", "))
		}
	}
	return ""
}

// doNotDisruptPod returns which pod that is not finished or terminating karpenter.sh/
// do-not-disrupt protects at now (v1.PodDoNotDisrupt), or "", and the earliest time a
// protection by a duration among them ends (zero if none does): the node may become a
// candidate then.
func doNotDisruptPod(pods []*corev1.Pod, now time.Time) (string, time.Time) {
	why := ""
	var ends time.Time
	for _, pod := range pods {
		if finished(pod) || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		protected, until, _ := v1.PodDoNotDisrupt(pod, now)
		if !protected {
			continue
		}
		if !until.IsZero() && (ends.IsZero() || until.Before(ends)) {
			ends = until
		}
		if why != "" {
			continue
		}
		value := pod.Annotations[v1.DoNotDisruptAnnotationKey]
		switch {
		case value == "true":
			why = fmt.Sprintf("pod %s/%s has %s", pod.Namespace, pod.Name, v1.DoNotDisruptAnnotationKey)
		case until.IsZero():
			why = fmt.Sprintf("pod %s/%s has %s=%s and has not started", pod.Namespace, pod.Name, v1.DoNotDisruptAnnotationKey, value)
		default:
			why = fmt.Sprintf("pod %s/%s has %s=%s, until %s", pod.Namespace, pod.Name, v1.DoNotDisruptAnnotationKey, value, until.UTC().Format(time.RFC3339))
		}
	}
	return why, ends
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
