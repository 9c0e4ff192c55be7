package lifecycle

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// liveness deletes a NodeClaim that did not launch within the launch timeout, or did not register
// within the registration timeout after launching, and otherwise asks to be run again when the
// timeout falls due.
func (c *Controller) liveness(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	if isTrue(nodeClaim, v1.ConditionTypeRegistered) {
		return reconcile.Result{}, nil
	}
	now := c.clock.Now()
	launched := findCondition(nodeClaim.Status.Conditions, v1.ConditionTypeLaunched)
	if launched == nil || launched.Status != metav1.ConditionTrue {
		left := nodeClaim.CreationTimestamp.Add(c.LaunchTimeout).Sub(now)
		if left > 0 {
			return reconcile.Result{RequeueAfter: left}, nil
		}
		message := "no launch attempt recorded"
		if launched != nil {
			message = launched.Message
		}
		return reconcile.Result{}, c.expire(ctx, nodeClaim, "LaunchTimeout",
			fmt.Sprintf("NodeClaim did not launch within %s; deleting it. Last launch status: %s", c.LaunchTimeout, message))
	}
	timeout, err := c.registrationTimeout(ctx, nodeClaim)
	if err != nil {
		return reconcile.Result{}, err
	}
	left := launched.LastTransitionTime.Add(timeout).Sub(now)
	if left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	message := "no Node was seen"
	if registered := findCondition(nodeClaim.Status.Conditions, v1.ConditionTypeRegistered); registered != nil {
		message = registered.Message
	}
	return reconcile.Result{}, c.expire(ctx, nodeClaim, "RegistrationTimeout",
		fmt.Sprintf("NodeClaim did not register within %s of launching; deleting it. Last registration status: %s", timeout, message))
}

// registrationTimeout is the NodePool's karpenter.sh/registration-timeout, or the default when the
// NodePool is gone or has none. A value that does not parse is reported and the default used.
func (c *Controller) registrationTimeout(ctx context.Context, nodeClaim *v1.NodeClaim) (time.Duration, error) {
	name := nodeClaim.Labels[v1.NodePoolLabelKey]
	if name == "" {
		return c.RegistrationTimeout, nil
	}
	nodePool := &v1.NodePool{}
	if err := c.kubeClient.Get(ctx, client.ObjectKey{Name: name}, nodePool); err != nil {
		if apierrors.IsNotFound(err) {
			return c.RegistrationTimeout, nil
		}
		return 0, fmt.Errorf("getting nodepool %s, %w", name, err)
	}
	value, ok := nodePool.Annotations[v1.RegistrationTimeoutAnnotationKey]
	if !ok {
		return c.RegistrationTimeout, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		log.FromContext(ctx).Info("Ignoring invalid registration timeout of nodepool", "nodepool", name, "value", value)
		return c.RegistrationTimeout, nil
	}
	return d, nil
}

// expire deletes the NodeClaim with a Warning event carrying the reason and message.
func (c *Controller) expire(ctx context.Context, nodeClaim *v1.NodeClaim, reason, message string) error {
	log.FromContext(ctx).Info("Deleting nodeclaim", "reason", reason, "message", message)
	c.recorder.Eventf(nodeClaim, nil, corev1.EventTypeWarning, reason, "Delete", "%s", message)
	if err := c.kubeClient.Delete(ctx, nodeClaim); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting nodeclaim, %w", err)
	}
	nodeClaim.DeletionTimestamp = &metav1.Time{Time: c.clock.Now()}
	return nil
}
