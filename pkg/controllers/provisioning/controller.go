package provisioning

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/joinfailure"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/schedulinginput"
)

// name is the controller's name, and the reporting controller of its events.
const name = "provisioning"

// awaitCache is how often a batch checks again for the NodeClaims the previous one created, and
// forgetCreated how long it waits for one at most (it may have been deleted meanwhile).
const (
	awaitCache    = 100 * time.Millisecond
	forgetCreated = 30 * time.Second
)

// singleton is the one request key: there is one provisioning run for the whole cluster.
var singleton = reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}

// Controller creates NodeClaims for pending pods. Build it with NewController.
type Controller struct {
	kube     client.Client
	cluster  *cluster.Cluster
	cloud    cloudprovider.CloudProvider
	clock    clock.Clock
	recorder events.EventRecorder
	batcher  *Batcher
	metrics  *metrics
	// apiReader reads what joinfailure.Inputs fingerprints; Register sets the manager's.
	apiReader client.Reader
	// JoinFailureHold is how long a recorded join failure holds a NodePool's launches when its
	// inputs do not change; NewController sets joinfailure.DefaultHold.
	JoinFailureHold time.Duration
	// heldPools is set by a batch that left a NodePool out for a held join failure.
	heldPools bool
	// nodeCost is added to the cost of every new node (WithNodeCost).
	nodeCost float64
	// settings are the scheduling policies and default spreads (WithScheduling).
	settings scheduling.Settings

	mu sync.Mutex
	// created are the NodeClaims created by earlier batches that the cache has not shown yet,
	// with when they were created.
	created map[string]time.Time
	// nominated are the pods nominated recently (nominate), with when each was told.
	nominated map[types.UID]time.Time
}

// NewController returns the provisioning controller. kube writes NodeClaims and reads them back
// (through the cache in the operator); view is the cluster view on the same reader; recorder
// records the pods' events; idle and max bound the batch window on clk; metrics go to reg.
func NewController(kube client.Client, view *cluster.Cluster, cloud cloudprovider.CloudProvider, clk clock.Clock,
	recorder events.EventRecorder, reg prometheus.Registerer, idle, max time.Duration, opts ...Option) (*Controller, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("building provisioning metrics, %w", err)
	}
	c := &Controller{
		kube: kube, cluster: view, cloud: cloud, clock: clk, recorder: recorder,
		batcher: NewBatcher(clk, idle, max), metrics: m, created: map[string]time.Time{}, nominated: map[types.UID]time.Time{},
		apiReader: kube, JoinFailureHold: joinfailure.DefaultHold,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Option is an optional setting of NewController.
type Option func(*Controller)

// WithNodeCost adds dollars per hour to the cost of every new node the solver weighs (the
// operator's per-host licences), on top of what the cloud provider prices per node.
func WithNodeCost(dollarsPerHour float64) Option {
	return func(c *Controller) { c.nodeCost = dollarsPerHour }
}

// WithScheduling solves with the operator's scheduling settings (--min-values-policy,
// --preference-policy, --scheduler-config).
func WithScheduling(st scheduling.Settings) Option {
	return func(c *Controller) { c.settings = st }
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Trigger opens or extends the batch window, as a watched event does.
func (c *Controller) Trigger() { c.batcher.Trigger() }

// Register watches unschedulable pods, NodePools, node classes and DaemonSets, and deleted Nodes
// and NodeClaims; each opens or extends the batch and queues the one request.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	c.apiReader = mgr.GetAPIReader()
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		Watches(&corev1.Pod{}, c.podTrigger()).
		Watches(&v1.NodePool{}, c.trigger(nil), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&appsv1.DaemonSet{}, c.trigger(nil), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Node{}, c.trigger(nil), builder.WithPredicates(deletedOnly())).
		Watches(&v1.NodeClaim{}, c.nodeClaimEvents())
	for _, nodeClass := range c.cloud.GetSupportedNodeClasses() {
		b = b.Watches(nodeClass, c.trigger(nil))
	}
	return b.Complete(c)
}

// trigger maps an event to the singleton request, opening or extending the batch when the
// object passes keep (nil keeps everything).
func (c *Controller) trigger(keep func(client.Object) bool) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if keep != nil && !keep(o) {
			return nil
		}
		c.batcher.Trigger()
		return []reconcile.Request{singleton}
	})
}

// podTrigger maps an event of a provisionable pod to the singleton request, opening the batch or
// extending it when the pod is new to it (Batcher.TriggerFor).
func (c *Controller) podTrigger() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		pod, ok := o.(*corev1.Pod)
		if !ok || !schedulinginput.Provisionable(pod) {
			return nil
		}
		c.batcher.TriggerFor(pod.UID)
		return []reconcile.Request{singleton}
	})
}

// nodeClaimEvents marks created NodeClaims as seen by the cache (even if deleted again before the
// next batch), and treats a deleted one as a trigger: its pods need a node again.
func (c *Controller) nodeClaimEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.seen(e.Object.GetName())
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.seen(e.Object.GetName())
			c.batcher.Trigger()
			q.Add(singleton)
		},
	}
}

// seen forgets a created NodeClaim once the cache has shown it.
func (c *Controller) seen(nodeClaim string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.created, nodeClaim)
}

