package consolidatable

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

const name = "nodeclaim.consolidatable"

// ReasonConsolidatable is the reason of a True Consolidatable condition.
const ReasonConsolidatable = "Consolidatable"

// Controller keeps the Consolidatable condition. Build it with NewController.
type Controller struct {
	kube  client.Client
	clock clock.PassiveClock
}

// NewController returns the controller. kube reads NodePools and patches NodeClaim status.
func NewController(kube client.Client, clk clock.PassiveClock) *Controller {
	return &Controller{kube: kube, clock: clk}
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return name }

// Register adds the controller to mgr: it reconciles a NodeClaim when it changes or when its
// NodePool does.
func (c *Controller) Register(_ context.Context, mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&v1.NodeClaim{}).
		// consolidateAfter is in the NodePool's spec; its status changes with every node.
		Watches(&v1.NodePool{}, handler.EnqueueRequestsFromMapFunc(c.nodeClaimsOf), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(reconcile.AsReconciler(mgr.GetClient(), c))
	if err != nil {
		return fmt.Errorf("registering %s, %w", name, err)
	}
	return nil
}

// nodeClaimsOf maps a NodePool to its NodeClaims.
func (c *Controller) nodeClaimsOf(ctx context.Context, nodePool client.Object) []reconcile.Request {
	var list v1.NodeClaimList
	// Read only, for the names: the cache's objects themselves, not copies.
	if err := c.kube.List(ctx, &list, client.MatchingLabels{v1.NodePoolLabelKey: nodePool.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "Listing nodeclaims of a changed nodepool failed", "nodepool", nodePool.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
	}
	return out
}

// Reconcile sets or removes Consolidatable and patches the status if it changed. If the returned
// error is non-nil the Result is ignored and the request is requeued with backoff.
func (c *Controller) Reconcile(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	if !nodeClaim.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	consolidateAfter, err := c.consolidateAfter(ctx, nodeClaim)
	if err != nil {
		return reconcile.Result{}, err
	}
	stored := nodeClaim.DeepCopy()
	wait := c.remaining(nodeClaim, consolidateAfter)
	if wait == 0 {
		meta.SetStatusCondition(&nodeClaim.Status.Conditions, metav1.Condition{
			Type: v1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue, Reason: ReasonConsolidatable,
			Message:            fmt.Sprintf("No pod has been bound to or removed from the node for %s", consolidateAfter),
			ObservedGeneration: nodeClaim.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now()),
		})
	} else {
		meta.RemoveStatusCondition(&nodeClaim.Status.Conditions, v1.ConditionTypeConsolidatable)
	}
	if !equality.Semantic.DeepEqual(stored.Status, nodeClaim.Status) {
		log.FromContext(ctx).V(1).Info("Updating consolidatable", "nodeclaim", klog.KObj(nodeClaim), "consolidatable", wait == 0)
		if err := c.kube.Status().Patch(ctx, nodeClaim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching consolidatable, %w", err))
		}
	}
	if wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	return reconcile.Result{}, nil
}

// consolidateAfter returns the NodeClaim's NodePool's consolidateAfter; nil for Never, for a
// NodeClaim without a NodePool and for a NodePool that is gone.
func (c *Controller) consolidateAfter(ctx context.Context, nodeClaim *v1.NodeClaim) (*time.Duration, error) {
	poolName := nodeClaim.Labels[v1.NodePoolLabelKey]
	if poolName == "" {
		return nil, nil
	}
	nodePool := &v1.NodePool{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: poolName}, nodePool); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting nodepool %s, %w", poolName, err)
	}
	return nodePool.Spec.Disruption.ConsolidateAfter.Duration, nil
}

// remaining returns how long until the NodeClaim becomes consolidatable: 0 if it is, a negative
// duration if it will not be without some change (not initialized, consolidateAfter Never).
func (c *Controller) remaining(nodeClaim *v1.NodeClaim, consolidateAfter *time.Duration) time.Duration {
	initialized := meta.FindStatusCondition(nodeClaim.Status.Conditions, v1.ConditionTypeInitialized)
	if consolidateAfter == nil || initialized == nil || initialized.Status != metav1.ConditionTrue {
		return -1
	}
	quietSince := initialized.LastTransitionTime.Time
	if last := nodeClaim.Status.LastPodEventTime.Time; last.After(quietSince) {
		quietSince = last
	}
	left := quietSince.Add(*consolidateAfter).Sub(c.clock.Now())
	if left <= 0 {
		return 0
	}
	return left
}
