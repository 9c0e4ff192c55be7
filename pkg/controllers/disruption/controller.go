package disruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
)

const name = "disruption"

// DefaultInterval is how often a disruption pass runs.
const DefaultInterval = 10 * time.Second

// Label values of the metrics, as Karpenter writes them.
const (
	reasonEmpty         = "empty"
	reasonUnderutilized = "underutilized"
	decisionDelete      = "delete"
	consolidationEmpty  = "empty"
	consolidationSingle = "single"
)

// Controller removes empty nodes and nodes whose pods fit elsewhere. Build it with NewController.
type Controller struct {
	kube      client.Client
	apiReader client.Reader
	cluster   *cluster.Cluster
	clock     clock.WithTicker
	recorder  events.EventRecorder
	metrics   *metrics

	// Interval may be changed before Register; NewController sets DefaultInterval.
	Interval time.Duration
}

// NewController returns the disruption controller. The view finds candidates; kube writes the
// NodeClaim's DisruptionReason and deletes it; the last check before deleting reads through kube
// until Register replaces that with the manager's uncached reader. Metrics go to reg.
func NewController(kube client.Client, view *cluster.Cluster, clk clock.WithTicker, recorder events.EventRecorder, reg prometheus.Registerer) (*Controller, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &Controller{kube: kube, apiReader: kube, cluster: view, clock: clk, recorder: recorder, metrics: m, Interval: DefaultInterval}, nil
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return name }

