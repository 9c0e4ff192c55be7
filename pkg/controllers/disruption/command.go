package disruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

// Event reasons, as Karpenter's.
const (
	ReasonDisruptionTerminating = "DisruptionTerminating"
	ReasonDisruptionLaunching   = "DisruptionLaunching"
	ReasonDisruptionBlocked     = "DisruptionBlocked"
	ReasonDisruptionAbandoned   = "DisruptionAbandoned"
)

// reasonExpired is the DisruptionReason condition's reason, and the metrics' reason, of expiry.
const (
	reasonExpired = "Expired"
	labelExpired  = "expired"
)

// execute carries out a validated command: it taints the candidates karpenter.sh/disrupted:
// NoSchedule, so that no pod is bound to them from here on, then checks each again against the
// API server (not the cache): still disruptable, no do-not-disrupt pod, no PodDisruptionBudget
// in the way, and no pod to move that the decision did not plan for (bound before the taint).
// If any check fails the candidates are untainted and the command dropped. Then it deletes the
// candidates, or creates the replacements and leaves the command in flight (see advance).
func (c *Controller) execute(ctx context.Context, cmd *command) (deleted, launched []string, err error) {
	logger := log.FromContext(ctx).WithValues("nodes", cmd.nodeNames(), "decision", cmd.describe())
	var tainted []*cluster.StateNode
	abandon := func(why string, err error) ([]string, []string, error) {
		logger.Info("Abandoning disruption at the last check", "reason", why)
		for _, cand := range cmd.candidates {
			c.recorder.Eventf(cand.node.NodeClaim, nil, corev1.EventTypeNormal, ReasonDisruptionAbandoned, "Disrupt", "Abandoned disruption (%s): %s", cmd.method.reason, why)
		}
		errs := []error{err, c.untaint(ctx, tainted)}
		for _, cand := range cmd.candidates {
			errs = append(errs, c.forgetCommand(ctx, cand.node.NodeClaim))
		}
		return nil, nil, errors.Join(errs...)
	}
	for _, cand := range cmd.candidates {
		if err := c.taint(ctx, cand.node.Node); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return abandon(fmt.Sprintf("node %s changed", cand.node.Name()), nil)
			}
			return abandon("tainting failed", err)
		}
		tainted = append(tainted, cand.node)
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := c.apiReader.List(ctx, &pdbs); err != nil {
		return abandon("listing poddisruptionbudgets failed", fmt.Errorf("listing poddisruptionbudgets, %w", err))
	}
	for _, cand := range cmd.candidates {
		why, err := c.lastCheck(ctx, cmd, cand, pdbs.Items)
		if err != nil {
			return abandon("reading the candidate failed", err)
		}
		if why != "" {
			return abandon(why, nil)
		}
	}
	c.countDecision(cmd.decision(), cmd.method, candidatePools(cmd)...)
	if len(cmd.replacements) == 0 {
		deleted, err := c.deleteAll(ctx, cmd)
		return deleted, nil, err
	}
	logger.Info("Launching replacements")
	// The replacements are named here and recorded on the candidates before they are created,
	// so that a leader killed in between leaves a record a new leader can finish (record.go).
	var replacements []*v1.NodeClaim
	for i := range cmd.replacements {
		planned := &cmd.replacements[i]
		np, ok := c.nodePoolOf(ctx, planned.NodePool)
		if !ok {
			return abandon(fmt.Sprintf("nodepool %s of the replacement is gone", planned.NodePool), nil)
		}
		nc := provisioning.NewNodeClaim(np, planned)
		nc.Name, nc.GenerateName = nc.GenerateName+utilrand.String(5), ""
		replacements = append(replacements, nc)
		cmd.launched = append(cmd.launched, nc.Name)
	}
	cmd.launchedAt = c.clock.Now()
	if err := c.recordCommand(ctx, cmd); err != nil {
		return abandon("recording the command failed", err)
	}
	for _, nc := range replacements {
		if err := c.kube.Create(ctx, nc); err != nil {
			return abandon("creating the replacement failed", fmt.Errorf("launching replacement nodeclaim, %w", err))
		}
		c.metrics.nodeClaimsCreated.WithLabelValues(cmd.method.label, nc.Labels[v1.NodePoolLabelKey], provisioning.MinValuesRelaxed(nc)).Inc()
	}
	for _, cand := range cmd.candidates {
		c.recorder.Eventf(cand.node.NodeClaim, nil, corev1.EventTypeNormal, ReasonDisruptionLaunching, "Disrupt", "Launching NodeClaim %v: %s", cmd.launched, cmd.describe())
	}
	c.inflight = append(c.inflight, cmd)
	return nil, cmd.launched, nil
}

