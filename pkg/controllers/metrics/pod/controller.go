package pod

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
)

const name = "metrics.pod"

// Controller keeps the per-pod metrics. Build it with NewController.
type Controller struct {
	kube    client.Reader
	clock   clock.PassiveClock
	startup prometheus.Summary

	// mu guards pods, which Reconcile writes and scrapes read.
	mu   sync.Mutex
	pods map[types.NamespacedName]*record
}

// record is what the metrics need to remember of one pod.
type record struct {
	uid types.UID
	// labels are the values of karpenter_pods_state, in stateLabels order.
	labels []string
	// unbound is true while the pod has no node and is not finished; created is its creation.
	unbound bool
	created time.Time
	// startupDone is true once startup was observed, or when the pod was Ready when first seen.
	startupDone bool
}

// NewController returns the pod metrics controller and registers its metrics with reg. kube
// reads pods and nodes; clk times unbound pods.
func NewController(kube client.Reader, clk clock.PassiveClock, reg prometheus.Registerer) (*Controller, error) {
	c := &Controller{kube: kube, clock: clk, startup: newStartupSummary(), pods: map[types.NamespacedName]*record{}}
	if err := register(reg, collector{c: c}, c.startup); err != nil {
		return nil, err
	}
	return c, nil
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register reconciles each pod when it changes, and the pods bound to a node when the node's
// labels change. Mapping a node to its pods uses the cluster.PodNodeNameField index, which
// controllers.New registers on the manager's cache.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	kube := mgr.GetClient()
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&corev1.Pod{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, node client.Object) []reconcile.Request {
			var pods corev1.PodList
			if err := kube.List(ctx, &pods, client.MatchingFields{cluster.PodNodeNameField: node.GetName()}); err != nil {
				log.FromContext(ctx).Error(err, "Listing pods of a relabelled node failed", "node", node.GetName())
				return nil
			}
			out := make([]reconcile.Request, 0, len(pods.Items))
			for i := range pods.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pods.Items[i])})
			}
			return out
		}), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(c)
}

// Reconcile brings the pod's metrics up to date, or forgets the pod when it is gone. It is the
// plain reconcile.Reconciler because a gone pod must still be forgotten by its key.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := c.kube.Get(ctx, req.NamespacedName, pod); err != nil {
		if apierrors.IsNotFound(err) {
			c.forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading pod, %w", err)
	}
	node, err := c.nodeOf(ctx, pod)
	if err != nil {
		return reconcile.Result{}, err
	}
	if d, ok := c.update(pod, node); ok {
		log.FromContext(ctx).V(1).Info("Observing pod startup", "duration", d)
		c.startup.Observe(d.Seconds())
	}
	return reconcile.Result{}, nil
}

// nodeOf returns the node the pod is bound to, or nil when it is unbound or the node is gone.
func (c *Controller) nodeOf(ctx context.Context, pod *corev1.Pod) (*corev1.Node, error) {
	if pod.Spec.NodeName == "" {
		return nil, nil
	}
	node := &corev1.Node{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading node %s, %w", pod.Spec.NodeName, err)
	}
	return node, nil
}

// update records the pod's current state. It returns the startup duration to observe, and true,
// the first time it sees Ready a pod it saw not Ready before.
func (c *Controller) update(pod *corev1.Pod, node *corev1.Node) (time.Duration, bool) {
	ready := readyCondition(pod)
	key := client.ObjectKeyFromObject(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.pods[key]
	if rec == nil || rec.uid != pod.UID {
		// A new pod, or a new one under an old name: Ready already means we missed its start.
		rec = &record{uid: pod.UID, startupDone: ready != nil}
		c.pods[key] = rec
	}
	rec.labels = stateValues(pod, node)
	rec.created = pod.CreationTimestamp.Time
	rec.unbound = pod.Spec.NodeName == "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
	if rec.startupDone || ready == nil {
		return 0, false
	}
	rec.startupDone = true
	readyAt := ready.LastTransitionTime.Time
	if readyAt.IsZero() {
		readyAt = c.clock.Now()
	}
	return max(readyAt.Sub(rec.created), 0), true
}

// forget drops what is remembered of a gone pod, and so its series.
func (c *Controller) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, key)
}

// readyCondition returns the pod's Ready condition when it is True, else nil.
func readyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if cond := &pod.Status.Conditions[i]; cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			return cond
		}
	}
	return nil
}

// stateValues returns the karpenter_pods_state label values, in stateLabels order. node may be
// nil, leaving its labels empty.
func stateValues(pod *corev1.Pod, node *corev1.Node) []string {
	var nodeLabels map[string]string
	if node != nil {
		nodeLabels = node.Labels
	}
	return []string{
		pod.Name, pod.Namespace, owner(pod), pod.Spec.NodeName, strconv.FormatBool(pod.Spec.NodeName != ""),
		nodeLabels[v1.NodePoolLabelKey], nodeLabels[corev1.LabelTopologyZone], nodeLabels[corev1.LabelArchStable],
		nodeLabels[v1.CapacityTypeLabelKey], nodeLabels[corev1.LabelInstanceTypeStable],
		string(pod.Status.Phase), strconv.FormatBool(readyCondition(pod) != nil),
		strconv.FormatBool(nodeLabels[v1.NodePoolLabelKey] != ""),
	}
}

// owner is the pod's first owner reference as the self link Karpenter labels it with
// (/apis/apps/v1/namespaces/default/replicasets/app-7d4b9); empty if none. Karpenter uses the
// API version as is, so a core owner's link reads /apis/v1/...
func owner(pod *corev1.Pod) string {
	if len(pod.OwnerReferences) == 0 {
		return ""
	}
	ref := pod.OwnerReferences[0]
	return fmt.Sprintf("/apis/%s/namespaces/%s/%ss/%s", ref.APIVersion, pod.Namespace, strings.ToLower(ref.Kind), ref.Name)
}
