package lifecycle

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// launch creates the NodeClaim's instance, once: a NodeClaim with a providerID is launched.
func (c *Controller) launch(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	now := c.clock.Now()
	if nodeClaim.Status.ProviderID != "" {
		setCondition(nodeClaim, v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "Instance "+nodeClaim.Status.ProviderID+" launched", now)
		return reconcile.Result{}, nil
	}
	log.FromContext(ctx).Info("Launching instance")
	launched, err := c.cloudProvider.Create(ctx, nodeClaim)
	switch {
	case err == nil:
	case cloudprovider.IsInsufficientCapacityError(err):
		log.FromContext(ctx).Info("Deleting nodeclaim that could not be launched", "error", err.Error())
		c.recorder.Eventf(nodeClaim, nil, corev1.EventTypeWarning, "InsufficientCapacity", "Launch", "Deleting the NodeClaim so that provisioning chooses again: %s", err.Error())
		if err := c.kubeClient.Delete(ctx, nodeClaim); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("deleting nodeclaim, %w", err)
		}
		nodeClaim.DeletionTimestamp = &metav1.Time{Time: now}
		return reconcile.Result{}, nil
	case cloudprovider.IsNodeClassNotReadyError(err):
		setCondition(nodeClaim, v1.ConditionTypeLaunched, metav1.ConditionFalse, "NodeClassNotReady", err.Error(), now)
		return reconcile.Result{RequeueAfter: nodeClassNotReadyRetry}, nil
	case cloudprovider.IsCreateError(err):
		ce := cloudprovider.AsCreateError(err)
		setCondition(nodeClaim, v1.ConditionTypeLaunched, metav1.ConditionFalse, ce.ConditionReason, ce.ConditionMessage, now)
		return reconcile.Result{}, fmt.Errorf("launching nodeclaim, %w", err)
	default:
		setCondition(nodeClaim, v1.ConditionTypeLaunched, metav1.ConditionUnknown, "LaunchFailed", err.Error(), now)
		return reconcile.Result{}, fmt.Errorf("launching nodeclaim, %w", err)
	}
	nodeClaim.Status.ProviderID = launched.Status.ProviderID
	nodeClaim.Status.ImageID = launched.Status.ImageID
	nodeClaim.Status.Capacity = launched.Status.Capacity
	nodeClaim.Status.Allocatable = launched.Status.Allocatable
	if nodeClaim.Labels == nil {
		nodeClaim.Labels = map[string]string{}
	}
	maps.Copy(nodeClaim.Labels, launched.Labels)
	log.FromContext(ctx).Info("Launched instance", "providerID", launched.Status.ProviderID,
		"instanceType", launched.Labels[corev1.LabelInstanceTypeStable], "zone", launched.Labels[corev1.LabelTopologyZone],
		"capacityType", launched.Labels[v1.CapacityTypeLabelKey])
	setCondition(nodeClaim, v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "Instance "+nodeClaim.Status.ProviderID+" launched", now)
	return reconcile.Result{}, nil
}