// Register runs the controller on the leader once mgr starts.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	c.apiReader = mgr.GetAPIReader()
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader disrupts.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs a pass at once and then every Interval until ctx ends. A failed pass is logged and
// the next tick tries again.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName(name)
	ctx = log.IntoContext(ctx, logger)
	ticker := c.clock.NewTicker(c.Interval)
	defer ticker.Stop()
	for {
		if _, err := c.Disrupt(ctx); err != nil {
			logger.Error(err, "Disrupting nodes")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// pool is one NodePool's part of a pass.
type pool struct {
	nodePool *v1.NodePool
	// nodes counts the NodePool's initialized nodes, disrupting those being deleted or not Ready,
	// deleted those this pass deleted.
	nodes, disrupting, deleted int
	// candidates are empty; underutilized have pods to move.
	candidates, underutilized []*cluster.StateNode
}

// method is what differs between the ways a node is disrupted.
type method struct {
	reason v1.DisruptionReason
	// label is the metrics' reason, consolidationType their consolidation_type.
	label, consolidationType string
	// message goes on the DisruptionReason condition.
	message string
	// check returns why the candidate, read again from the API server, may no longer go, or "".
	check func(ctx context.Context, fresh *cluster.StateNode) (string, error)
}

var empty = method{
	reason: v1.DisruptionReasonEmpty, label: reasonEmpty, consolidationType: consolidationEmpty, message: "The node is empty",
	check: func(_ context.Context, fresh *cluster.StateNode) (string, error) { return notCandidate(fresh), nil },
}

// Disrupt runs one pass: it finds the empty nodes that may go and deletes as many NodeClaims of
// each NodePool as its Empty budgets allow, then deletes at most one node whose pods all fit on
// the nodes that stay (see consolidate), returning the names of the NodeClaims deleted. Errors of
// single nodes do not stop the pass; they are joined in the error returned.
func (c *Controller) Disrupt(ctx context.Context) ([]string, error) {
	pools, nodes, err := c.pools(ctx)
	if err != nil {
		return nil, err
	}
	now := c.clock.Now()
	deleted, gone, errs := c.removeEmpty(ctx, pools, now)
	name, err := c.consolidate(ctx, pools, nodes, gone, now)
	if err != nil {
		errs = append(errs, err)
	}
	if name != "" {
		deleted = append(deleted, name)
	}
	return deleted, errors.Join(errs...)
}

// removeEmpty deletes the empty candidates as the budgets allow. It returns the NodeClaims deleted,
// the names of their nodes and the errors of single nodes.
func (c *Controller) removeEmpty(ctx context.Context, pools []*pool, now time.Time) ([]string, map[string]bool, []error) {
	var deleted []string
	gone := map[string]bool{}
	var errs []error
	eligible := 0
	for _, p := range pools {
		eligible += len(p.candidates)
		if len(p.candidates) == 0 {
			continue
		}
		allowed, err := allowedDisruptions(p.nodePool, v1.DisruptionReasonEmpty, p.nodes, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		left := allowed - p.disrupting
		if left <= 0 {
			log.FromContext(ctx).V(1).Info("Disruption budget leaves no room", "nodepool", klog.KObj(p.nodePool),
				"allowed", allowed, "disrupting", p.disrupting, "candidates", len(p.candidates))
			continue
		}
		for _, sn := range p.candidates {
			if left == 0 {
				break
			}
			done, err := c.disrupt(ctx, p.nodePool, sn, empty)
			if err != nil {
				errs = append(errs, err)
			}
			if done {
				deleted = append(deleted, sn.NodeClaim.Name)
				gone[sn.Name()] = true
				p.deleted++
				left--
			}
		}
	}
	c.metrics.eligible.WithLabelValues(reasonEmpty).Set(float64(eligible))
	return deleted, gone, errs
}

// pools returns each NodePool with its node counts, its empty candidates (the longest quiet
// first) and its underutilized candidates (not yet checked against PodDisruptionBudgets), and
// every node of the view.
func (c *Controller) pools(ctx context.Context) ([]*pool, []*cluster.StateNode, error) {
	nodePools, err := c.cluster.NodePools(ctx)
	if err != nil {
		return nil, nil, err
	}
	nodes, err := c.cluster.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]*pool{}
	var out []*pool
	for _, np := range nodePools {
		p := &pool{nodePool: np}
		byName[np.Name] = p
		out = append(out, p)
	}
	for _, sn := range nodes {
		p := byName[sn.NodePool()]
		if p == nil || sn.NodeClaim == nil || !sn.Initialized() {
			continue
		}
		p.nodes++
		if sn.Deleting() || !ready(sn.Node) {
			p.disrupting++
			continue
		}
		if notDisruptable(sn) != "" {
			continue
		}
		switch {
		case blockingPod(sn.Pods) == "":
			if emptyAllowed(p.nodePool) {
				p.candidates = append(p.candidates, sn)
			}
		case underutilizedAllowed(p.nodePool) && len(reschedulable(sn.Pods)) > 0:
			p.underutilized = append(p.underutilized, sn)
		}
	}
	for _, p := range out {
		slices.SortStableFunc(p.candidates, func(a, b *cluster.StateNode) int {
			if c := quietSince(a).Compare(quietSince(b)); c != 0 {
				return c
			}
			return strings.Compare(a.NodeClaim.Name, b.NodeClaim.Name)
		})
	}
	return out, nodes, nil
}

// quietSince is when the NodeClaim became Consolidatable.
func quietSince(sn *cluster.StateNode) time.Time {
	if cond := meta.FindStatusCondition(sn.NodeClaim.Status.Conditions, v1.ConditionTypeConsolidatable); cond != nil {
		return cond.LastTransitionTime.Time
	}
	return time.Time{}
}

// disrupt checks the candidate again against the API server (not the cache) with m.check, records
// DisruptionReason on its NodeClaim and deletes it; termination drains and removes the Node. It
// reports whether the NodeClaim was deleted; a candidate that changed meanwhile is skipped.
func (c *Controller) disrupt(ctx context.Context, nodePool *v1.NodePool, sn *cluster.StateNode, m method) (bool, error) {
	logger := log.FromContext(ctx).WithValues("nodeclaim", klog.KObj(sn.NodeClaim), "node", klog.KObj(sn.Node), "nodepool", klog.KObj(nodePool))
	fresh, err := c.fresh(ctx, sn)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	reason, err := m.check(ctx, fresh)
	if err != nil {
		return false, err
	}
	if reason != "" {
		logger.V(1).Info("Skipping candidate that changed", "reason", reason)
		return false, nil
	}
	nodeClaim := fresh.NodeClaim
	stored := nodeClaim.DeepCopy()
	meta.SetStatusCondition(&nodeClaim.Status.Conditions, metav1.Condition{
		Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(m.reason),
		Message: m.message, ObservedGeneration: nodeClaim.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
	logger.Info("Disrupting node", "reason", m.label)
	// The optimistic lock makes the patch fail if the NodeClaim changed since it was checked (a pod
	// event, the condition lost); the delete's precondition does the same between patch and delete.
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
	c.recorder.Eventf(nodeClaim, nil, corev1.EventTypeNormal, "DisruptionTerminating", "Disrupt", "Disrupting NodeClaim: %s", m.reason)
	c.recorder.Eventf(fresh.Node, nil, corev1.EventTypeNormal, "DisruptionTerminating", "Disrupt", "Disrupting Node: %s", m.reason)
	c.metrics.nodeClaimsDisrupted.WithLabelValues(m.label, nodePool.Name, nodeClaim.Labels[v1.CapacityTypeLabelKey]).Inc()
	c.metrics.decisions.WithLabelValues(decisionDelete, m.label, m.consolidationType).Inc()
	return true, nil
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
		out.Pods = append(out.Pods, &pods.Items[i])
	}
	return out, nil
}
