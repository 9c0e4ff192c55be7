package status

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

const name = "nodepool.status"

// Condition reasons this controller sets.
const (
	ReasonNodeClassNotFound      = "NodeClassNotFound"
	ReasonAwaitingReconciliation = "AwaitingReconciliation"
	ReasonNodeClassReadyNotTrue  = "NodeClassNotReady"
	ReasonReady                  = "Ready"
	ReasonValidationNotSucceeded = "ValidationFailed"
	// ReasonNodeRegistered: a node of the NodePool registered and no certain cause is recorded.
	ReasonNodeRegistered = "NodeRegistered"
	// ReasonAwaitingRegistration: no node of the NodePool has registered yet, and none failed for
	// a certain cause.
	ReasonAwaitingRegistration = "AwaitingRegistration"
	// ReasonJoinInputsChanged: nodes failed to join for a certain cause, and what decides whether
	// they can join has changed since.
	ReasonJoinInputsChanged = "JoinInputsChanged"
	// joinFailurePoll is how often a NodePool with a recorded join failure is looked at again:
	// aws-auth is read, not watched, and the hold lapses with time.
	joinFailurePoll = 15 * time.Second
	resourceNodes   = corev1.ResourceName("nodes")
	// CountsWriteInterval is the shortest time between two writes of a NodePool's status that
	// change only status.resources and status.nodes. Those change with every NodeClaim created
	// or launched, and nothing decides by them (limits are counted from the NodeClaims
	// themselves): in a 1,000-pod scale-up, writing each change made 700 status writes of one
	// NodePool in a minute, the most expensive requests the API server served (a custom
	// resource's status update runs its schema's CEL rules). A condition change is written at
	// once, with the counts of the moment.
	CountsWriteInterval = 5 * time.Second
)

// Controller keeps NodePool status. Build it with NewController.
type Controller struct {
	kube client.Client
	// apiReader reads kube-system/aws-auth and node classes uncached, for joinfailure.Inputs; Register
	// sets it to the manager's API reader.
	apiReader client.Reader
	// JoinFailureHold is how long a recorded join failure holds launches when its inputs do not
	// change; NewController sets joinfailure.DefaultHold.
	JoinFailureHold time.Duration
	cluster         *cluster.Cluster
	cloud           cloudprovider.CloudProvider
	clock           clock.PassiveClock

	mu sync.Mutex
	// written is when each NodePool's status was last written, by UID.
	written map[types.UID]time.Time
}

// NewController returns the NodePool status controller. kube reads node classes and patches
// NodePool status; view lists NodeClaims; cloud names the node class kinds.
func NewController(kube client.Client, view *cluster.Cluster, cloud cloudprovider.CloudProvider, clk clock.PassiveClock) *Controller {
	return &Controller{kube: kube, apiReader: kube, cluster: view, cloud: cloud, clock: clk, JoinFailureHold: joinfailure.DefaultHold,
		written: map[types.UID]time.Time{}}
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register reconciles each NodePool when it, one of its NodeClaims, or its node class changes.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	c.apiReader = mgr.GetAPIReader()
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&v1.NodePool{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if np := o.GetLabels()[v1.NodePoolLabelKey]; np != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: np}}}
			}
			return nil
		}))
	for _, nodeClass := range c.cloud.GetSupportedNodeClasses() {
		b = b.Watches(nodeClass, handler.EnqueueRequestsFromMapFunc(c.nodePoolsOf))
	}
	return b.Complete(reconcile.AsReconciler(mgr.GetClient(), c))
}

// nodePoolsOf maps a node class to the NodePools that reference it.
func (c *Controller) nodePoolsOf(ctx context.Context, nodeClass client.Object) []reconcile.Request {
	nodePools, err := c.cluster.NodePools(ctx)
	if err != nil {
		log.FromContext(ctx).Error(err, "Listing nodepools for a node class change failed")
		return nil
	}
	var out []reconcile.Request
	for _, np := range nodePools {
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == nodeClass.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: np.Name}})
		}
	}
	return out
}

