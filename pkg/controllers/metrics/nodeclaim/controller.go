package nodeclaim

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

const name = "metrics.nodeclaim"

// ReasonUnknown labels a failed join whose NodeClaim has no Registered condition.
const ReasonUnknown = "Unknown"

// Controller keeps the NodeClaim lifecycle counters. Build it with NewController.
type Controller struct {
	launched, registered, initialized *prometheus.CounterVec
	joinFailed                        *prometheus.CounterVec
}

// NewController returns the controller and registers its counters with reg (reusing counters
// already registered there under the same names).
func NewController(reg prometheus.Registerer) (*Controller, error) {
	counter := func(fullName, help string, labels ...string) (*prometheus.CounterVec, error) {
		return joinermetrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: fullName, Help: help}, labels))
	}
	c := &Controller{}
	var err error
	if c.launched, err = counter("karpenter_nodeclaims_launched_total", "NodeClaims whose instance launched (Launched turned True), by NodePool.", "nodepool"); err != nil {
		return nil, err
	}
	if c.registered, err = counter("karpenter_nodeclaims_registered_total", "NodeClaims whose Node registered (Registered turned True), by NodePool.", "nodepool"); err != nil {
		return nil, err
	}
	if c.initialized, err = counter("karpenter_nodeclaims_initialized_total", "NodeClaims whose Node initialized (Initialized turned True), by NodePool.", "nodepool"); err != nil {
		return nil, err
	}
	if c.joinFailed, err = counter("joiner_nodeclaims_join_failed_total",
		"Launched NodeClaims whose Node did not join: counted when Registered turns False, or when the NodeClaim is deleted launched and unregistered; by NodePool and the Registered reason.",
		"nodepool", "reason"); err != nil {
		return nil, err
	}
	return c, nil
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register adds, to run on the leader once mgr starts, a handler on mgr's NodeClaim informer.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	if err := mgr.Add(&watcher{c: c, cache: mgr.GetCache()}); err != nil {
		return fmt.Errorf("registering %s, %w", name, err)
	}
	return nil
}

// watcher is the runnable that adds the informer handler once elected and removes it at stop.
type watcher struct {
	c     *Controller
	cache cache.Cache
}

var (
	_ manager.Runnable               = (*watcher)(nil)
	_ manager.LeaderElectionRunnable = (*watcher)(nil)
)

// NeedLeaderElection is true: only the leader's NodeClaims change, and only it counts.
func (w *watcher) NeedLeaderElection() bool { return true }

// Start adds the handler and blocks until ctx is done.
func (w *watcher) Start(ctx context.Context) error {
	informer, err := w.cache.GetInformer(ctx, &v1.NodeClaim{})
	if err != nil {
		return fmt.Errorf("getting the nodeclaim informer, %w", err)
	}
	handle, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		// Adds are not transitions: at start every existing NodeClaim arrives as one.
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*v1.NodeClaim)
			n, ok2 := newObj.(*v1.NodeClaim)
			if ok1 && ok2 {
				w.c.Observe(o, n)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if nc, ok := obj.(*v1.NodeClaim); ok {
				w.c.Deleted(nc)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watching nodeclaims, %w", err)
	}
	<-ctx.Done()
	if err := informer.RemoveEventHandler(handle); err != nil {
		log.FromContext(ctx).Error(err, "Removing the nodeclaim metrics handler failed")
	}
	return nil
}

// Observe counts the transitions from old to updated: each of Launched, Registered and Initialized
// turning True, and Registered turning False on a launched NodeClaim (a failed join, labelled with
// the reason). A condition that goes back and turns again is counted again.
func (c *Controller) Observe(old, updated *v1.NodeClaim) {
	pool := updated.Labels[v1.NodePoolLabelKey]
	for _, t := range []struct {
		condition string
		counter   *prometheus.CounterVec
	}{
		{v1.ConditionTypeLaunched, c.launched},
		{v1.ConditionTypeRegistered, c.registered},
		{v1.ConditionTypeInitialized, c.initialized},
	} {
		if status(updated, t.condition) == metav1.ConditionTrue && status(old, t.condition) != metav1.ConditionTrue {
			t.counter.WithLabelValues(pool).Inc()
		}
	}
	if status(updated, v1.ConditionTypeLaunched) == metav1.ConditionTrue &&
		status(updated, v1.ConditionTypeRegistered) == metav1.ConditionFalse && status(old, v1.ConditionTypeRegistered) != metav1.ConditionFalse {
		c.joinFailed.WithLabelValues(pool, reason(updated)).Inc()
	}
}

// Deleted counts a NodeClaim removed launched and never registered, unless its Registered=False
// was counted already, as a failed join with the reason of its last Registered condition.
func (c *Controller) Deleted(nc *v1.NodeClaim) {
	registered := status(nc, v1.ConditionTypeRegistered)
	if status(nc, v1.ConditionTypeLaunched) != metav1.ConditionTrue || registered == metav1.ConditionTrue || registered == metav1.ConditionFalse {
		return
	}
	c.joinFailed.WithLabelValues(nc.Labels[v1.NodePoolLabelKey], reason(nc)).Inc()
}

// status is the status of the NodeClaim's condition, "" when it has none.
func status(nc *v1.NodeClaim, conditionType string) metav1.ConditionStatus {
	for _, c := range nc.Status.Conditions {
		if c.Type == conditionType {
			return c.Status
		}
	}
	return ""
}

// reason is the reason of the Registered condition, or ReasonUnknown.
func reason(nc *v1.NodeClaim) string {
	for _, c := range nc.Status.Conditions {
		if c.Type == v1.ConditionTypeRegistered && c.Reason != "" {
			return c.Reason
		}
	}
	return ReasonUnknown
}
