package garbagecollection

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

const (
	// DefaultGracePeriod is how long after launching a NodeClaim is left alone: a fresh instance
	// may not be visible to every cloud API yet.
	DefaultGracePeriod = 30 * time.Second
	// DefaultInterval is how often a launched NodeClaim's instance is looked up.
	DefaultInterval = 2 * time.Minute
)

// Controller is the NodeClaim garbage-collection controller. Create it with NewController.
type Controller struct {
	kubeClient    client.Client
	cloudProvider cloudprovider.CloudProvider
	clock         clock.Clock
	recorder      events.EventRecorder

	// GracePeriod and Interval may be changed before Register; NewController sets the defaults.
	GracePeriod time.Duration
	Interval    time.Duration
}

// NewController returns the garbage-collection controller.
func NewController(kubeClient client.Client, cloudProvider cloudprovider.CloudProvider, clk clock.Clock, recorder events.EventRecorder) *Controller {
	return &Controller{
		kubeClient: kubeClient, cloudProvider: cloudProvider, clock: clk, recorder: recorder,
		GracePeriod: DefaultGracePeriod, Interval: DefaultInterval,
	}
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return "nodeclaim.garbagecollection" }

// Register adds the controller to mgr, watching NodeClaims.
func (c *Controller) Register(_ context.Context, mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named(c.Name()).
		For(&v1.NodeClaim{}).
		Complete(reconcile.AsReconciler(mgr.GetClient(), c))
	if err != nil {
		return fmt.Errorf("registering nodeclaim, %w", err)
	}
	return nil
}

// Reconcile deletes the NodeClaim if its instance is gone, and otherwise asks to look again after
// Interval (or when the grace period ends). If the returned error is non-nil the Result is ignored
// and the request is requeued with backoff.
func (c *Controller) Reconcile(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	if !nodeClaim.DeletionTimestamp.IsZero() || nodeClaim.Status.ProviderID == "" {
		return reconcile.Result{}, nil
	}
	launched := launchedAt(nodeClaim)
	if launched == nil {
		return reconcile.Result{}, nil // the Launched condition's change brings the NodeClaim back
	}
	if left := launched.Add(c.GracePeriod).Sub(c.clock.Now()); left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	_, err := c.cloudProvider.Get(ctx, nodeClaim.Status.ProviderID)
	if err == nil {
		return reconcile.Result{RequeueAfter: c.Interval}, nil
	}
	if !cloudprovider.IsNodeClaimNotFoundError(err) {
		return reconcile.Result{}, fmt.Errorf("getting instance %s, %w", nodeClaim.Status.ProviderID, err)
	}
	log.FromContext(ctx).Info("Deleting nodeclaim whose instance is gone", "nodeclaim", klog.KObj(nodeClaim), "providerID", nodeClaim.Status.ProviderID)
	c.recorder.Eventf(nodeClaim, nil, corev1.EventTypeWarning, "InstanceNotFound", "GarbageCollect",
		"Deleting the NodeClaim: its instance %s no longer exists in the cloud provider", nodeClaim.Status.ProviderID)
	if err := c.kubeClient.Delete(ctx, nodeClaim); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("deleting nodeclaim, %w", err)
	}
	return reconcile.Result{}, nil
}

// launchedAt is when the NodeClaim's Launched condition turned True, or nil if it is not True.
func launchedAt(nodeClaim *v1.NodeClaim) *time.Time {
	for _, c := range nodeClaim.Status.Conditions {
		if c.Type == v1.ConditionTypeLaunched && c.Status == metav1.ConditionTrue {
			return &c.LastTransitionTime.Time
		}
	}
	return nil
}
