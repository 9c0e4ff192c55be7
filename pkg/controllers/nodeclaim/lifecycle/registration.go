package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// ReasonUnregisteredTaintNotFound is the Registered reason of a Node that joined without the
// karpenter.sh/unregistered:NoExecute taint.
const ReasonUnregisteredTaintNotFound = "UnregisteredTaintNotFound"

// register matches the Node that carries the NodeClaim's providerID and, the first time, syncs the
// NodeClaim's labels, annotations and taints onto it and lifts the unregistered taint.
func (c *Controller) register(ctx context.Context, nodeClaim *v1.NodeClaim) (reconcile.Result, error) {
	now := c.clock.Now()
	if !isTrue(nodeClaim, v1.ConditionTypeLaunched) {
		setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionUnknown, "AwaitingLaunch", "Waiting for the instance to launch", now)
		return reconcile.Result{}, nil
	}
	nodes, err := c.nodesFor(ctx, nodeClaim)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch len(nodes) {
	case 0:
		if isTrue(nodeClaim, v1.ConditionTypeRegistered) {
			// The Node was deleted after registering: not a join failure.
			return reconcile.Result{}, nil
		}
		return c.diagnose(ctx, nodeClaim, now)
	case 1:
	default:
		names := make([]string, 0, len(nodes))
		for i := range nodes {
			names = append(names, nodes[i].Name)
		}
		setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionFalse, "MultipleNodesFound",
			fmt.Sprintf("Nodes %v all have providerID %s; delete the ones that are not this instance", names, nodeClaim.Status.ProviderID), now)
		return reconcile.Result{}, nil
	}
	node := &nodes[0]
	if node.Labels[v1.NodeRegisteredLabelKey] != "true" && !c.registered.has(nodeClaim.UID, node.UID) {
		if !hasTaint(node.Spec.Taints, v1.UnregisteredNoExecuteTaint()) {
			// Certain: the kubelet registered without the taint its userData was to give it, and
			// another instance from the same userData would do the same.
			return reconcile.Result{}, c.failJoin(ctx, nodeClaim, ReasonUnregisteredTaintNotFound, unregisteredTaintMessage(node.Name), true, now)
		}
		if err := c.syncNode(ctx, nodeClaim, node); err != nil {
			return reconcile.Result{}, err
		}
		c.registered.add(nodeClaim.UID, node.UID)
	}
	nodeClaim.Status.NodeName = node.Name
	if !isTrue(nodeClaim, v1.ConditionTypeRegistered) {
		if err := c.clearJoinFailure(ctx, nodeClaim); err != nil {
			return reconcile.Result{}, err
		}
	}
	setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionTrue, "Registered", "Node "+node.Name+" registered", now)
	return reconcile.Result{}, nil
}

// unregisteredTaintMessage explains a Node that joined without the unregistered taint, and what to
// look at.
func unregisteredTaintMessage(nodeName string) string {
	return fmt.Sprintf("Node %s joined without the taint %s:NoExecute, so pods may land on it before its labels and taints are synced, and Joiner will not register it. "+
		"The instance's userData dropped or replaced the kubelet's --register-with-taints flag "+
		"(for example bootstrap.sh given --kubelet-extra-args=... as one word, or a nodeadm NodeConfig whose kubelet flags set their own taints; "+
		"agent taints such as Cilium's belong in the NodePool's spec.template.spec.startupTaints). "+
		"Run `joiner render-userdata` for the EC2NodeClass to see the userData the instance receives and the checks it fails",
		nodeName, v1.UnregisteredTaintKey)
}

// syncNode copies the NodeClaim's labels, annotations and taints onto the Node (union, unless the
// Node asks not to sync taints), removes the unregistered taint, adds the termination finalizer and
// the NodeClaim as owner, and labels the Node registered.
//
// One JSON patch that changes only what it names: labels and annotations key by key, the
// NodeClaim's taints, the finalizer and the owner appended, the unregistered taint removed at the
// index it was read at once a test op finds it still there. A merge patch replaces whole lists, so
// it needed optimistic locking, and the kubelet's status posts and the control plane's writes
// around a new Node's registration made it conflict about twice per Node in a 1,000-pod
// scale-up: each conflict a failed request and a requeue while the Node's pods waited for the
// unregistered taint to go. When the test fails (the list moved, or the cached Node was stale),
// the Node is read again from the API server and the patch made anew, a few times at most.
func (c *Controller) syncNode(ctx context.Context, nodeClaim *v1.NodeClaim, node *corev1.Node) error {
	var err error
	for range syncNodeAttempts {
		var patch []byte
		if patch, err = registrationPatch(nodeClaim, node); err != nil {
			return fmt.Errorf("registering node %s, %w", node.Name, err)
		}
		log.FromContext(ctx).Info("Registering node", "node", klog.KObj(node))
		err = c.kubeClient.Patch(ctx, node.DeepCopy(), client.RawPatch(types.JSONPatchType, patch))
		if err == nil || (!apierrors.IsConflict(err) && !apierrors.IsInvalid(err)) {
			break
		}
		// A failed test op (the taints changed since they were read) is Invalid; a conflict
		// should not happen without a resourceVersion, but means the same.
		fresh := &corev1.Node{}
		if getErr := c.apiReader.Get(ctx, client.ObjectKeyFromObject(node), fresh); getErr != nil {
			return fmt.Errorf("registering node %s, %w", node.Name, getErr)
		}
		if fresh.UID != node.UID {
			return fmt.Errorf("registering node %s: the Node was replaced while registering, %w", node.Name, err)
		}
		if fresh.Labels[v1.NodeRegisteredLabelKey] == "true" {
			return nil // registered meanwhile, by an earlier reconcile whose write the cache had not shown
		}
		node = fresh
	}
	if err != nil {
		return fmt.Errorf("registering node %s, %w", node.Name, err)
	}
	return nil
}

