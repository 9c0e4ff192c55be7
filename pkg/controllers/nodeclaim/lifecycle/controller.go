package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Field indexes this package registers. Their names are the package's own, so that another
// controller indexing the same field under the conventional name does not conflict.
const (
	// nodeProviderIDIndex indexes Nodes by spec.providerID.
	nodeProviderIDIndex = "lifecycle.joiner.dev/node-provider-id"
	// nodeClaimProviderIDIndex indexes NodeClaims by status.providerID.
	nodeClaimProviderIDIndex = "lifecycle.joiner.dev/nodeclaim-provider-id"
)

// Defaults of the timeouts.
const (
	// DefaultLaunchTimeout is how long a NodeClaim may stay without Launched=True after creation.
	DefaultLaunchTimeout = 5 * time.Minute
	// DefaultRegistrationTimeout is how long a launched NodeClaim may take to register, unless its
	// NodePool's karpenter.sh/registration-timeout annotation says otherwise.
	DefaultRegistrationTimeout = 15 * time.Minute
	// nodeClassNotReadyRetry is how soon a launch refused for a node class that is not Ready is
	// retried.
	nodeClassNotReadyRetry = 10 * time.Second
	// terminationPoll is how soon the deletion of a NodeClaim is looked at again while its Node
	// drains or its instance terminates.
	terminationPoll = 5 * time.Second
)

// MaxConcurrentReconciles is how many NodeClaims the controller works on at once. A launch holds
// its worker for the CreateFleet call and two writes, a second or more on a loaded API server, so
// with 50 the 430 NodeClaims of a 1,000-pod batch waited 1.4 s on average for a worker and the
// Nodes that registered meanwhile waited behind them (6 s from the Node's creation to its
// registration at the median); with 150, 0.1 s and 2 s. Karpenter runs 1,000, and batches its
// CreateFleet calls.
const MaxConcurrentReconciles = 150

// Controller is the NodeClaim lifecycle controller. Create it with NewController.
type Controller struct {
	kubeClient    client.Client
	cloudProvider cloudprovider.CloudProvider
	clock         clock.Clock
	recorder      events.EventRecorder
	// apiReader reads what joinfailure.Inputs fingerprints (aws-auth is not cached); Register sets
	// it to the manager's API reader.
	apiReader client.Reader
	diagnoses diagnoses
	// registered are the Nodes this controller registered, by the UID of their NodeClaim: a
	// reconcile may read the Node from a cache that does not show that write yet, and must not
	// register it again (its patch would fail on the taint already removed).
	registered registeredNodes
	// initializedNodes are the Nodes this controller labelled initialized, likewise.
	initializedNodes registeredNodes
	// written is what status this controller last wrote to each NodeClaim (writtenStatuses).
	written writtenStatuses

	// LaunchTimeout and RegistrationTimeout may be changed before Register; NewController sets the
	// defaults.
	LaunchTimeout       time.Duration
	RegistrationTimeout time.Duration
}

// NewController returns the lifecycle controller. kubeClient must read from a cache that has the
// field indexes Register adds (a manager's client); recorder receives an event for every condition
// transition.
func NewController(kubeClient client.Client, cloudProvider cloudprovider.CloudProvider, clk clock.Clock, recorder events.EventRecorder) *Controller {
	return &Controller{
		kubeClient:          kubeClient,
		apiReader:           kubeClient,
		cloudProvider:       cloudProvider,
		clock:               clk,
		recorder:            recorder,
		LaunchTimeout:       DefaultLaunchTimeout,
		RegistrationTimeout: DefaultRegistrationTimeout,
	}
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return "nodeclaim.lifecycle" }

// Register adds the field indexes the controller reads through and the controller itself to mgr.
// It watches NodeClaims and the Nodes whose providerID matches one.
func (c *Controller) Register(ctx context.Context, mgr ctrl.Manager) error {
	c.apiReader = mgr.GetAPIReader()
	if err := indexFields(ctx, mgr); err != nil {
		return fmt.Errorf("registering nodeclaim, %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(c.Name()).
		For(&v1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(c.nodeToNodeClaims), builder.WithPredicates(notHeartbeat())).
		// NodeClaims are independent and a launch waits on the cloud: a batch of dozens must
		// not launch one at a time.
		WithOptions(controller.Options{MaxConcurrentReconciles: MaxConcurrentReconciles}).
		Complete(reconcile.AsReconciler(mgr.GetClient(), c))
	if err != nil {
		return fmt.Errorf("registering nodeclaim, %w", err)
	}
	return nil
}

// notHeartbeat passes every Node event except an update that only renews the kubelet's heartbeat
// (the conditions' lastHeartbeatTime, and the resourceVersion and managedFields that come with
// it). Nothing the controller decides reads a heartbeat's time: a Node that stops beating turns
// not Ready through the node lifecycle controller, which is a change. Every Node beats every
// 10s or so, so with hundreds of Nodes the heartbeats were most of the controller's reconciles.
func notHeartbeat() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*corev1.Node)
		node, newOK := e.ObjectNew.(*corev1.Node)
		if !oldOK || !newOK {
			return true
		}
		return !equality.Semantic.DeepEqual(withoutHeartbeat(old), withoutHeartbeat(node))
	}}
}

