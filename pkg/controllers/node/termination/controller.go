package termination

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

const (
	// drainPoll is how soon a drain that is waiting for pods to leave looks again.
	drainPoll = time.Second
	// evictionRetry is how soon evictions that a PodDisruptionBudget refused are retried.
	evictionRetry = 2 * time.Second
	// instancePoll is how soon an instance being terminated is looked at again.
	instancePoll = 5 * time.Second
)

// Controller is the Node termination controller. Create it with NewController.
type Controller struct {
	kubeClient    client.Client
	podReader     client.Reader
	cloudProvider cloudprovider.CloudProvider
	clock         clock.Clock
	recorder      events.EventRecorder
}

// NewController returns the termination controller. Pods are listed through kubeClient until
// Register replaces that with the manager's uncached reader, so a drain never acts on a stale
// cache and needs no field index of its own.
func NewController(kubeClient client.Client, cloudProvider cloudprovider.CloudProvider, clk clock.Clock, recorder events.EventRecorder) *Controller {
	return &Controller{kubeClient: kubeClient, podReader: kubeClient, cloudProvider: cloudProvider, clock: clk, recorder: recorder}
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return "node.termination" }

// Register adds the controller to mgr, watching Nodes.
func (c *Controller) Register(_ context.Context, mgr ctrl.Manager) error {
	c.podReader = mgr.GetAPIReader()
	err := ctrl.NewControllerManagedBy(mgr).
		Named(c.Name()).
		For(&corev1.Node{}).
		Complete(reconcile.AsReconciler(mgr.GetClient(), c))
	if err != nil {
		return fmt.Errorf("registering nodeclaim, %w", err)
	}
	return nil
}

// Reconcile drains and releases a Node being deleted. If the returned error is non-nil the Result
// is ignored and the request is requeued with backoff.
func (c *Controller) Reconcile(ctx context.Context, node *corev1.Node) (reconcile.Result, error) {
	if node.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(node, v1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("node", klog.KObj(node)))
	nodeClaim, err := c.nodeClaimFor(ctx, node)
	if err != nil {
		return reconcile.Result{}, err
	}
	if nodeClaim != nil {
		ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", klog.KObj(nodeClaim)))
		if nodeClaim.DeletionTimestamp.IsZero() {
			log.FromContext(ctx).Info("Deleting nodeclaim of deleted node")
			if err := c.kubeClient.Delete(ctx, nodeClaim); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, fmt.Errorf("deleting nodeclaim, %w", err)
			}
		}
	}
	if err := c.taint(ctx, node); err != nil {
		return reconcile.Result{}, err
	}
	d, err := c.drain(ctx, node, terminationTime(nodeClaim))
	if err != nil {
		return reconcile.Result{}, err
	}
	if !d.done() {
		if err := c.setCondition(ctx, nodeClaim, v1.ConditionTypeDrained, metav1.ConditionFalse, "Draining", d.message(node.Name)); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: d.requeueAfter}, nil
	}
	if err := c.setCondition(ctx, nodeClaim, v1.ConditionTypeDrained, metav1.ConditionTrue, "Drained", "Every pod that had to leave node "+node.Name+" has left"); err != nil {
		return reconcile.Result{}, err
	}
	if nodeClaim != nil && nodeClaim.Status.ProviderID != "" {
		gone, err := c.terminateInstance(ctx, nodeClaim)
		if err != nil || !gone {
			return reconcile.Result{RequeueAfter: instancePoll}, err
		}
	}
	stored := node.DeepCopy()
	controllerutil.RemoveFinalizer(node, v1.TerminationFinalizer)
	log.FromContext(ctx).Info("Removing finalizer of terminated node")
	if err := c.kubeClient.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer, %w", err))
	}
	c.recorder.Eventf(node, nil, corev1.EventTypeNormal, "Terminated", "Terminate", "Node drained and its instance terminated")
	return reconcile.Result{}, nil
}

