package status

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/drift"
	"github.com/joinerhq/joiner/pkg/aws/nodeclass"
)

const name = "ec2nodeclass.status"

// Requeue intervals.
const (
	// NotReadyRequeue is how soon a class that is not Ready (validation failing, nothing
	// matched) is resolved again.
	NotReadyRequeue = time.Minute
	// ReadyRequeue is how often a Ready class is resolved again.
	ReadyRequeue = 5 * time.Minute
)

// InstanceProfiles deletes the instance profile Joiner made for a class (instanceprofile.Provider).
type InstanceProfiles interface {
	Delete(ctx context.Context, nodeClass *awsv1.EC2NodeClass) error
}

// Controller keeps EC2NodeClass status. Build it with NewController.
type Controller struct {
	kube     client.Client
	resolver *nodeclass.Resolver
	profiles InstanceProfiles
	clock    clock.PassiveClock
}

// NewController returns the EC2NodeClass status controller.
func NewController(kube client.Client, resolver *nodeclass.Resolver, profiles InstanceProfiles, clk clock.PassiveClock) *Controller {
	return &Controller{kube: kube, resolver: resolver, profiles: profiles, clock: clk}
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register reconciles each EC2NodeClass when it changes.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(name).For(&awsv1.EC2NodeClass{}).
		Complete(reconcile.AsReconciler(mgr.GetClient(), c))
}

// Reconcile resolves the class's status, or finalizes its deletion.
func (c *Controller) Reconcile(ctx context.Context, nc *awsv1.EC2NodeClass) (reconcile.Result, error) {
	if !nc.DeletionTimestamp.IsZero() {
		return c.finalize(ctx, nc)
	}
	stored := nc.DeepCopy()
	controllerutil.AddFinalizer(nc, awsv1.TerminationFinalizer)
	hash, err := drift.NodeClassHash(nc)
	if err != nil {
		return reconcile.Result{}, err
	}
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	nc.Annotations[awsv1.AnnotationEC2NodeClassHash] = hash
	nc.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = drift.HashVersion
	if !equality.Semantic.DeepEqual(stored.ObjectMeta, nc.ObjectMeta) {
		if err := c.kube.Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching EC2NodeClass %s, %w", nc.Name, err))
		}
	}
	stored = nc.DeepCopy()
	resolveErr := c.resolver.Resolve(ctx, nc)
	if resolveErr != nil {
		log.FromContext(ctx).Error(resolveErr, "Resolving EC2NodeClass status")
	}
	if !equality.Semantic.DeepEqual(stored.Status, nc.Status) {
		if err := c.kube.Status().Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching EC2NodeClass %s status, %w", nc.Name, err))
		}
	}
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) {
		return reconcile.Result{RequeueAfter: NotReadyRequeue}, nil
	}
	return reconcile.Result{RequeueAfter: ReadyRequeue}, nil
}

// finalize waits for the class's NodeClaims to go, deletes its instance profile, and releases
// the finalizer.
func (c *Controller) finalize(ctx context.Context, nc *awsv1.EC2NodeClass) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(nc, awsv1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	claims := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, claims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeclaims, %w", err)
	}
	for _, claim := range claims.Items {
		if ref := claim.Spec.NodeClassRef; ref != nil && ref.Name == nc.Name {
			log.FromContext(ctx).V(1).Info("Waiting for NodeClaims of the EC2NodeClass to go", "nodeclaim", claim.Name)
			return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
		}
	}
	if err := c.profiles.Delete(ctx, nc); err != nil {
		return reconcile.Result{}, fmt.Errorf("finalizing EC2NodeClass %s, %w", nc.Name, err)
	}
	stored := nc.DeepCopy()
	controllerutil.RemoveFinalizer(nc, awsv1.TerminationFinalizer)
	if err := c.kube.Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer of EC2NodeClass %s, %w", nc.Name, err))
	}
	return reconcile.Result{}, nil
}