// withoutHeartbeat is a copy of node without what a heartbeat changes.
func withoutHeartbeat(node *corev1.Node) *corev1.Node {
	out := node.DeepCopy()
	out.ResourceVersion, out.ManagedFields = "", nil
	for i := range out.Status.Conditions {
		out.Status.Conditions[i].LastHeartbeatTime = metav1.Time{}
	}
	return out
}

// indexFields adds the field indexes the controller lists through: Nodes by spec.providerID and
// NodeClaims by status.providerID, under names private to this package.
func indexFields(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Node{}, nodeProviderIDIndex, func(o client.Object) []string {
		if id := o.(*corev1.Node).Spec.ProviderID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing nodes by providerID, %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1.NodeClaim{}, nodeClaimProviderIDIndex, func(o client.Object) []string {
		if id := o.(*v1.NodeClaim).Status.ProviderID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing nodeclaims by providerID, %w", err)
	}
	return nil
}

func (c *Controller) nodeToNodeClaims(ctx context.Context, o client.Object) []reconcile.Request {
	node, ok := o.(*corev1.Node)
	if !ok || node.Spec.ProviderID == "" {
		return nil
	}
	list := &v1.NodeClaimList{}
	if err := c.kubeClient.List(ctx, list, client.MatchingFields{nodeClaimProviderIDIndex: node.Spec.ProviderID}); err != nil {
		log.FromContext(ctx).Error(err, "Listing nodeclaims of node", "node", klog.KObj(node))
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
	}
	return out
}

// phase is one step of the lifecycle. It mutates nodeClaim (the reconcile's one copy) and reports
// when it wants to run again.
type phase func(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error)

// Reconcile runs the phases of a live NodeClaim, or its finalization when it is being deleted, and
// patches what changed. If the returned error is non-nil the Result is ignored and the request is
// requeued with backoff.
func (c *Controller) Reconcile(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", klog.KObj(nodeClaim)))
	if !nodeClaim.DeletionTimestamp.IsZero() {
		return c.finalize(ctx, nodeClaim)
	}
	if !controllerutil.ContainsFinalizer(nodeClaim, v1.TerminationFinalizer) {
		// The finalizer goes on before anything is launched, so that no instance outlives its
		// NodeClaim.
		stored := nodeClaim.DeepCopy()
		controllerutil.AddFinalizer(nodeClaim, v1.TerminationFinalizer)
		if err := c.kubeClient.Patch(ctx, nodeClaim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("adding finalizer, %w", err))
		}
	}
	stored := nodeClaim.DeepCopy()
	var (
		result reconcile.Result
		errs   []error
	)
	for _, p := range []phase{c.launch, c.register, c.initialize, c.liveness} {
		res, err := p(ctx, nodeClaim)
		errs = append(errs, err)
		result = combine(result, res)
		if !nodeClaim.DeletionTimestamp.IsZero() {
			break // a phase deleted the NodeClaim; the rest have nothing to do
		}
	}
	setReady(nodeClaim, c.clock.Now())
	if !equality.Semantic.DeepEqual(stored.Status, nodeClaim.Status) && c.written.shown(nodeClaim, c.clock.Now()) {
		// The status this reconcile arrived at is the one this controller wrote last, which the
		// cache has not shown yet: it was written, and its transitions told, already.
		nodeClaim.Status = *stored.Status.DeepCopy()
	}
	err := c.patch(ctx, stored, nodeClaim)
	if apierrors.IsConflict(err) {
		// The API server has a newer NodeClaim than the cache this reconcile read: the watch event
		// of that write brings the NodeClaim back, read afresh. Retrying at once, with backoff from
		// milliseconds, read the same stale cache and conflicted again, up to ten times in a row
		// for one NodeClaim while the API server was loaded, each time telling the transitions again.
		log.FromContext(ctx).V(1).Info("Nodeclaim changed since read; waiting for the newer one", "error", err.Error())
		result = combine(result, reconcile.Result{RequeueAfter: conflictRequeue})
		err = nil
	} else if err == nil {
		// Told once written: a write that failed is made, and told, again.
		c.recordTransitions(stored, nodeClaim)
	}
	if err := errors.Join(append(errs, err)...); err != nil {
		return reconcile.Result{}, err
	}
	return result, nil
}