// Reconcile rebuilds the NodePool's status and patches it if it changed: at once when a condition
// changed, else (only the counts did) no sooner than CountsWriteInterval after the last write.
func (c *Controller) Reconcile(ctx context.Context, np *v1.NodePool) (reconcile.Result, error) {
	stored := np.DeepCopy()
	claims, err := c.cluster.NodeClaimsOf(ctx, np.Name)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("updating nodepool status, %w", err)
	}
	np.Status.Resources, np.Status.Nodes = sum(claims)
	nodeClassReady, err := c.nodeClassReady(ctx, np)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("updating nodepool status, %w", err)
	}
	c.setCondition(np, nodeClassReady)
	healthy, result, err := c.registrationHealthy(ctx, np, claims)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("updating nodepool status, %w", err)
	}
	c.setCondition(np, healthy)
	c.setCondition(np, ready(np))
	if equality.Semantic.DeepEqual(stored.Status, np.Status) {
		return result, nil
	}
	if wait := c.countsWait(stored, np); wait > 0 {
		return combine(result, reconcile.Result{RequeueAfter: wait}), nil
	}
	log.FromContext(ctx).V(1).Info("Updating nodepool status", "nodes", *np.Status.Nodes)
	if err := c.kube.Status().Patch(ctx, np, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching nodepool status, %w", err))
	}
	c.mu.Lock()
	c.written[np.UID] = c.clock.Now()
	if !np.DeletionTimestamp.IsZero() {
		delete(c.written, np.UID)
	}
	c.mu.Unlock()
	return result, nil
}

// countsWait is how long the write of np's status must wait: zero when a condition changed or
// the last write was CountsWriteInterval ago or more.
func (c *Controller) countsWait(stored, np *v1.NodePool) time.Duration {
	if !equality.Semantic.DeepEqual(stored.Status.Conditions, np.Status.Conditions) {
		return 0
	}
	c.mu.Lock()
	last, ok := c.written[np.UID]
	c.mu.Unlock()
	if !ok {
		return 0
	}
	return max(0, last.Add(CountsWriteInterval).Sub(c.clock.Now()))
}

// combine keeps the sooner non-zero RequeueAfter of two results.
func combine(a, b reconcile.Result) reconcile.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter > 0 && b.RequeueAfter < a.RequeueAfter) {
		a.RequeueAfter = b.RequeueAfter
	}
	return a
}

// sum adds up the capacity of the NodeClaims that have launched, and counts every NodeClaim.
func sum(claims []*v1.NodeClaim) (corev1.ResourceList, *int64) {
	total := corev1.ResourceList{}
	for _, nc := range claims {
		for res, q := range nc.Status.Capacity {
			t := total[res]
			t.Add(q)
			total[res] = t
		}
	}
	n := int64(len(claims))
	total[resourceNodes] = *resource.NewQuantity(n, resource.DecimalSI)
	return total, &n
}

// nodeClassReady mirrors the Ready condition of the NodePool's node class.
func (c *Controller) nodeClassReady(ctx context.Context, np *v1.NodePool) (metav1.Condition, error) {
	cond := metav1.Condition{Type: v1.ConditionTypeNodeClassReady}
	ref := np.Spec.Template.Spec.NodeClassRef
	nodeClass := c.nodeClassObject(ref)
	if nodeClass == nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNodeClassNotFound
		cond.Message = fmt.Sprintf("nodeClassRef names %+v, a kind the cloud provider does not know", ref)
		return cond, nil
	}
	err := c.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, nodeClass)
	if apierrors.IsNotFound(err) {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNodeClassNotFound
		cond.Message = fmt.Sprintf("%s %s does not exist: create it, or point nodeClassRef at one that does", ref.Kind, ref.Name)
		return cond, nil
	}
	if err != nil {
		return cond, fmt.Errorf("reading %s %s, %w", ref.Kind, ref.Name, err)
	}
	nodeClassCond, err := readyCondition(nodeClass)
	if err != nil {
		return cond, err
	}
	if nodeClassCond == nil {
		cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonAwaitingReconciliation
		cond.Message = fmt.Sprintf("%s %s has no Ready condition yet", ref.Kind, ref.Name)
		return cond, nil
	}
	cond.Status, cond.Reason, cond.Message = nodeClassCond.Status, nodeClassCond.Reason, nodeClassCond.Message
	return cond, nil
}

// nodeClassObject returns an empty object of the kind ref names, or nil when the provider does
// not launch with that kind.
func (c *Controller) nodeClassObject(ref *v1.NodeClassReference) client.Object {
	if ref == nil {
		return nil
	}
	return cloudprovider.NodeClassObject(c.cloud, ref)
}

// readyCondition reads status.conditions[type=Ready] of any node class kind.
func readyCondition(obj client.Object) (*metav1.Condition, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("reading conditions of %s, %w", obj.GetName(), err)
	}
	raw, _, err := unstructured.NestedSlice(u, "status", "conditions")
	if err != nil {
		return nil, fmt.Errorf("reading conditions of %s, %w", obj.GetName(), err)
	}
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok || m["type"] != v1.ConditionTypeReady {
			continue
		}
		var cond metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond); err != nil {
			return nil, fmt.Errorf("reading Ready condition of %s, %w", obj.GetName(), err)
		}
		return &cond, nil
	}
	return nil, nil
}

