package lifetime

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

const name = "metrics.lifetime"

// Controller keeps the counters. Build it with NewController.
type Controller struct {
	clock clock.PassiveClock

	nodesCreated, nodesTerminated, claimsTerminated *prometheus.CounterVec
	nodeTermination                                 *prometheus.SummaryVec
	nodeLifetime, claimTermination                  *prometheus.HistogramVec
}

// NewController returns the controller and registers its metrics with reg (reusing those already
// registered there); clk times terminations and lifetimes.
func NewController(clk clock.PassiveClock, reg prometheus.Registerer) (*Controller, error) {
	day := 24 * time.Hour
	var lifetimeBuckets []float64
	for _, d := range []time.Duration{15 * time.Minute, 30 * time.Minute, 45 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour,
		6 * time.Hour, 8 * time.Hour, 10 * time.Hour, 12 * time.Hour, 16 * time.Hour, 20 * time.Hour,
		day, 2 * day, 3 * day, 5 * day, 10 * day, 15 * day, 20 * day, 25 * day, 30 * day} {
		lifetimeBuckets = append(lifetimeBuckets, d.Seconds())
	}
	c := &Controller{clock: clk}
	var err error
	if c.nodesCreated, err = joinermetrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "karpenter", Subsystem: "nodes", Name: "created_total",
		Help: "Number of nodes created in total by Karpenter. Labeled by owning nodepool and zone.",
	}, []string{"nodepool", "zone"})); err != nil {
		return nil, err
	}
	if c.nodesTerminated, err = joinermetrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "karpenter", Subsystem: "nodes", Name: "terminated_total",
		Help: "Number of nodes terminated in total by Karpenter. Labeled by owning nodepool and zone.",
	}, []string{"nodepool", "zone"})); err != nil {
		return nil, err
	}
	if c.claimsTerminated, err = joinermetrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "karpenter", Subsystem: "nodeclaims", Name: "terminated_total",
		Help: "Number of nodeclaims terminated in total by Karpenter. Labeled by the owning nodepool, capacity type, and zone.",
	}, []string{"nodepool", "capacity_type", "zone"})); err != nil {
		return nil, err
	}
	if c.nodeTermination, err = joinermetrics.Register(reg, prometheus.NewSummaryVec(prometheus.SummaryOpts{
		Namespace: "karpenter", Subsystem: "nodes", Name: "termination_duration_seconds",
		Help:       "The time taken between a node's deletion request and the removal of its finalizer",
		Objectives: map[float64]float64{0: 0.01, 0.5: 0.01, 0.9: 0.01, 0.99: 0.01, 1: 0.01},
	}, []string{"nodepool"})); err != nil {
		return nil, err
	}
	if c.nodeLifetime, err = joinermetrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "karpenter", Subsystem: "nodes", Name: "lifetime_duration_seconds",
		Help: "The lifetime duration of the nodes since creation.", Buckets: lifetimeBuckets,
	}, []string{"nodepool"})); err != nil {
		return nil, err
	}
	if c.claimTermination, err = joinermetrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "karpenter", Subsystem: "nodeclaims", Name: "termination_duration_seconds",
		Help: "Duration of NodeClaim termination in seconds.", Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"nodepool"})); err != nil {
		return nil, err
	}
	return c, nil
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register adds, to run on the leader once mgr starts, handlers on mgr's Node and NodeClaim
// informers.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	if err := mgr.Add(&watcher{c: c, cache: mgr.GetCache()}); err != nil {
		return fmt.Errorf("registering %s, %w", name, err)
	}
	return nil
}

// watcher is the runnable that adds the informer handlers once elected and removes them at stop.
type watcher struct {
	c     *Controller
	cache cache.Cache
}

var (
	_ manager.Runnable               = (*watcher)(nil)
	_ manager.LeaderElectionRunnable = (*watcher)(nil)
)

// NeedLeaderElection is true: only the leader counts.
func (w *watcher) NeedLeaderElection() bool { return true }