// conflictRequeue is when a reconcile whose status write conflicted runs again if no watch event
// of the newer NodeClaim has brought it back sooner.
const conflictRequeue = 5 * time.Second

// patch writes the NodeClaim's metadata and status if they changed: one patch each.
func (c *Controller) patch(ctx context.Context, stored, nodeClaim *v1.NodeClaim) error {
	if !equality.Semantic.DeepEqual(stored.Status, nodeClaim.Status) {
		err := c.kubeClient.Status().Patch(ctx, nodeClaim.DeepCopy(), client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{}))
		launched := stored.Status.ProviderID == "" && nodeClaim.Status.ProviderID != ""
		deleted := stored.DeletionTimestamp.IsZero() && !nodeClaim.DeletionTimestamp.IsZero()
		if apierrors.IsConflict(err) && (launched || deleted) {
			// An instance was just launched: losing its providerID would launch a second one, which
			// is worse than overwriting a condition another writer set meanwhile. Or a phase just
			// deleted the NodeClaim (which changed its resourceVersion): the condition that says
			// why is the last this controller writes, and what the failed-join metric counts.
			err = c.kubeClient.Status().Patch(ctx, nodeClaim.DeepCopy(), client.MergeFrom(stored))
		}
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patching nodeclaim status, %w", err)
		}
		c.written.record(nodeClaim, c.clock.Now())
	}
	if !equality.Semantic.DeepEqual(stored.Labels, nodeClaim.Labels) || !equality.Semantic.DeepEqual(stored.Annotations, nodeClaim.Annotations) {
		metaOnly := stored.DeepCopy()
		metaOnly.Labels, metaOnly.Annotations = nodeClaim.Labels, nodeClaim.Annotations
		if err := c.kubeClient.Patch(ctx, metaOnly, client.MergeFrom(stored)); err != nil {
			return client.IgnoreNotFound(fmt.Errorf("patching nodeclaim metadata, %w", err))
		}
	}
	return nil
}

// combine keeps the soonest non-zero RequeueAfter of two results.
func combine(a, b reconcile.Result) reconcile.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0:
		return a
	case b.RequeueAfter < a.RequeueAfter:
		return b
	}
	return a
}

// nodesFor returns the Nodes whose providerID is the NodeClaim's.
func (c *Controller) nodesFor(ctx context.Context, nodeClaim *v1.NodeClaim) ([]corev1.Node, error) {
	if nodeClaim.Status.ProviderID == "" {
		return nil, nil
	}
	list := &corev1.NodeList{}
	if err := c.kubeClient.List(ctx, list, client.MatchingFields{nodeProviderIDIndex: nodeClaim.Status.ProviderID}); err != nil {
		return nil, fmt.Errorf("listing nodes with providerID %s, %w", nodeClaim.Status.ProviderID, err)
	}
	return list.Items, nil
}

// recordTransitions emits one event for every condition whose status, reason or message changed:
// Normal when it is True or Unknown, Warning when it is False. A condition not decided yet
// (Unknown, and Unknown or absent before: a launched instance waiting for its Node, a Node
// waiting to initialize) emits none; its message is on the condition. Those were four of a
// NodeClaim's eight events, and in a 1,000-pod scale-up 1,600 of the controller's 4,420 event
// writes to an API server it kept at full load. A fall back to Unknown from True or False (a
// Node that stopped reporting) still emits one. Ready emits none: it is made of the other
// three (setReady), whose own events tell each of its transitions (it was another 450 writes).
func (c *Controller) recordTransitions(stored, nodeClaim *v1.NodeClaim) {
	for _, cond := range nodeClaim.Status.Conditions {
		if cond.Type == v1.ConditionTypeReady {
			continue
		}
		old := findCondition(stored.Status.Conditions, cond.Type)
		if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			continue
		}
		if cond.Status == metav1.ConditionUnknown && (old == nil || old.Status == metav1.ConditionUnknown) {
			continue
		}
		eventType := corev1.EventTypeNormal
		if cond.Status == metav1.ConditionFalse {
			eventType = corev1.EventTypeWarning
		}
		c.recorder.Eventf(nodeClaim, nil, eventType, cond.Reason, cond.Type, "%s=%s: %s", cond.Type, cond.Status, cond.Message)
	}
}