// nodeClaimFor returns the NodeClaim whose providerID is the Node's, or nil. It lists NodeClaims
// rather than reading a field index, so that this package depends on no other's indexes.
func (c *Controller) nodeClaimFor(ctx context.Context, node *corev1.Node) (*v1.NodeClaim, error) {
	if node.Spec.ProviderID == "" {
		return nil, nil
	}
	list := &v1.NodeClaimList{}
	if err := c.kubeClient.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing nodeclaims, %w", err)
	}
	for i := range list.Items {
		if list.Items[i].Status.ProviderID == node.Spec.ProviderID {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// taint adds karpenter.sh/disrupted:NoSchedule to the Node if it lacks it.
func (c *Controller) taint(ctx context.Context, node *corev1.Node) error {
	disrupted := v1.DisruptedNoScheduleTaint()
	if slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&disrupted) }) {
		return nil
	}
	stored := node.DeepCopy()
	node.Spec.Taints = append(node.Spec.Taints, disrupted)
	log.FromContext(ctx).Info("Tainting node disrupted")
	if err := c.kubeClient.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("tainting node, %w", err)
	}
	return nil
}

// terminationTime is when the drain stops waiting and deletes the pods left: the NodeClaim's
// termination timestamp annotation, or its deletion time plus terminationGracePeriod. Nil means
// the drain waits for as long as it takes.
func terminationTime(nodeClaim *v1.NodeClaim) *time.Time {
	if nodeClaim == nil {
		return nil
	}
	if value := nodeClaim.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; value != "" {
		if t, err := time.Parse(time.RFC3339, value); err == nil {
			return &t
		}
	}
	if nodeClaim.DeletionTimestamp.IsZero() || nodeClaim.Spec.TerminationGracePeriod == nil {
		return nil
	}
	t := nodeClaim.DeletionTimestamp.Add(nodeClaim.Spec.TerminationGracePeriod.Duration)
	return &t
}

// terminateInstance asks the cloud to delete the NodeClaim's instance and reports whether it is
// gone (NodeClaimNotFound), recording InstanceTerminating on the NodeClaim.
func (c *Controller) terminateInstance(ctx context.Context, nodeClaim *v1.NodeClaim) (bool, error) {
	log.FromContext(ctx).Info("Terminating instance", "providerID", nodeClaim.Status.ProviderID)
	err := c.cloudProvider.Delete(ctx, nodeClaim)
	if err != nil && !cloudprovider.IsNodeClaimNotFoundError(err) {
		return false, fmt.Errorf("terminating instance %s, %w", nodeClaim.Status.ProviderID, err)
	}
	if err := c.setCondition(ctx, nodeClaim, v1.ConditionTypeInstanceTerminating, metav1.ConditionTrue, "InstanceTerminating", "The instance's termination was requested"); err != nil {
		return false, err
	}
	return cloudprovider.IsNodeClaimNotFoundError(err), nil
}

// setCondition sets a condition on the NodeClaim (if there is one) and patches its status when
// the condition changed, with an event for the transition.
func (c *Controller) setCondition(ctx context.Context, nodeClaim *v1.NodeClaim, conditionType string, status metav1.ConditionStatus, reason, message string) error {
	if nodeClaim == nil {
		return nil
	}
	stored := nodeClaim.DeepCopy()
	i := slices.IndexFunc(nodeClaim.Status.Conditions, func(c metav1.Condition) bool { return c.Type == conditionType })
	now := metav1.NewTime(c.clock.Now())
	switch {
	case i < 0:
		nodeClaim.Status.Conditions = append(nodeClaim.Status.Conditions, metav1.Condition{
			Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: nodeClaim.Generation, LastTransitionTime: now,
		})
	default:
		cond := &nodeClaim.Status.Conditions[i]
		if cond.Status == status && cond.Reason == reason && cond.Message == message {
			return nil
		}
		if cond.Status != status {
			cond.LastTransitionTime = now
		}
		cond.Status, cond.Reason, cond.Message, cond.ObservedGeneration = status, reason, message, nodeClaim.Generation
	}
	eventType := corev1.EventTypeNormal
	if status == metav1.ConditionFalse {
		eventType = corev1.EventTypeWarning
	}
	c.recorder.Eventf(nodeClaim, nil, eventType, reason, conditionType, "%s=%s: %s", conditionType, status, message)
	if err := c.kubeClient.Status().Patch(ctx, nodeClaim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("patching nodeclaim status, %w", err))
	}
	return nil
}
