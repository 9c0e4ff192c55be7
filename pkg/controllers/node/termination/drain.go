package termination

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Priority tiers of a drain, evicted in this order: a tier starts once every pod of the tiers
// before it has left.
const (
	tierDefault = iota
	tierCritical
	tierDaemonSet
	tierCriticalDaemonSet
	tierCount
)

// drainStatus is what one pass of a drain saw and did.
type drainStatus struct {
	// waiting, blockedByPDB and doNotDisrupt count the pods that must still leave the node.
	waiting, blockedByPDB, doNotDisrupt int
	// until is when do-not-disrupt pods stop blocking, if ever: the node's termination time, or
	// sooner when every protecting pod's protection is a duration that ends before it.
	until        *time.Time
	requeueAfter time.Duration
}

func (d drainStatus) done() bool { return d.waiting+d.blockedByPDB+d.doNotDisrupt == 0 }

// message says what the drain waits for, for the Drained condition.
func (d drainStatus) message(nodeName string) string {
	var parts []string
	if d.waiting > 0 {
		parts = append(parts, fmt.Sprintf("%d pods terminating or waiting for their turn", d.waiting))
	}
	if d.blockedByPDB > 0 {
		parts = append(parts, fmt.Sprintf("%d pods whose eviction a PodDisruptionBudget refuses", d.blockedByPDB))
	}
	if d.doNotDisrupt > 0 {
		until := "the node's terminationGracePeriod, which is not set"
		if d.until != nil {
			until = d.until.UTC().Format(time.RFC3339)
		}
		parts = append(parts, fmt.Sprintf("%d pods annotated %s, until %s", d.doNotDisrupt, v1.DoNotDisruptAnnotationKey, until))
	}
	return fmt.Sprintf("Draining node %s: waiting for %s", nodeName, strings.Join(parts, "; "))
}

// drain makes one pass over the pods on the node: before deadline it evicts the lowest tier that
// still has pods, leaving the pods karpenter.sh/do-not-disrupt protects alone (v1.PodDoNotDisrupt:
// "true", or a duration the pod is younger than; it looks again when the first such duration
// ends); from deadline on it deletes every pod left.
func (c *Controller) drain(ctx context.Context, node *corev1.Node, deadline *time.Time) (drainStatus, error) {
	pods := &corev1.PodList{}
	if err := c.podReader.List(ctx, pods, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("spec.nodeName", node.Name)}); err != nil {
		return drainStatus{}, fmt.Errorf("listing pods on node %s, %w", node.Name, err)
	}
	now := c.clock.Now()
	status := drainStatus{until: deadline, requeueAfter: drainPoll}
	pastDeadline := deadline != nil && !now.Before(*deadline)
	var tiers [tierCount][]*corev1.Pod
	var protected protections
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !mustLeave(pod) {
			continue
		}
		switch {
		case pastDeadline:
			status.waiting++
			if err := c.deletePod(ctx, node, pod); err != nil {
				return drainStatus{}, err
			}
		case !pod.DeletionTimestamp.IsZero():
			status.waiting++
		default:
			if !protected.add(pod, now) {
				tiers[tier(pod)] = append(tiers[tier(pod)], pod)
			}
		}
	}
	evicting := false
	for _, pods := range tiers {
		if len(pods) == 0 {
			continue
		}
		if evicting {
			status.waiting += len(pods) // later tiers wait for the first non-empty one
			continue
		}
		evicting = true
		for _, pod := range pods {
			blocked, err := c.evict(ctx, node, pod)
			if err != nil {
				return drainStatus{}, err
			}
			if blocked {
				status.blockedByPDB++
				status.requeueAfter = evictionRetry
			} else {
				status.waiting++
			}
		}
	}
	if deadline != nil && !pastDeadline && deadline.Sub(now) < status.requeueAfter {
		status.requeueAfter = deadline.Sub(now)
	}
	protected.apply(&status, deadline, now)
	return status, nil
}

// protections are the karpenter.sh/do-not-disrupt protections of a drain's pods.
type protections struct {
	// pods counts the pods protected; forever is set when one's protection has no end.
	pods    int
	forever bool
	// first and last are when the first and the last protection by a duration end.
	first, last time.Time
}