// nodePoolOf reads the NodePool named.
func (c *Controller) nodePoolOf(ctx context.Context, name string) (*v1.NodePool, bool) {
	np := &v1.NodePool{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
		return nil, false
	}
	return np, np.DeletionTimestamp.IsZero()
}

// lastCheck returns why the candidate, read again from the API server, may no longer go, or "".
func (c *Controller) lastCheck(ctx context.Context, cmd *command, cand *candidate, pdbs []policyv1.PodDisruptionBudget) (string, error) {
	fresh, err := c.fresh(ctx, cand.node)
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("node %s is gone", cand.node.Name()), nil
	}
	if err != nil {
		return "", err
	}
	if why := notDisruptable(fresh); why != "" {
		return fmt.Sprintf("node %s: %s", fresh.Name(), why), nil
	}
	if why := blockingMove(fresh.Pods, pdbs, c.clock.Now()); why != "" && (cmd.method != methodDrifted || !eventual(fresh.NodeClaim)) {
		return why, nil
	}
	switch cmd.method {
	case methodDrifted:
		if !isTrue(fresh.NodeClaim, v1.ConditionTypeDrifted) {
			return fmt.Sprintf("node %s is no longer drifted", fresh.Name()), nil
		}
	default:
		if !isTrue(fresh.NodeClaim, v1.ConditionTypeConsolidatable) {
			return fmt.Sprintf("node %s is no longer consolidatable", fresh.Name()), nil
		}
	}
	planned := map[types.UID]bool{}
	for _, pod := range cand.pods {
		planned[pod.UID] = true
	}
	for _, pod := range reschedulable(fresh.Pods) {
		if !planned[pod.UID] {
			return fmt.Sprintf("pod %s/%s was bound to node %s after the decision", pod.Namespace, pod.Name, fresh.Name()), nil
		}
	}
	return "", nil
}

// advance moves an in-flight command on: once every replacement is Initialized it deletes the
// candidates; if a replacement is gone or being deleted, or ReplacementTimeout passed, it
// untaints the candidates and keeps them. It reports whether the command is finished.
func (c *Controller) advance(ctx context.Context, cmd *command, now time.Time) (bool, []string, error) {
	logger := log.FromContext(ctx).WithValues("nodes", cmd.nodeNames(), "replacements", cmd.launched)
	initialized := 0
	failed := ""
	for _, name := range cmd.launched {
		nc := &v1.NodeClaim{}
		err := c.kube.Get(ctx, nodeClaimKey(name), nc)
		switch {
		case apierrors.IsNotFound(err):
			failed = fmt.Sprintf("replacement %s is gone", name)
		case err != nil:
			return false, nil, fmt.Errorf("getting replacement nodeclaim %s, %w", name, err)
		case !nc.DeletionTimestamp.IsZero():
			failed = fmt.Sprintf("replacement %s is being deleted", name)
		case isTrue(nc, v1.ConditionTypeInitialized):
			initialized++
		}
	}
	if failed == "" && initialized < len(cmd.launched) && now.Sub(cmd.launchedAt) >= ReplacementTimeout {
		failed = fmt.Sprintf("replacements not initialized within %s", ReplacementTimeout)
	}
	if failed != "" {
		// A rollback that did not go through keeps the command, so the next pass tries again:
		// a node left tainted counts against its NodePool's budget.
		if err := c.untaint(ctx, nodesOf(cmd)); err != nil {
			return false, nil, err
		}
		logger.Info("Replacement failed, keeping the nodes", "reason", failed)
		for _, cand := range cmd.candidates {
			c.recorder.Eventf(cand.node.NodeClaim, nil, corev1.EventTypeWarning, ReasonDisruptionAbandoned, "Disrupt", "Abandoned disruption (%s): %s; the node is kept", cmd.method.reason, failed)
		}
		return true, nil, nil
	}
	if initialized < len(cmd.launched) {
		return false, nil, nil
	}
	logger.Info("Replacements initialized, deleting the nodes")
	deleted, err := c.deleteAll(ctx, cmd)
	return true, deleted, err
}