// firstRegistered is the NodeClaim that registered first (by the time its Registered turned True,
// then by name), or nil when none has.
func firstRegistered(claims []*v1.NodeClaim) *v1.NodeClaim {
	var first *v1.NodeClaim
	var at metav1.Time
	for _, nc := range claims {
		r := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeRegistered)
		if r == nil || r.Status != metav1.ConditionTrue {
			continue
		}
		if first == nil || r.LastTransitionTime.Before(&at) || (r.LastTransitionTime.Equal(&at) && nc.Name < first.Name) {
			first, at = nc, r.LastTransitionTime
		}
	}
	return first
}

// ready is True when NodeClassReady is True and validation has not failed.
func ready(np *v1.NodePool) metav1.Condition {
	cond := metav1.Condition{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: ReasonReady}
	if v := meta.FindStatusCondition(np.Status.Conditions, v1.ConditionTypeValidationSucceeded); v != nil && v.Status == metav1.ConditionFalse {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonValidationNotSucceeded, v.Message
		return cond
	}
	nc := meta.FindStatusCondition(np.Status.Conditions, v1.ConditionTypeNodeClassReady)
	switch {
	case nc == nil || nc.Status == metav1.ConditionUnknown:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, ReasonAwaitingReconciliation, "waiting for the node class to report Ready"
	case nc.Status == metav1.ConditionFalse:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonNodeClassReadyNotTrue, nc.Message
	}
	return cond
}

// setCondition sets cond on np with np's generation; the transition time, from the injected
// clock, changes only when the status does.
func (c *Controller) setCondition(np *v1.NodePool, cond metav1.Condition) {
	cond.ObservedGeneration = np.Generation
	if cond.Reason == "" {
		cond.Reason = ReasonAwaitingReconciliation
	}
	cond.LastTransitionTime = metav1.NewTime(c.clock.Now())
	meta.SetStatusCondition(&np.Status.Conditions, cond)
}

// registrationHealthy is NodeRegistrationHealthy: False while a certain join failure is recorded
// and nothing joinfailure.Inputs covers has changed (and the hold has not lapsed), with the cause and its
// fix; Unknown once those inputs changed, or while no node has registered yet; True when one of
// the NodePool's NodeClaims registered and no failure is recorded. While a failure is recorded
// the NodePool is looked at again every joinFailurePoll.
func (c *Controller) registrationHealthy(ctx context.Context, np *v1.NodePool, claims []*v1.NodeClaim) (metav1.Condition, reconcile.Result, error) {
	cond := metav1.Condition{Type: v1.ConditionTypeNodeRegistrationHealthy}
	if f := joinfailure.Read(np); f != nil {
		fp, err := joinfailure.Inputs(ctx, c.apiReader, c.cloud, np)
		if err != nil {
			return cond, reconcile.Result{}, err
		}
		until := f.Time.Add(c.JoinFailureHold)
		if fp == f.Fingerprint && c.clock.Now().Before(until) {
			cond.Status, cond.Reason = metav1.ConditionFalse, f.Reason
			cond.Message = fmt.Sprintf("NodeClaims %v failed to join: %s. ", f.NodeClaims, f.Message)
			if len(f.NodeClaims) >= joinfailure.MaxLaunchesPerCause {
				cond.Message += fmt.Sprintf("Launches are held until the NodePool, its node class or kube-system/aws-auth changes, or until %s "+
					"(a fix made in EKS access entries or IAM is seen then)", until.UTC().Format(time.RFC3339))
			} else {
				cond.Message += "One more launch is allowed to confirm the cause"
			}
			return cond, reconcile.Result{RequeueAfter: joinFailurePoll}, nil
		}
		cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonJoinInputsChanged
		cond.Message = fmt.Sprintf("NodeClaims %v failed to join (%s); what decides joining has changed since (or the hold lapsed): waiting for a node to register", f.NodeClaims, f.Reason)
		return cond, reconcile.Result{}, nil
	}
	// True stays as it was first written: it names the node that made it True. Naming whichever
	// registered NodeClaim came first from the cache (in no fixed order) changed the message, and
	// so wrote the status, at nearly every reconcile of a scale-up.
	if prev := meta.FindStatusCondition(np.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy); prev != nil && prev.Status == metav1.ConditionTrue {
		return *prev, reconcile.Result{}, nil
	}
	if nc := firstRegistered(claims); nc != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonNodeRegistered, "Node "+nc.Status.NodeName+" registered"
		return cond, reconcile.Result{}, nil
	}
	cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, ReasonAwaitingRegistration, "No node of this NodePool has registered yet"
	return cond, reconcile.Result{}, nil
}