// Start adds the handlers and blocks until ctx is done.
func (w *watcher) Start(ctx context.Context) error {
	deleted := func(obj any) client.Object {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		o, _ := obj.(client.Object)
		return o
	}
	handlers := []struct {
		obj     client.Object
		handler toolscache.ResourceEventHandlerFuncs
	}{
		{&v1.NodeClaim{}, toolscache.ResourceEventHandlerFuncs{
			UpdateFunc: func(oldObj, newObj any) {
				o, ok1 := oldObj.(*v1.NodeClaim)
				n, ok2 := newObj.(*v1.NodeClaim)
				if ok1 && ok2 {
					w.c.NodeClaimUpdated(o, n)
				}
			},
			DeleteFunc: func(obj any) {
				if nc, ok := deleted(obj).(*v1.NodeClaim); ok {
					w.c.NodeClaimDeleted(nc)
				}
			},
		}},
		{&corev1.Node{}, toolscache.ResourceEventHandlerFuncs{
			DeleteFunc: func(obj any) {
				if node, ok := deleted(obj).(*corev1.Node); ok {
					w.c.NodeDeleted(node)
				}
			},
		}},
	}
	type added struct {
		informer cache.Informer
		handle   toolscache.ResourceEventHandlerRegistration
	}
	var done []added
	defer func() {
		for _, a := range done {
			if err := a.informer.RemoveEventHandler(a.handle); err != nil {
				log.FromContext(ctx).Error(err, "Removing a lifetime metrics handler failed")
			}
		}
	}()
	for _, h := range handlers {
		informer, err := w.cache.GetInformer(ctx, h.obj)
		if err != nil {
			return fmt.Errorf("getting the %T informer, %w", h.obj, err)
		}
		handle, err := informer.AddEventHandler(h.handler)
		if err != nil {
			return fmt.Errorf("watching %T, %w", h.obj, err)
		}
		done = append(done, added{informer, handle})
	}
	<-ctx.Done()
	return nil
}

// NodeClaimUpdated counts a node created when the NodeClaim's Registered condition turns True.
func (c *Controller) NodeClaimUpdated(old, updated *v1.NodeClaim) {
	if registered(updated) && !registered(old) {
		c.nodesCreated.WithLabelValues(updated.Labels[v1.NodePoolLabelKey], updated.Labels[corev1.LabelTopologyZone]).Inc()
	}
}

// NodeClaimDeleted counts a NodeClaim gone from the API server and how long its termination took.
func (c *Controller) NodeClaimDeleted(nc *v1.NodeClaim) {
	pool := nc.Labels[v1.NodePoolLabelKey]
	c.claimsTerminated.WithLabelValues(pool, nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[corev1.LabelTopologyZone]).Inc()
	if nc.DeletionTimestamp != nil {
		c.claimTermination.WithLabelValues(pool).Observe(max(c.clock.Since(nc.DeletionTimestamp.Time).Seconds(), 0))
	}
}

// NodeDeleted counts a Node of a NodePool gone from the API server, how long its termination took
// and how long it lived. Nodes no NodePool owns are not Joiner's to count.
func (c *Controller) NodeDeleted(node *corev1.Node) {
	pool, ok := node.Labels[v1.NodePoolLabelKey]
	if !ok {
		return
	}
	c.nodesTerminated.WithLabelValues(pool, node.Labels[corev1.LabelTopologyZone]).Inc()
	if node.DeletionTimestamp != nil {
		c.nodeTermination.WithLabelValues(pool).Observe(max(c.clock.Since(node.DeletionTimestamp.Time).Seconds(), 0))
	}
	c.nodeLifetime.WithLabelValues(pool).Observe(max(c.clock.Since(node.CreationTimestamp.Time).Seconds(), 0))
}

func registered(nc *v1.NodeClaim) bool {
	for _, cond := range nc.Status.Conditions {
		if cond.Type == v1.ConditionTypeRegistered {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return false
}