func nodesOf(cmd *command) []*cluster.StateNode {
	out := make([]*cluster.StateNode, len(cmd.candidates))
	for i, cand := range cmd.candidates {
		out[i] = cand.node
	}
	return out
}

// deleteAll deletes the command's candidates; one that changed meanwhile is untainted and kept.
func (c *Controller) deleteAll(ctx context.Context, cmd *command) ([]string, error) {
	var deleted []string
	var errs []error
	for _, cand := range cmd.candidates {
		done, err := c.deleteNodeClaim(ctx, cand.node.NodeClaim, string(cmd.method.reason), cmd.method.label, consolidationPolicy(cmd.method, cand), cmd.describe())
		errs = append(errs, err)
		if done {
			deleted = append(deleted, cand.name())
			c.recorder.Eventf(cand.node.Node, nil, corev1.EventTypeNormal, ReasonDisruptionTerminating, "Disrupt", "Disrupting Node: %s", cmd.describe())
			continue
		}
		errs = append(errs, c.untaint(ctx, []*cluster.StateNode{cand.node}))
	}
	return deleted, errors.Join(errs...)
}

// deleteNodeClaim reads the NodeClaim from the API server, records DisruptionReason=True/reason
// on it by a patch with optimistic locking, and deletes it with a resourceVersion
// precondition, so that a change in between stops it. It reports whether it was deleted. label
// and policy are the reason and consolidation_policy karpenter_nodeclaims_disrupted_total counts
// it under.
func (c *Controller) deleteNodeClaim(ctx context.Context, stale *v1.NodeClaim, reason, label, policy, message string) (bool, error) {
	logger := log.FromContext(ctx).WithValues("nodeclaim", klog.KObj(stale))
	nodeClaim := &v1.NodeClaim{}
	if err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(stale), nodeClaim); err != nil {
		return false, client.IgnoreNotFound(fmt.Errorf("getting nodeclaim %s, %w", stale.Name, err))
	}
	if !nodeClaim.DeletionTimestamp.IsZero() {
		return false, nil
	}
	stored := nodeClaim.DeepCopy()
	meta.SetStatusCondition(&nodeClaim.Status.Conditions, metav1.Condition{
		Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: reason,
		Message: message, ObservedGeneration: nodeClaim.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
	logger.Info("Disrupting node", "reason", label, "decision", message)
	if err := c.kube.Status().Patch(ctx, nodeClaim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			logger.V(1).Info("Skipping candidate that changed", "reason", err.Error())
			return false, nil
		}
		return false, fmt.Errorf("recording disruption reason on nodeclaim %s, %w", nodeClaim.Name, err)
	}
	precondition := client.Preconditions{UID: &nodeClaim.UID, ResourceVersion: &nodeClaim.ResourceVersion}
	if err := c.kube.Delete(ctx, nodeClaim, precondition); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			logger.V(1).Info("Skipping candidate that changed", "reason", err.Error())
			return false, nil
		}
		return false, fmt.Errorf("deleting nodeclaim %s, %w", nodeClaim.Name, err)
	}
	nodePool := nodeClaim.Labels[v1.NodePoolLabelKey]
	c.recorder.Eventf(nodeClaim, nil, corev1.EventTypeNormal, ReasonDisruptionTerminating, "Disrupt", "Disrupting NodeClaim: %s", message)
	if nodePool != "" {
		c.recorder.Eventf(&v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: nodePool}}, nil, corev1.EventTypeNormal, ReasonDisruptionTerminating, "Disrupt",
			"Disrupting NodeClaim %s: %s", nodeClaim.Name, message)
	}
	c.metrics.nodeClaimsDisrupted.WithLabelValues(label, nodePool, nodeClaim.Labels[v1.CapacityTypeLabelKey], policy, joinermetrics.TerminationMode(nodeClaim)).Inc()
	return true, nil
}

// taint adds karpenter.sh/disrupted:NoSchedule to the Node, read from the API server and patched
// with optimistic locking, reading it again on a conflict. The pass's copy of the Node is not
// the one patched: the kubelet updates its Node's status every few seconds, so a copy one
// validation period old nearly always conflicts (on a loaded 1,000-pod cluster every command
// was abandoned that way, again and again). What matters about the node since the decision is
// checked after the taint, against the API server (lastCheck).
func (c *Controller) taint(ctx context.Context, stale *corev1.Node) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(stale), node); err != nil {
			return err
		}
		if disrupted(node) {
			return nil
		}
		patched := node.DeepCopy()
		patched.Spec.Taints = append(patched.Spec.Taints, v1.DisruptedNoScheduleTaint())
		return c.kube.Patch(ctx, patched, client.MergeFromWithOptions(node, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("tainting node %s, %w", stale.Name, err)
	}
	return nil
}