// finalize runs on a NodeClaim being deleted: it records when the drain must end, deletes the
// Node (node/termination drains it and removes its finalizer), terminates the instance, and then
// removes the NodeClaim's finalizer.
func (c *Controller) finalize(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	c.diagnoses.forget(nodeClaim.UID)
	c.registered.forget(nodeClaim.UID)
	c.initializedNodes.forget(nodeClaim.UID)
	c.written.forget(nodeClaim.UID)
	if !controllerutil.ContainsFinalizer(nodeClaim, v1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	if err := c.annotateTerminationTimestamp(ctx, nodeClaim); err != nil {
		return reconcile.Result{}, err
	}
	nodes, err := c.nodesFor(ctx, nodeClaim)
	if err != nil {
		return reconcile.Result{}, err
	}
	for i := range nodes {
		if !nodes[i].DeletionTimestamp.IsZero() {
			continue
		}
		log.FromContext(ctx).Info("Deleting node of deleted nodeclaim", "node", klog.KObj(&nodes[i]))
		if err := c.kubeClient.Delete(ctx, &nodes[i]); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("deleting node %s, %w", nodes[i].Name, err)
		}
	}
	if len(nodes) > 0 {
		// The Node's deletion, watched, brings the NodeClaim back; the poll is a safety net.
		return reconcile.Result{RequeueAfter: terminationPoll}, nil
	}
	if nodeClaim.Status.ProviderID != "" {
		done, err := c.terminateInstance(ctx, nodeClaim)
		if err != nil || !done {
			return reconcile.Result{RequeueAfter: terminationPoll}, err
		}
	}
	stored := nodeClaim.DeepCopy()
	controllerutil.RemoveFinalizer(nodeClaim, v1.TerminationFinalizer)
	log.FromContext(ctx).Info("Removing finalizer of terminated nodeclaim")
	if err := c.kubeClient.Patch(ctx, nodeClaim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer, %w", err))
	}
	return reconcile.Result{}, nil
}

// annotateTerminationTimestamp records deletion time + terminationGracePeriod, after which the
// drain stops waiting for pods, on a NodeClaim that has a terminationGracePeriod.
func (c *Controller) annotateTerminationTimestamp(ctx context.Context, nodeClaim *v1.NodeClaim) error {
	tgp := nodeClaim.Spec.TerminationGracePeriod
	if tgp == nil || nodeClaim.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey] != "" {
		return nil
	}
	stored := nodeClaim.DeepCopy()
	if nodeClaim.Annotations == nil {
		nodeClaim.Annotations = map[string]string{}
	}
	nodeClaim.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey] = nodeClaim.DeletionTimestamp.Add(tgp.Duration).UTC().Format(time.RFC3339)
	if err := c.kubeClient.Patch(ctx, nodeClaim, client.MergeFrom(stored)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("annotating termination timestamp, %w", err))
	}
	return nil
}

// terminateInstance asks the cloud to delete the instance and reports whether it is gone.
func (c *Controller) terminateInstance(ctx context.Context, nodeClaim *v1.NodeClaim) (bool, error) {
	log.FromContext(ctx).Info("Terminating instance", "providerID", nodeClaim.Status.ProviderID)
	err := c.cloudProvider.Delete(ctx, nodeClaim)
	if cloudprovider.IsNodeClaimNotFoundError(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("terminating instance %s, %w", nodeClaim.Status.ProviderID, err)
	}
	stored := nodeClaim.DeepCopy()
	if setCondition(nodeClaim, v1.ConditionTypeInstanceTerminating, metav1.ConditionTrue, "InstanceTerminating", "The instance's termination was requested", c.clock.Now()) {
		c.recordTransitions(stored, nodeClaim)
		if err := c.kubeClient.Status().Patch(ctx, nodeClaim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return false, client.IgnoreNotFound(fmt.Errorf("patching nodeclaim status, %w", err))
		}
	}
	return false, nil
}

// hasTaint reports whether taints hold one with the key and effect of t.
func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	return slices.ContainsFunc(taints, func(x corev1.Taint) bool { return x.MatchTaint(&t) })
}
