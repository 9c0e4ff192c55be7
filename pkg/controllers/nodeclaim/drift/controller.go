package drift

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

const name = "nodeclaim.drift"

// PollInterval is how often a NodeClaim is checked again for drift only the cloud sees.
const PollInterval = 5 * time.Minute

// Reasons of the Drifted condition found here; the cloud provider adds its own.
const (
	ReasonNodePoolDrifted      cloudprovider.DriftReason = "NodePoolDrifted"
	ReasonRequirementsDrifted  cloudprovider.DriftReason = "RequirementsDrifted"
	ReasonInstanceTypeNotFound cloudprovider.DriftReason = "InstanceTypeNotFound"
)

// Controller keeps the Drifted condition. Build it with NewController.
type Controller struct {
	kube  client.Client
	cloud cloudprovider.CloudProvider
	clock clock.PassiveClock
}

// NewController returns the controller. kube reads NodePools and patches NodeClaim status; cloud
// gives the instance types and the cloud's drift reasons.
func NewController(kube client.Client, cloud cloudprovider.CloudProvider, clk clock.PassiveClock) *Controller {
	return &Controller{kube: kube, cloud: cloud, clock: clk}
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return name }

// Register adds the controller to mgr: a NodeClaim is reconciled when it changes, or when its
// NodePool or node class does.
func (c *Controller) Register(_ context.Context, mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&v1.NodeClaim{}, builder.WithPredicates(driftInputChanged())).
		// Drift reads the NodePool's spec only. Its status changes with every node launched or
		// registered; looking again at every NodeClaim of the pool each time made a scale-up
		// of n nodes read the cloud for n² drift checks.
		Watches(&v1.NodePool{}, handler.EnqueueRequestsFromMapFunc(c.byNodePool), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	for _, nodeClass := range c.cloud.GetSupportedNodeClasses() {
		b = b.Watches(nodeClass, handler.EnqueueRequestsFromMapFunc(c.byNodeClass))
	}
	if err := b.Complete(reconcile.AsReconciler(mgr.GetClient(), c)); err != nil {
		return fmt.Errorf("registering %s, %w", name, err)
	}
	return nil
}

// driftInputChanged passes a NodeClaim's creation, deletion, and every update that changes what
// drifted reads of it: its spec, labels, annotations, provider ID, or deletion. Its status
// otherwise changes with every phase of its lifecycle (launched, registered, initialized) and
// every pod bound to its node (lastPodEventTime), and each drift check reads the cloud (a
// DescribeInstances call): in a 1,000-pod scale-up those updates were thousands of checks of
// instances launched seconds before. What only the cloud sees is polled (PollInterval). The node
// name is an input too: the check tags the instance with it (its Name tag, as Karpenter's), so
// that the tag follows registration within seconds rather than at the next poll.
func driftInputChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*v1.NodeClaim)
		nc, newOK := e.ObjectNew.(*v1.NodeClaim)
		if !oldOK || !newOK {
			return true
		}
		return old.Generation != nc.Generation || old.Status.ProviderID != nc.Status.ProviderID || old.Status.NodeName != nc.Status.NodeName ||
			!old.DeletionTimestamp.Equal(nc.DeletionTimestamp) ||
			!maps.Equal(old.Labels, nc.Labels) || !maps.Equal(old.Annotations, nc.Annotations)
	}}
}

func (c *Controller) byNodePool(ctx context.Context, nodePool client.Object) []reconcile.Request {
	return c.requests(ctx, func(nc *v1.NodeClaim) bool { return nc.Labels[v1.NodePoolLabelKey] == nodePool.GetName() })
}

func (c *Controller) byNodeClass(ctx context.Context, nodeClass client.Object) []reconcile.Request {
	return c.requests(ctx, func(nc *v1.NodeClaim) bool {
		return nc.Spec.NodeClassRef != nil && nc.Spec.NodeClassRef.Name == nodeClass.GetName()
	})
}

func (c *Controller) requests(ctx context.Context, keep func(*v1.NodeClaim) bool) []reconcile.Request {
	var list v1.NodeClaimList
	// Read only, for the names: the cache's objects themselves, not copies.
	if err := c.kube.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "Listing nodeclaims failed")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if keep(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return out
}