// registeredNodes records which Node a write of each NodeClaim's went to, by NodeClaim UID.
type registeredNodes struct {
	mu    sync.Mutex
	nodes map[types.UID]types.UID
}

func (r *registeredNodes) has(nodeClaim, node types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nodes[nodeClaim] == node
}

func (r *registeredNodes) add(nodeClaim, node types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nodes == nil {
		r.nodes = map[types.UID]types.UID{}
	}
	r.nodes[nodeClaim] = node
}

func (r *registeredNodes) forget(nodeClaim types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.nodes, nodeClaim)
}

// syncNodeAttempts bounds how many times syncNode patches a Node whose taints keep changing.
const syncNodeAttempts = 3

// jsonPatchOp is one operation of a JSON patch (RFC 6902).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// registrationPatch is the JSON patch that makes node what syncNode describes, from node as read.
func registrationPatch(nodeClaim *v1.NodeClaim, node *corev1.Node) ([]byte, error) {
	var ops []jsonPatchOp
	labels := maps.Clone(nodeClaim.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1.NodeRegisteredLabelKey] = "true"
	ops = appendMapOps(ops, "/metadata/labels", node.Labels, labels)
	annotations := maps.Clone(nodeClaim.Annotations)
	delete(annotations, v1.NodeClaimTerminationTimestampAnnotationKey)
	ops = appendMapOps(ops, "/metadata/annotations", node.Annotations, annotations)

	// The unregistered taint is removed by its index, tested first; the NodeClaim's taints are
	// appended. Another writer's change elsewhere in the list (the node lifecycle controller
	// lifting node.kubernetes.io/not-ready, which admission appends behind the kubelet's taints)
	// does not fail the patch; one that moves the unregistered taint does.
	unregistered := v1.UnregisteredNoExecuteTaint()
	if i := slices.IndexFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&unregistered) }); i >= 0 {
		at := fmt.Sprintf("/spec/taints/%d", i)
		ops = append(ops, jsonPatchOp{Op: "test", Path: at, Value: node.Spec.Taints[i]}, jsonPatchOp{Op: "remove", Path: at})
	}
	// A list read empty is created; one read with items exists still (maybe emptied above).
	n := len(node.Spec.Taints)
	if node.Labels[v1.NodeDoNotSyncTaintsLabelKey] != "true" {
		var added []corev1.Taint
		for _, t := range slices.Concat(nodeClaim.Spec.Taints, nodeClaim.Spec.StartupTaints) {
			if !hasTaint(node.Spec.Taints, t) && !hasTaint(added, t) {
				added = append(added, t)
				ops = appendListOp(ops, "/spec/taints", n, t)
				n++
			}
		}
	}

	if !slices.Contains(node.Finalizers, v1.TerminationFinalizer) {
		ops = appendListOp(ops, "/metadata/finalizers", len(node.Finalizers), v1.TerminationFinalizer)
	}
	owner := metav1.OwnerReference{
		APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodeClaim", Name: nodeClaim.Name, UID: nodeClaim.UID,
		BlockOwnerDeletion: ptr.To(true),
	}
	if !slices.ContainsFunc(node.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owner.UID }) {
		ops = appendListOp(ops, "/metadata/ownerReferences", len(node.OwnerReferences), owner)
	}
	return json.Marshal(ops)
}

// appendMapOps adds to ops what sets every key of want on the map at path, which holds have.
func appendMapOps(ops []jsonPatchOp, path string, have, want map[string]string) []jsonPatchOp {
	if len(want) == 0 {
		return ops
	}
	if have == nil {
		return append(ops, jsonPatchOp{Op: "add", Path: path, Value: want})
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := have[k]; !ok || v != want[k] {
			ops = append(ops, jsonPatchOp{Op: "add", Path: path + "/" + jsonPointerEscape(k), Value: want[k]})
		}
	}
	return ops
}

// appendListOp adds to ops what appends item to the list at path, creating the list when it had
// no items (n) as read, provided it has none still (a test for null, which an absent field passes).
func appendListOp(ops []jsonPatchOp, path string, n int, item any) []jsonPatchOp {
	if n == 0 {
		return append(ops, jsonPatchOp{Op: "test", Path: path, Value: nil}, jsonPatchOp{Op: "add", Path: path, Value: []any{item}})
	}
	return append(ops, jsonPatchOp{Op: "add", Path: path + "/-", Value: item})
}

// jsonPointerEscape escapes a key for a JSON pointer (RFC 6901): label keys hold "/".
func jsonPointerEscape(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