// add reports whether the annotation protects the pod at now, and if so counts it.
func (p *protections) add(pod *corev1.Pod, now time.Time) bool {
	protected, until, _ := v1.PodDoNotDisrupt(pod, now)
	if !protected {
		return false
	}
	p.pods++
	switch {
	case until.IsZero():
		p.forever = true
	case p.first.IsZero() || until.Before(p.first):
		p.first = until
	}
	if until.After(p.last) {
		p.last = until
	}
	return true
}

// apply counts the protected pods in the status, and makes its until the end of the last
// protection when that is before the deadline, and its requeue no later than the first.
func (p *protections) apply(status *drainStatus, deadline *time.Time, now time.Time) {
	status.doNotDisrupt = p.pods
	if p.pods > 0 && !p.forever && (deadline == nil || p.last.Before(*deadline)) {
		status.until = &p.last
	}
	if !p.first.IsZero() && p.first.Sub(now) < status.requeueAfter {
		status.requeueAfter = p.first.Sub(now)
	}
}

// mustLeave reports whether the pod is one the drain must see gone: not finished, not a static
// (mirror) pod, and not one that tolerates the disrupted taint and so would come straight back.
func mustLeave(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	disrupted := v1.DisruptedNoScheduleTaint()
	for _, t := range pod.Spec.Tolerations {
		if t.ToleratesTaint(klog.Background(), &disrupted, false) {
			return false
		}
	}
	return true
}

// tier returns the pod's drain tier.
func tier(pod *corev1.Pod) int {
	critical := pod.Spec.PriorityClassName == "system-cluster-critical" || pod.Spec.PriorityClassName == "system-node-critical"
	daemon := false
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" {
			daemon = true
		}
	}
	switch {
	case daemon && critical:
		return tierCriticalDaemonSet
	case daemon:
		return tierDaemonSet
	case critical:
		return tierCritical
	}
	return tierDefault
}

// ReasonInvalidDoNotDisrupt is the reason of the Warning event on a pod whose
// karpenter.sh/do-not-disrupt value protects nothing, as Karpenter's.
const ReasonInvalidDoNotDisrupt = "InvalidDoNotDisruptAnnotation"

// evict asks the Eviction API to evict the pod and reports whether a PodDisruptionBudget refused.
// A pod whose karpenter.sh/do-not-disrupt value is invalid, and so protects nothing, is told so
// in an event first.
func (c *Controller) evict(ctx context.Context, node *corev1.Node, pod *corev1.Pod) (bool, error) {
	if _, _, err := v1.PodDoNotDisrupt(pod, c.clock.Now()); err != nil {
		c.recorder.Eventf(pod, node, corev1.EventTypeWarning, ReasonInvalidDoNotDisrupt, "Evict", "%s", err.Error())
	}
	log.FromContext(ctx).Info("Evicting pod", "pod", klog.KObj(pod))
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	err := c.kubeClient.SubResource("eviction").Create(ctx, pod, eviction)
	switch {
	case err == nil:
		c.recorder.Eventf(pod, node, corev1.EventTypeNormal, "Evicted", "Evict", "Evicted pod: node %s is being terminated", node.Name)
		return false, nil
	case apierrors.IsNotFound(err):
		return false, nil
	case apierrors.IsTooManyRequests(err):
		c.recorder.Eventf(pod, node, corev1.EventTypeWarning, "FailedDraining", "Evict", "Eviction refused, will retry: %s", err.Error())
		return true, nil
	}
	return false, fmt.Errorf("evicting pod %s/%s, %w", pod.Namespace, pod.Name, err)
}

// deletePod deletes a pod still on the node once the terminationGracePeriod is over.
func (c *Controller) deletePod(ctx context.Context, node *corev1.Node, pod *corev1.Pod) error {
	if !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	log.FromContext(ctx).Info("Deleting pod past the node's terminationGracePeriod", "pod", klog.KObj(pod))
	c.recorder.Eventf(pod, node, corev1.EventTypeWarning, "Deleted", "Delete", "Deleting pod: node %s reached the end of its terminationGracePeriod", node.Name)
	if err := c.kubeClient.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s/%s, %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