// Reconcile sets or removes Drifted and patches the status if it changed. If the returned error
// is non-nil the Result is ignored and the request is requeued with backoff.
func (c *Controller) Reconcile(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	if !nodeClaim.DeletionTimestamp.IsZero() || nodeClaim.Status.ProviderID == "" {
		return reconcile.Result{}, nil
	}
	reason, message, err := c.drifted(ctx, nodeClaim)
	if err != nil {
		return reconcile.Result{}, err
	}
	stored := nodeClaim.DeepCopy()
	if reason != "" {
		meta.SetStatusCondition(&nodeClaim.Status.Conditions, metav1.Condition{
			Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: string(reason), Message: message,
			ObservedGeneration: nodeClaim.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now()),
		})
	} else {
		meta.RemoveStatusCondition(&nodeClaim.Status.Conditions, v1.ConditionTypeDrifted)
	}
	if !equality.Semantic.DeepEqual(stored.Status, nodeClaim.Status) {
		log.FromContext(ctx).Info("Updating drifted", "nodeclaim", klog.KObj(nodeClaim), "reason", reason)
		if err := c.kube.Status().Patch(ctx, nodeClaim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching drifted, %w", err))
		}
	}
	return reconcile.Result{RequeueAfter: PollInterval}, nil
}

// drifted returns the first drift reason found and a message, or "".
func (c *Controller) drifted(ctx context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.DriftReason, string, error) {
	poolName := nodeClaim.Labels[v1.NodePoolLabelKey]
	if poolName == "" {
		return "", "", nil
	}
	nodePool := &v1.NodePool{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: poolName}, nodePool); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", nil
		}
		return "", "", fmt.Errorf("getting nodepool %s, %w", poolName, err)
	}
	if reason, message := Static(nodePool, nodeClaim); reason != "" {
		return reason, message, nil
	}
	if it := nodeClaim.Labels[corev1.LabelInstanceTypeStable]; it != "" {
		types, err := c.cloud.GetInstanceTypes(ctx, nodePool)
		switch {
		case cloudprovider.IsNodeClassNotReadyError(err):
			// Nothing to compare with: not drift.
		case err != nil:
			return "", "", fmt.Errorf("getting instance types of nodepool %s, %w", poolName, err)
		case !slices.ContainsFunc(types, func(t *cloudprovider.InstanceType) bool { return t.Name == it }):
			return ReasonInstanceTypeNotFound, fmt.Sprintf("Instance type %s is no longer offered for nodepool %s", it, poolName), nil
		}
	}
	reason, err := c.cloud.IsDrifted(ctx, nodeClaim)
	if cloudprovider.IsNodeClaimNotFoundError(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("checking drift of nodeclaim %s with the cloud provider, %w", nodeClaim.Name, err)
	}
	if reason != "" {
		return reason, fmt.Sprintf("The instance no longer matches its node class: %s", reason), nil
	}
	return "", "", nil
}

// Static returns the drift found without the cloud: NodePoolDrifted or RequirementsDrifted, with
// a message, or "".
func Static(nodePool *v1.NodePool, nodeClaim *v1.NodeClaim) (cloudprovider.DriftReason, string) {
	hash, ok := nodeClaim.Annotations[v1.NodePoolHashAnnotationKey]
	if ok && nodeClaim.Annotations[v1.NodePoolHashVersionAnnotationKey] == v1.NodePoolHashVersion {
		if now := nodePool.Hash(); now != hash {
			return ReasonNodePoolDrifted, fmt.Sprintf("The template of nodepool %s changed (hash %s, the nodeclaim was made from %s)", nodePool.Name, now, hash)
		}
	}
	reqs, err := scheduling.FromNodePoolRequirements(nodePool.Spec.Template.Spec.Requirements)
	if err != nil {
		return "", ""
	}
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		value, ok := nodeClaim.Labels[key]
		if ok && !reqs[key].Has(value) {
			return ReasonRequirementsDrifted, fmt.Sprintf("Label %s=%s is no longer allowed by nodepool %s: %s", key, value, nodePool.Name, reqs[key])
		}
	}
	return "", ""
}
