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
	reasonEmpty       = "empty"
	decisionDelete    = "delete"
	consolidationType = "empty"
)

// Controller removes empty nodes. Build it with NewController.
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
			logger.Error(err, "Disrupting empty nodes")
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
	// nodes counts the NodePool's initialized nodes, disrupting those being deleted or not Ready.
	nodes, disrupting int
	candidates        []*cluster.StateNode
}

// Disrupt runs one pass: it finds the empty nodes that may go and deletes as many NodeClaims of
// each NodePool as its budgets allow, returning their names. Errors of single nodes do not stop
// the pass; they are joined in the error returned.
func (c *Controller) Disrupt(ctx context.Context) ([]string, error) {
	pools, err := c.pools(ctx)
	if err != nil {
		return nil, err
	}
	now := c.clock.Now()
	var deleted []string
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
			done, err := c.disrupt(ctx, p.nodePool, sn)
			if err != nil {
				errs = append(errs, err)
			}
			if done {
				deleted = append(deleted, sn.NodeClaim.Name)
				left--
			}
		}
	}
	c.metrics.eligible.WithLabelValues(reasonEmpty).Set(float64(eligible))
	return deleted, errors.Join(errs...)
}

// pools returns, for each NodePool that allows removing empty nodes, its node counts and its
// candidates, the longest quiet first.
func (c *Controller) pools(ctx context.Context) ([]*pool, error) {
	nodePools, err := c.cluster.NodePools(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := c.cluster.Nodes(ctx)
	if err != nil {
		return nil, err
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
		if emptyAllowed(p.nodePool) && notCandidate(sn) == "" {
			p.candidates = append(p.candidates, sn)
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
	return out, nil
}

// quietSince is when the NodeClaim became Consolidatable.
func quietSince(sn *cluster.StateNode) time.Time {
	if cond := meta.FindStatusCondition(sn.NodeClaim.Status.Conditions, v1.ConditionTypeConsolidatable); cond != nil {
		return cond.LastTransitionTime.Time
	}
	return time.Time{}
}

// disrupt checks the candidate again against the API server (not the cache), records
// DisruptionReason on its NodeClaim and deletes it; termination drains and removes the Node. It
// reports whether the NodeClaim was deleted; a candidate that changed meanwhile is skipped.
func (c *Controller) disrupt(ctx context.Context, nodePool *v1.NodePool, sn *cluster.StateNode) (bool, error) {
	logger := log.FromContext(ctx).WithValues("nodeclaim", klog.KObj(sn.NodeClaim), "node", klog.KObj(sn.Node), "nodepool", klog.KObj(nodePool))
	fresh, err := c.fresh(ctx, sn)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	if reason := notCandidate(fresh); reason != "" {
		logger.V(1).Info("Skipping candidate that changed", "reason", reason)
		return false, nil
	}
	nodeClaim := fresh.NodeClaim
	stored := nodeClaim.DeepCopy()
	meta.SetStatusCondition(&nodeClaim.Status.Conditions, metav1.Condition{
		Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(v1.DisruptionReasonEmpty),
		Message: "The node is empty", ObservedGeneration: nodeClaim.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
	logger.Info("Disrupting node", "reason", reasonEmpty)
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
	c.recorder.Eventf(nodeClaim, nil, corev1.EventTypeNormal, "DisruptionTerminating", "Disrupt", "Disrupting NodeClaim: Empty")
	c.recorder.Eventf(fresh.Node, nil, corev1.EventTypeNormal, "DisruptionTerminating", "Disrupt", "Disrupting Node: Empty")
	c.metrics.nodeClaimsDisrupted.WithLabelValues(reasonEmpty, nodePool.Name, nodeClaim.Labels[v1.CapacityTypeLabelKey]).Inc()
	c.metrics.decisions.WithLabelValues(decisionDelete, reasonEmpty, consolidationType).Inc()
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
