package disruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// candidate is a node that underutilized consolidation may delete, with the pods that would move.
type candidate struct {
	pool *pool
	node *cluster.StateNode
	pods []*corev1.Pod
}

// consolidate deletes at most one node whose pods all fit on the other nodes: Karpenter's
// single-node consolidation when the replacement is none. Candidates go in order of fewest pods
// to move, then longest quiet; each is simulated against the nodes that stay (not gone, which
// were deleted earlier in the pass) and, if all its pods fit, checked again and deleted when its
// NodePool's Underutilized budget allows. It returns the NodeClaim deleted, or "".
func (c *Controller) consolidate(ctx context.Context, pools []*pool, nodes []*cluster.StateNode, gone map[string]bool, now time.Time) (string, error) {
	logger := log.FromContext(ctx)
	if !slices.ContainsFunc(pools, func(p *pool) bool { return len(p.underutilized) > 0 }) {
		c.metrics.eligible.WithLabelValues(reasonUnderutilized).Set(0)
		return "", nil
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := c.kube.List(ctx, &pdbs); err != nil {
		return "", fmt.Errorf("listing poddisruptionbudgets, %w", err)
	}
	var candidates []candidate
	for _, p := range pools {
		for _, sn := range p.underutilized {
			if reason := blockingMove(sn.Pods, pdbs.Items); reason != "" {
				logger.V(1).Info("Skipping underutilized candidate", "nodeclaim", klog.KObj(sn.NodeClaim), "reason", reason)
				continue
			}
			candidates = append(candidates, candidate{pool: p, node: sn, pods: reschedulable(sn.Pods)})
		}
	}
	c.metrics.eligible.WithLabelValues(reasonUnderutilized).Set(float64(len(candidates)))
	slices.SortStableFunc(candidates, func(a, b candidate) int {
		if d := len(a.pods) - len(b.pods); d != 0 {
			return d
		}
		if d := quietSince(a.node).Compare(quietSince(b.node)); d != 0 {
			return d
		}
		return strings.Compare(a.node.NodeClaim.Name, b.node.NodeClaim.Name)
	})
	var errs []error
	for _, cand := range candidates {
		p := cand.pool
		allowed, err := allowedDisruptions(p.nodePool, v1.DisruptionReasonUnderutilized, p.nodes, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if allowed-p.disrupting-p.deleted <= 0 {
			logger.V(1).Info("Disruption budget leaves no room", "nodepool", klog.KObj(p.nodePool), "reason", reasonUnderutilized,
				"allowed", allowed, "disrupting", p.disrupting+p.deleted)
			continue
		}
		others, leaving := receivers(nodes, cand.node.Name(), gone)
		reason, err := fitsElsewhere(cand.pods, leaving, others)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if reason != "" {
			logger.V(1).Info("Skipping underutilized candidate", "nodeclaim", klog.KObj(cand.node.NodeClaim), "reason", reason)
			continue
		}
		done, err := c.disrupt(ctx, p.nodePool, cand.node, c.underutilized(others, leaving))
		if err != nil {
			errs = append(errs, err)
		}
		if done {
			p.deleted++
			return cand.node.NodeClaim.Name, errors.Join(errs...)
		}
	}
	return "", errors.Join(errs...)
}

// underutilized is the method whose last check, on the candidate read again from the API server,
// requires it to be disruptable still, its pods unblocked by do-not-disrupt and by
// PodDisruptionBudgets read again too, and its pods to fit on others.
func (c *Controller) underutilized(others []*scheduling.Node, leaving []*corev1.Pod) method {
	return method{
		reason: v1.DisruptionReasonUnderutilized, label: reasonUnderutilized, consolidationType: consolidationSingle,
		message: "The node's pods fit on other nodes",
		check: func(ctx context.Context, fresh *cluster.StateNode) (string, error) {
			if reason := notDisruptable(fresh); reason != "" {
				return reason, nil
			}
			pods := reschedulable(fresh.Pods)
			if len(pods) == 0 {
				return "no pods to move: the node is empty", nil
			}
			var pdbs policyv1.PodDisruptionBudgetList
			if err := c.apiReader.List(ctx, &pdbs); err != nil {
				return "", fmt.Errorf("listing poddisruptionbudgets, %w", err)
			}
			if reason := blockingMove(fresh.Pods, pdbs.Items); reason != "" {
				return reason, nil
			}
			return fitsElsewhere(pods, leaving, others)
		},
	}
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

// blockingMove returns why the node's pods keep it, or "": a pod that is not finished or
// terminating and is annotated do-not-disrupt (DaemonSet and mirror pods included, as in
// blockingPod), or a pod to move that a PodDisruptionBudget allowing no disruption covers, or
// that more than one covers (the Eviction API refuses both, as Karpenter checks).
func blockingMove(pods []*corev1.Pod, pdbs []policyv1.PodDisruptionBudget) string {
	if reason := doNotDisruptPod(pods); reason != "" {
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

// doNotDisruptPod returns which pod that is not finished or terminating carries
// karpenter.sh/do-not-disrupt=true, or "".
func doNotDisruptPod(pods []*corev1.Pod) string {
	for _, pod := range pods {
		if finished(pod) || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		if pod.Annotations[v1.DoNotDisruptAnnotationKey] == "true" {
			return fmt.Sprintf("pod %s/%s has %s", pod.Namespace, pod.Name, v1.DoNotDisruptAnnotationKey)
		}
	}
	return ""
}

// receivers returns, as the solver sees them, the nodes that the pods of the node named except
// may move to: the other initialized, Ready, schedulable Nodes that are not being deleted and not
// gone. It also returns the pods that nodes being deleted or gone still hold and that will need
// room too, as Karpenter adds them to its simulation.
func receivers(nodes []*cluster.StateNode, except string, gone map[string]bool) ([]*scheduling.Node, []*corev1.Pod) {
	var out []*scheduling.Node
	var leaving []*corev1.Pod
	for _, sn := range nodes {
		if sn.Node == nil || sn.Name() == except {
			continue
		}
		if gone[sn.Name()] || sn.Deleting() {
			leaving = append(leaving, reschedulable(sn.Pods)...)
			continue
		}
		if !sn.Initialized() || sn.Node.Spec.Unschedulable || !ready(sn.Node) {
			continue
		}
		out = append(out, toSchedulingNode(sn))
	}
	return out, leaving
}

// toSchedulingNode converts an initialized Node with its bound pods. Unlike provisioning's
// conversion it needs no instance types: a Node that is up has its own allocatable (the
// NodeClaim's stands in while the Node reports none).
func toSchedulingNode(sn *cluster.StateNode) *scheduling.Node {
	n := &scheduling.Node{
		Name: sn.Node.Name, NodePool: sn.NodePool(), Labels: sn.Node.Labels, Taints: sn.Node.Spec.Taints,
		Allocatable: sn.Node.Status.Allocatable, Capacity: sn.Node.Status.Capacity, Pods: sn.Pods,
	}
	if len(n.Allocatable) == 0 && sn.NodeClaim != nil {
		n.Allocatable, n.Capacity = sn.NodeClaim.Status.Allocatable, sn.NodeClaim.Status.Capacity
	}
	return n
}

// fitsElsewhere returns why the pods, together with the leaving pods of nodes being deleted,
// cannot all go to the nodes, or "": Solve places them with no NodePool, so nothing new may be
// launched, honouring affinity, anti-affinity and topology spread against the nodes' pods. All
// must fit, so that a node is not removed on room that pods already moving will take.
func fitsElsewhere(pods, leaving []*corev1.Pod, nodes []*scheduling.Node) (string, error) {
	plan, err := scheduling.Solve(&scheduling.Input{Pods: slices.Concat(pods, leaving), Nodes: nodes})
	if err != nil {
		return "", fmt.Errorf("simulating the move of %d pods, %w", len(pods), err)
	}
	if len(plan.Unschedulable) > 0 || len(plan.NodeClaims) > 0 {
		if len(plan.Unschedulable) > 0 {
			u := plan.Unschedulable[0]
			return fmt.Sprintf("pod %s/%s fits on no other node (%d of %d pods to move do not)", u.Pod.Namespace, u.Pod.Name, len(plan.Unschedulable), len(pods)+len(leaving)), nil
		}
		return "the pods would need a new node", nil
	}
	return "", nil
}
