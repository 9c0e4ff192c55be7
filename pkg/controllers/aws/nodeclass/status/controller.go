package status

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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
	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
)

const name = "ec2nodeclass.status"

// Requeue intervals.
const (
	// NotReadyRequeue is how soon a class that is not Ready (validation failing, nodes that
	// cannot join, nothing matched) is resolved again: a fix made in AWS (a policy, an access
	// entry), which no watch sees, turns the class Ready within this.
	NotReadyRequeue = 15 * time.Second
	// ReadyRequeue is how often a Ready class is resolved again: the join check (the node
	// role's mapping, which an administrator changes outside Kubernetes) is re-read every minute.
	ReadyRequeue = time.Minute
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
	recorder events.EventRecorder

	// reported holds, per class, the join findings already sent as events, so that a finding
	// is reported once while it holds, not at every reconcile.
	mu       sync.Mutex
	reported map[string][]nodejoin.Finding
}

// NewController returns the EC2NodeClass status controller. recorder receives a Warning event
// for each join finding when it first appears.
func NewController(kube client.Client, resolver *nodeclass.Resolver, profiles InstanceProfiles, clk clock.PassiveClock, recorder events.EventRecorder) *Controller {
	return &Controller{kube: kube, resolver: resolver, profiles: profiles, clock: clk, recorder: recorder, reported: map[string][]nodejoin.Finding{}}
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register reconciles each EC2NodeClass when it changes, and every class when
// kube-system/aws-auth or a NodePool's spec changes (both decide whether its nodes can join).
// A NodePool's status is not read, and it changes with every node launched or registered: in a
// 1,000-pod scale-up each of those resolved every class again (userData rendered, the join
// checked), 24 MB of allocations in ten seconds.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		classes := &awsv1.EC2NodeClassList{}
		if err := c.kube.List(ctx, classes); err != nil {
			log.FromContext(ctx).Error(err, "Listing EC2NodeClasses")
			return nil
		}
		var out []reconcile.Request
		for _, nc := range classes.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: nc.Name}})
		}
		return out
	})
	awsAuth := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == nodeclass.AWSAuthName.Namespace && o.GetName() == nodeclass.AWSAuthName.Name
	})
	return ctrl.NewControllerManagedBy(mgr).Named(name).For(&awsv1.EC2NodeClass{}).
		Watches(&corev1.ConfigMap{}, all, builder.WithPredicates(awsAuth)).
		Watches(&v1.NodePool{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(reconcile.AsReconciler(mgr.GetClient(), c))
}

// report sends a Warning event for each finding not reported for the class before.
func (c *Controller) report(nc *awsv1.EC2NodeClass, findings []nodejoin.Finding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.reported[nc.Name]
	for _, f := range findings {
		if slices.Contains(before, f) {
			continue
		}
		c.recorder.Eventf(nc, nil, corev1.EventTypeWarning, f.Reason, "CheckNodeJoin", "%s %s: %s Fix: %s", f.Severity, f.Object, f.Message, f.Fix)
	}
	c.reported[nc.Name] = findings
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
	findings, resolveErr := c.resolver.ResolveWithFindings(ctx, nc)
	if resolveErr != nil {
		log.FromContext(ctx).Error(resolveErr, "Resolving EC2NodeClass status")
	}
	c.report(nc, findings)
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
	c.mu.Lock()
	delete(c.reported, nc.Name)
	c.mu.Unlock()
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