// Reconcile runs a batch once its window has closed, and otherwise asks to be called back when
// it will have.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	wait, open := c.batcher.Wait()
	if !open {
		return reconcile.Result{}, nil
	}
	if wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	if pending, err := c.awaitingCache(ctx); err != nil || pending {
		return reconcile.Result{RequeueAfter: awaitCache}, err
	}
	c.batcher.Take()
	c.heldPools = false
	if err := c.provision(ctx); err != nil {
		c.batcher.Retry()
		return reconcile.Result{}, fmt.Errorf("provisioning pods, %w", err)
	}
	if c.heldPools {
		// What lifts a hold (aws-auth, access entries, time) is not watched: look again.
		c.batcher.Trigger()
		return reconcile.Result{RequeueAfter: heldPoll}, nil
	}
	return reconcile.Result{}, nil
}

// awaitingCache reports whether a NodeClaim an earlier batch created is still missing from the
// reader: solving without it would launch its pods a second node. A NodeClaim counts as shown
// once the reader has it or the watch reported it; after forgetCreated it is given up on.
func (c *Controller) awaitingCache(ctx context.Context) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for nodeClaim, at := range c.created {
		err := c.kube.Get(ctx, types.NamespacedName{Name: nodeClaim}, &v1.NodeClaim{})
		switch {
		case err == nil:
			delete(c.created, nodeClaim)
		case !apierrors.IsNotFound(err):
			return false, fmt.Errorf("reading nodeclaim %s, %w", nodeClaim, err)
		case c.clock.Since(at) > forgetCreated:
			delete(c.created, nodeClaim)
		default:
			log.FromContext(ctx).V(1).Info("Waiting for the cache to show a created nodeclaim", "nodeClaim", nodeClaim)
			return true, nil
		}
	}
	return false, nil
}

// provision runs one batch: solve, create the plan's NodeClaims, and tell the pods.
func (c *Controller) provision(ctx context.Context) error {
	unbound, err := c.cluster.UnboundPods(ctx)
	if err != nil {
		return err
	}
	var pods []*corev1.Pod
	for _, pod := range unbound {
		if schedulinginput.Provisionable(pod) {
			pods = append(pods, pod)
		}
	}
	c.metrics.queueDepth.WithLabelValues(controllerLabel).Set(float64(len(pods)))
	if len(pods) == 0 {
		return nil
	}
	b, err := schedulinginput.NewBatch(ctx, c.cluster, c.cloud, pods, c.held, c.nodeCost)
	if err != nil {
		return err
	}
	c.heldPools = b.Held
	logger := log.FromContext(ctx)
	logger.Info("Solving pending pods", "pods", len(pods), "nodePools", len(b.Input.NodePools), "nodes", len(b.Input.Nodes), "instanceTypes", len(b.Input.InstanceTypes))
	schedulinginput.ApplySettings(ctx, c.kube, c.settings, &b.Input)
	start := c.clock.Now()
	plan, err := scheduling.Solve(&b.Input)
	c.metrics.schedulingDuration.WithLabelValues(controllerLabel).Observe(c.clock.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("solving, %w", err)
	}
	c.metrics.unschedulable.WithLabelValues(controllerLabel).Set(float64(len(plan.Unschedulable)))
	c.forgetNominations()
	for _, p := range plan.Placements {
		if nc, ok := b.Starting[p.Node]; ok {
			c.nominate(p.Pod, nc)
			c.waitingOn(p.Pod, b.NodePools[nc.Labels[v1.NodePoolLabelKey]], nc)
		}
	}
	for _, u := range plan.Unschedulable {
		c.failedScheduling(u, b.Excluded)
	}
	return errors.Join(append(b.Transient, c.createAll(ctx, b, plan.NodeClaims))...)
}

// deletedOnly passes delete events only.
func deletedOnly() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// heldPoll is how soon pods are looked at again while a NodePool's launches are held.
const heldPoll = 15 * time.Second

// held excludes a NodePool whose nodes failed to join MaxLaunchesPerCause times for one certain
// cause with unchanged inputs (joinfailure.Held): launching again would fail the same way.
func (c *Controller) held(ctx context.Context, np *v1.NodePool) (*scheduling.Reason, error) {
	return JoinFailureHold(c.apiReader, c.cloud, c.clock.Now, c.JoinFailureHold)(ctx, np)
}

// JoinFailureHold returns provisioning's hold: a NodePool whose nodes failed to join
// MaxLaunchesPerCause times for one certain cause, with the inputs read through reader unchanged
// since and recorded less than hold before now() (joinfailure.Held), launches nothing. Disruption
// holds the same NodePools, so that it never plans a replacement provisioning would not launch.
func JoinFailureHold(reader client.Reader, cloud cloudprovider.CloudProvider, now func() time.Time, hold time.Duration) schedulinginput.HoldFunc {
	return func(ctx context.Context, np *v1.NodePool) (*scheduling.Reason, error) {
		f, held, err := joinfailure.Held(ctx, reader, cloud, np, now(), hold)
		if err != nil || !held {
			return nil, err
		}
		return &scheduling.Reason{NodePool: np.Name, Code: ReasonNodePoolNotJoining, Message: fmt.Sprintf(
			"its nodes fail to join: %s: %s; launches are held until the NodePool, its node class or kube-system/aws-auth changes, or until %s",
			f.Reason, f.Message, f.Time.Add(hold).UTC().Format(time.RFC3339))}, nil
	}
}