// untaint removes karpenter.sh/disrupted:NoSchedule from the nodes that are not being deleted,
// reading each from the API server and patching it with optimistic locking, reading it again on
// a conflict: the kubelet's heartbeats change a Node every few seconds, and a rollback that gave
// up on a conflict left the node tainted, counted against its NodePool's budget as disrupting,
// until the next leader's first pass. It also forgets the command recorded on the nodes'
// NodeClaims (commandAnnotationKey).
func (c *Controller) untaint(ctx context.Context, nodes []*cluster.StateNode) error {
	var errs []error
	for _, sn := range nodes {
		if sn.NodeClaim != nil {
			nc := &v1.NodeClaim{}
			if err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(sn.NodeClaim), nc); err == nil && !nc.DeletionTimestamp.IsZero() {
				continue
			}
			errs = append(errs, c.forgetCommand(ctx, sn.NodeClaim))
		}
		if sn.Node == nil {
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node := &corev1.Node{}
			if err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(sn.Node), node); err != nil {
				return client.IgnoreNotFound(err)
			}
			if !node.DeletionTimestamp.IsZero() || !disrupted(node) {
				return nil
			}
			patched := node.DeepCopy()
			taint := v1.DisruptedNoScheduleTaint()
			patched.Spec.Taints = slices.DeleteFunc(patched.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
			return c.kube.Patch(ctx, patched, client.MergeFromWithOptions(node, client.MergeFromWithOptimisticLock{}))
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("untainting node %s, %w", sn.Node.Name, err))
		}
	}
	return errors.Join(errs...)
}

// expire deletes the NodeClaims older than their expireAfter: forcefully, whatever the
// budgets, do-not-disrupt and PodDisruptionBudgets say (termination drains the node, honouring
// them until the NodeClaim's terminationGracePeriod, then deletes it). It returns those deleted
// and how long until the next NodeClaim expires (0 if none will).
func (c *Controller) expire(ctx context.Context, now time.Time) ([]string, time.Duration, error) {
	nodes, err := c.cluster.Nodes(ctx)
	if err != nil {
		return nil, 0, err
	}
	var deleted []string
	var errs []error
	var next time.Duration
	for _, sn := range nodes {
		nc := sn.NodeClaim
		if nc == nil || !nc.DeletionTimestamp.IsZero() || nc.Spec.ExpireAfter.Duration == nil {
			continue
		}
		expireAfter := *nc.Spec.ExpireAfter.Duration
		left := nc.CreationTimestamp.Add(expireAfter).Sub(now)
		if left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		done, err := c.deleteNodeClaim(ctx, nc, reasonExpired, labelExpired, "", fmt.Sprintf("Expired, older than expireAfter %s", expireAfter))
		errs = append(errs, err)
		if done {
			deleted = append(deleted, nc.Name)
			c.countDecision("delete", method{label: labelExpired}, nc.Labels[v1.NodePoolLabelKey])
		}
	}
	return deleted, next, errors.Join(errs...)
}

// fresh reads the candidate's NodeClaim, Node and pods from the API server.
func (c *Controller) fresh(ctx context.Context, sn *cluster.StateNode) (*cluster.StateNode, error) {
	nodeClaim := &v1.NodeClaim{}
	if err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(sn.NodeClaim), nodeClaim); err != nil {
		return nil, fmt.Errorf("getting nodeclaim %s, %w", sn.NodeClaim.Name, err)
	}
	node := &corev1.Node{}
	if err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(sn.Node), node); err != nil {
		return nil, fmt.Errorf("getting node %s, %w", sn.Node.Name, err)
	}
	var pods corev1.PodList
	if err := c.apiReader.List(ctx, &pods, client.MatchingFields{cluster.PodNodeNameField: node.Name}); err != nil {
		return nil, fmt.Errorf("listing pods of node %s, %w", node.Name, err)
	}
	out := &cluster.StateNode{Node: node, NodeClaim: nodeClaim}
	for i := range pods.Items {
		if !finished(&pods.Items[i]) {
			out.Pods = append(out.Pods, &pods.Items[i])
		}
	}
	return out, nil
}
