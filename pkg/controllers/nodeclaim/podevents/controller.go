package podevents

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

const name = "nodeclaim.podevents"

// DedupeWindow is the shortest time between two writes of one NodeClaim's lastPodEventTime. Pods
// bind and leave often in a busy cluster; this bounds the writes to one per node per window.
const DedupeWindow = 5 * time.Second

// Controller records pod events on NodeClaims. Build it with NewController.
type Controller struct {
	kube  client.Client
	clock clock.PassiveClock
}

// NewController returns the pod events controller. kube lists NodeClaims and patches their status.
func NewController(kube client.Client, clk clock.PassiveClock) *Controller {
	return &Controller{kube: kube, clock: clk}
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return name }

// nodeNameIndex indexes NodeClaims by status.nodeName in the manager's cache.
const nodeNameIndex = "podevents.joiner.dev/node-name"

// Register adds the controller to mgr, watching Pods; each request is a node's name. It indexes
// NodeClaims by status.nodeName, which Reconcile looks them up by.
func (c *Controller) Register(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1.NodeClaim{}, nodeNameIndex, func(o client.Object) []string {
		if n := o.(*v1.NodeClaim).Status.NodeName; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing nodeclaims by status.nodeName, %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				pod := e.Object.(*corev1.Pod)
				if counts(pod) && !finished(pod) && c.clock.Since(pod.CreationTimestamp.Time) < DedupeWindow {
					enqueue(q, pod.Spec.NodeName)
				}
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if nodeName := changed(e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)); nodeName != "" {
					enqueue(q, nodeName)
				}
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				pod, ok := e.Object.(*corev1.Pod)
				if ok && counts(pod) && !finished(pod) {
					enqueue(q, pod.Spec.NodeName) // a finished pod already counted when it finished
				}
			},
		}).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s, %w", name, err)
	}
	return nil
}

func enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], nodeName string) {
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: nodeName}})
}

// changed returns the node whose pods an update changed: the pod was bound, finished or started
// terminating. It returns "" when the update is no pod event.
func changed(old, pod *corev1.Pod) string {
	if !counts(pod) {
		return ""
	}
	bound := old.Spec.NodeName == ""
	terminal := !finished(old) && finished(pod)
	terminating := old.DeletionTimestamp.IsZero() && !pod.DeletionTimestamp.IsZero()
	if bound || terminal || terminating {
		return pod.Spec.NodeName
	}
	return ""
}

// counts reports whether the pod is bound and is one whose arrival or departure makes a node
// busy: not a DaemonSet's (every node runs those) and not a mirror pod (the kubelet's own).
func counts(pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "DaemonSet" {
			return false
		}
	}
	return true
}

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// Reconcile sets status.lastPodEventTime to now on the NodeClaim of the node named by req, unless
// it was written less than DedupeWindow ago; then it asks to come back when the window ends. A
// node without a NodeClaim (not Joiner's, or not registered yet) is skipped. If the returned
// error is non-nil the Result is ignored and the request is requeued with backoff.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nodeClaim, err := c.nodeClaimOf(ctx, req.Name)
	if err != nil || nodeClaim == nil || !nodeClaim.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, err
	}
	now := c.clock.Now()
	if last := nodeClaim.Status.LastPodEventTime; !last.IsZero() {
		if left := last.Add(DedupeWindow).Sub(now); left > 0 {
			return reconcile.Result{RequeueAfter: left}, nil
		}
	}
	stored := nodeClaim.DeepCopy()
	nodeClaim.Status.LastPodEventTime.Time = now
	log.FromContext(ctx).V(1).Info("Recording pod event", "nodeclaim", klog.KObj(nodeClaim), "node", req.Name)
	if err := c.kube.Status().Patch(ctx, nodeClaim, client.MergeFrom(stored)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching lastPodEventTime, %w", err))
	}
	return reconcile.Result{}, nil
}

// nodeClaimOf returns the NodeClaim whose status.nodeName is nodeName, or nil.
func (c *Controller) nodeClaimOf(ctx context.Context, nodeName string) (*v1.NodeClaim, error) {
	var list v1.NodeClaimList
	// Through the index (a pod event of a scale-up listed every NodeClaim), and the cache's
	// objects themselves; only the one returned, which the caller changes, is copied.
	if err := c.kube.List(ctx, &list, client.MatchingFields{nodeNameIndex: nodeName}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodeclaims, %w", err)
	}
	for i := range list.Items {
		if list.Items[i].Status.NodeName == nodeName {
			return list.Items[i].DeepCopy(), nil
		}
	}
	return nil, nil
}
