package startuptaints

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

const name = "nodepool.startuptaints"

// ReasonAgentTaintNotDeclared is the reason of the advice event.
const ReasonAgentTaintNotDeclared = "AgentTaintNotDeclared"

// Controller advises on undeclared agent taints. Build it with NewController.
type Controller struct {
	kube     client.Reader
	recorder events.EventRecorder

	// mu guards advised: per NodePool UID, the advice already given, by text, with the NodePool
	// generation it was given for.
	mu      sync.Mutex
	advised map[types.UID]map[string]int64
}

// NewController returns the controller; kube reads NodePools' Nodes, recorder gets the advice.
func NewController(kube client.Reader, recorder events.EventRecorder) *Controller {
	return &Controller{kube: kube, recorder: recorder, advised: map[types.UID]map[string]int64{}}
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register reconciles a NodePool when it changes or when one of its Nodes appears or changes its
// taints or NodePool label. The advice reads nothing else of a Node, so the heartbeats, which are
// most Node updates (every Node every 10s or so), enqueue nothing: with hundreds of Nodes they
// made the controller list a NodePool's Nodes many times a second.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&v1.NodePool{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if np := o.GetLabels()[v1.NodePoolLabelKey]; np != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: np}}}
			}
			return nil
		}), builder.WithPredicates(taintsChanged())).
		Complete(reconcile.AsReconciler(mgr.GetClient(), c))
	if err != nil {
		return fmt.Errorf("registering %s, %w", name, err)
	}
	return nil
}

// Reconcile gives the advice the NodePool needs and has not had for its generation.
func (c *Controller) Reconcile(ctx context.Context, np *v1.NodePool) (reconcile.Result, error) {
	if !np.DeletionTimestamp.IsZero() {
		c.forget(np.UID)
		return reconcile.Result{}, nil
	}
	declared := np.Spec.Template.Spec.StartupTaints
	var advice []string
	if ts := agenttaint.Undeclared(np.Spec.Template.Spec.Taints, declared); len(ts) > 0 {
		advice = append(advice, agenttaint.Advice(np.Name, "in its spec.template.spec.taints (move it to startupTaints)", ts))
	}
	nodes := &corev1.NodeList{}
	// Read only: the cache's Nodes themselves, not copies of every Node on each Node event.
	if err := c.kube.List(ctx, nodes, client.MatchingLabels{v1.NodePoolLabelKey: np.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodes of nodepool %s, %w", np.Name, err)
	}
	// Taints seen on Nodes that the template does not explain, grouped by taint with the first
	// Node that carries it.
	known := slices.Concat(declared, np.Spec.Template.Spec.Taints)
	seenOn := map[string]string{}
	var observed []corev1.Taint
	for i := range nodes.Items {
		for _, t := range agenttaint.Undeclared(nodes.Items[i].Spec.Taints, known) {
			if _, ok := seenOn[t.ToString()]; !ok {
				seenOn[t.ToString()] = nodes.Items[i].Name
				observed = append(observed, t)
			}
		}
	}
	for _, t := range observed {
		advice = append(advice, agenttaint.Advice(np.Name, "on node "+seenOn[t.ToString()], []corev1.Taint{t}))
	}
	for _, a := range advice {
		if c.give(np.UID, np.Generation, a) {
			log.FromContext(ctx).Info("Advising to declare an agent taint in startupTaints", "nodepool", np.Name, "advice", strings.SplitN(a, "\n", 2)[0])
			c.recorder.Eventf(np, nil, corev1.EventTypeWarning, ReasonAgentTaintNotDeclared, "Advise", "%s", a)
		}
	}
	return reconcile.Result{}, nil
}

// give reports whether the advice is new for the NodePool's generation, and records it.
func (c *Controller) give(uid types.UID, generation int64, advice string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	given, ok := c.advised[uid]
	if !ok {
		given = map[string]int64{}
		c.advised[uid] = given
	}
	if g, ok := given[advice]; ok && g == generation {
		return false
	}
	given[advice] = generation
	return true
}

// taintsChanged passes a Node's creation and the updates that change its taints or its NodePool
// label; deletions and other updates give no new advice.
func taintsChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, oldOK := e.ObjectOld.(*corev1.Node)
			node, newOK := e.ObjectNew.(*corev1.Node)
			if !oldOK || !newOK {
				return true
			}
			return old.Labels[v1.NodePoolLabelKey] != node.Labels[v1.NodePoolLabelKey] ||
				!equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func (c *Controller) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.advised, uid)
}
