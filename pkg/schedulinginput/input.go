package schedulinginput

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// Batch is one provisioning run's view of the world.
type Batch struct {
	Input scheduling.Input
	// NodePools are the NodePools given to the solver, by name, as stored (not the copies the
	// solver reads, which may carry an extra instance-type requirement).
	NodePools map[string]*v1.NodePool
	// Excluded are NodePools that cannot launch now, with the reason: every unschedulable pod's
	// FailedScheduling event names them too.
	Excluded []scheduling.Reason
	// Starting are the NodeClaims whose node is not initialized yet (in flight, or registered and
	// not ready), by the name the solver knows the node by: pods placed there are nominated.
	Starting map[string]*v1.NodeClaim
	// Transient are errors worth retrying the batch for (a NodePool's instance types could not
	// be read); the batch still goes ahead with the other NodePools.
	Transient []error
	// Held is true when a NodePool was left out because its launches are held for a certain
	// join failure: the batch is run again later to see the hold lift.
	Held bool
}

// Ephemeral taints that a node carries while it starts, which the solver must not hold against a
// node that is not initialized yet.
var startingTaintKeys = []string{
	v1.UnregisteredTaintKey,
	corev1.TaintNodeNotReady,
	corev1.TaintNodeUnreachable,
	"node.cloudprovider.kubernetes.io/uninitialized",
}

// Provisionable reports whether a pod is one provisioning should find a node for: not bound, not
// finished or being deleted, not a DaemonSet's (those follow their nodes), and marked
// unschedulable by kube-scheduler (so that pods the scheduler can still place on existing nodes
// do not cause launches).
func Provisionable(pod *corev1.Pod) bool {
	if pod.Spec.NodeName != "" || !pod.DeletionTimestamp.IsZero() || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if owner := metav1.GetControllerOf(pod); owner != nil && owner.Kind == "DaemonSet" {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

// Input is the scheduling input provisioning would solve for pods now: the NodePools that can
// launch (each restricted to its own instance types), their instance types, the nodes and
// in-flight NodeClaims, and the DaemonSet overhead, read from view and cloud. excluded are the
// NodePools that cannot launch now, with the reason; held, when not nil, is the controller's
// hold (JoinFailureHold), so that a NodePool whose nodes fail to join is excluded as the
// controller excludes it. Operator tools (joiner explain, the console) call it so that what they
// explain is what the controller decides.
func Input(ctx context.Context, view *cluster.Cluster, cloud cloudprovider.CloudProvider, pods []*corev1.Pod, held HoldFunc) (in *scheduling.Input, excluded []scheduling.Reason, err error) {
	b, err := NewBatch(ctx, view, cloud, pods, held, 0)
	if err != nil {
		return nil, nil, err
	}
	return &b.Input, b.Excluded, nil
}

// isHeld reports whether held holds np's launches, recording the reason in b (a transient error
// holds nothing).
func (b *Batch) isHeld(ctx context.Context, held HoldFunc, np *v1.NodePool) bool {
	if held == nil {
		return false
	}
	reason, err := held(ctx, np)
	if err != nil {
		b.Transient = append(b.Transient, err)
	}
	if reason == nil {
		return false
	}
	b.Excluded = append(b.Excluded, *reason)
	b.Held = true
	return true
}

// NewBatch reads the cluster and the cloud into a scheduling input; every new node costs
// nodeCost per hour more than the cloud provider prices it (cloudprovider.NodeCoster). held,
// when not nil, excludes the NodePools whose launches are held.
func NewBatch(ctx context.Context, view *cluster.Cluster, cloud cloudprovider.CloudProvider, pods []*corev1.Pod, held HoldFunc, nodeCost float64) (*Batch, error) {
	b := &Batch{NodePools: map[string]*v1.NodePool{}, Starting: map[string]*v1.NodeClaim{}}
	b.Input.Pods = pods
	nodePools, err := view.NodePools(ctx)
	if err != nil {
		return nil, err
	}
	typesByPool := map[string][]*cloudprovider.InstanceType{}
	union := map[string]*scheduling.InstanceType{}
	var order []string
	for _, np := range nodePools {
		if b.isHeld(ctx, held, np) {
			// Its existing nodes still cost what its new ones would: disruption weighs them.
			if cost, err := poolNodeCost(ctx, cloud, np); err == nil {
				b.setNodeCost(np.Name, cost+nodeCost)
			}
			continue
		}
		types, reason, err := instanceTypes(ctx, cloud, np)
		if err != nil {
			b.Transient = append(b.Transient, err)
		}
		if reason != nil {
			b.Excluded = append(b.Excluded, *reason)
			continue
		}
		typesByPool[np.Name] = types
		b.NodePools[np.Name] = np
		cost, err := poolNodeCost(ctx, cloud, np)
		if err != nil {
			b.Transient = append(b.Transient, err)
		}
		b.setNodeCost(np.Name, cost+nodeCost)
		for _, it := range types {
			if _, ok := union[it.Name]; !ok {
				union[it.Name] = SchedulingType(it)
				order = append(order, it.Name)
			}
		}
	}
	for _, name := range order {
		b.Input.InstanceTypes = append(b.Input.InstanceTypes, union[name])
	}
	for _, np := range nodePools {
		types, ok := typesByPool[np.Name]
		if !ok {
			continue
		}
		b.Input.NodePools = append(b.Input.NodePools, restrictTypes(np, types, len(union)))
	}
	if b.Input.DaemonSetPods, err = view.DaemonSetPods(ctx); err != nil {
		return nil, err
	}
	nodes, err := view.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	for _, sn := range nodes {
		if sn.Deleting() {
			b.Input.Nodes = append(b.Input.Nodes, leaving(sn, union))
			continue
		}
		if sn.NodeClaim != nil && !sn.Initialized() {
			b.Starting[sn.Name()] = sn.NodeClaim
		}
		n := toSchedulingNode(sn, union)
		if sn.InFlight() {
			// Nothing is bound to it yet, but its DaemonSets' pods will be: count them so that
			// pods nominated to it are not promised room they will take.
			n.Pods = append(slices.Clone(n.Pods), daemonsFor(sn.NodeClaim, b.Input.DaemonSetPods)...)
		}
		b.Input.Nodes = append(b.Input.Nodes, n)
	}
	return b, nil
}

// setNodeCost records what every node of the NodePool costs per hour beyond its instance.
func (b *Batch) setNodeCost(pool string, cost float64) {
	if b.Input.NodeCosts == nil {
		b.Input.NodeCosts = map[string]float64{}
	}
	b.Input.NodeCosts[pool] = cost
}

// instanceTypes returns the NodePool's instance types, or why it cannot launch now, and an error
// when that reason is transient (worth retrying the batch for).
func instanceTypes(ctx context.Context, cloud cloudprovider.CloudProvider, np *v1.NodePool) ([]*cloudprovider.InstanceType, *scheduling.Reason, error) {
	if !np.DeletionTimestamp.IsZero() {
		return nil, &scheduling.Reason{NodePool: np.Name, Code: "NodePoolDeleting", Message: "the NodePool is being deleted"}, nil
	}
	if cond := meta.FindStatusCondition(np.Status.Conditions, v1.ConditionTypeNodeClassReady); cond != nil && cond.Status == metav1.ConditionFalse {
		return nil, &scheduling.Reason{NodePool: np.Name, Code: "NodeClassNotReady", Message: fmt.Sprintf("its node class is not ready: %s", cond.Message)}, nil
	}
	if reason := tooManyRequirements(np); reason != nil {
		return nil, reason, nil
	}
	types, err := cloud.GetInstanceTypes(ctx, np)
	if cloudprovider.IsNodeClassNotReadyError(err) {
		return nil, &scheduling.Reason{NodePool: np.Name, Code: "NodeClassNotReady", Message: err.Error()}, nil
	}
	if err != nil {
		return nil, &scheduling.Reason{NodePool: np.Name, Code: "InstanceTypesUnavailable", Message: err.Error()},
			fmt.Errorf("getting instance types of nodepool %s, %w", np.Name, err)
	}
	if len(types) == 0 {
		return nil, &scheduling.Reason{NodePool: np.Name, Code: scheduling.ReasonNoFit, Message: "the cloud provider offers no instance types for it"}, nil
	}
	return types, nil, nil
}

// maxNodeClaimRequirements is the NodeClaim API's limit on spec.requirements (the CRD's
// maxItems), the same as the NodePool template's.
const maxNodeClaimRequirements = 100

// tooManyRequirements refuses a NodePool whose NodeClaims could not be created: every NodeClaim
// carries one requirement per key of the template, plus karpenter.sh/nodepool,
// node.kubernetes.io/instance-type and the node class's label (karpenter.k8s.aws/ec2nodeclass),
// which Joiner adds when the template lacks them, so a template with 98 to 100 keys is valid as a
// NodePool and yet makes NodeClaims the API server refuses.
func tooManyRequirements(np *v1.NodePool) *scheduling.Reason {
	template := map[string]bool{}
	for _, r := range np.Spec.Template.Spec.Requirements {
		template[r.Key] = true
	}
	keys := maps.Clone(template)
	added := []string{v1.NodePoolLabelKey, corev1.LabelInstanceTypeStable}
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		added = append(added, v1.NodeClassLabelKey(ref))
	}
	for _, k := range added {
		keys[k] = true
	}
	if len(keys) <= maxNodeClaimRequirements {
		return nil
	}
	return &scheduling.Reason{NodePool: np.Name, Code: "TooManyRequirements", Message: fmt.Sprintf(
		"spec.template.spec.requirements names %d keys; with %s, which every NodeClaim also carries, its NodeClaims would have %d requirements, "+
			"over the NodeClaim API's limit of %d: remove or merge requirements (one per key) so that at most %d keys remain besides those",
		len(template), strings.Join(added, ", "), len(keys), maxNodeClaimRequirements, maxNodeClaimRequirements-len(added))}
}

// poolNodeCost is what the cloud provider prices a node of np at beyond its instance, 0 when it
// does not price nodes; an error (the cost is then 0) is worth retrying the batch for.
func poolNodeCost(ctx context.Context, cloud cloudprovider.CloudProvider, np *v1.NodePool) (float64, error) {
	coster, ok := cloud.(cloudprovider.NodeCoster)
	if !ok {
		return 0, nil
	}
	cost, err := coster.NodeCost(ctx, np)
	if err != nil {
		return 0, fmt.Errorf("pricing the nodes of nodepool %s, %w", np.Name, err)
	}
	return cost, nil
}

// restrictTypes returns np, or when its own instance types are fewer than all the solver is given,
// a copy of np that also requires one of its own.
func restrictTypes(np *v1.NodePool, types []*cloudprovider.InstanceType, all int) *v1.NodePool {
	if len(types) == all {
		return np
	}
	names := make([]string, len(types))
	for i, it := range types {
		names[i] = it.Name
	}
	restricted := np.DeepCopy()
	restricted.Spec.Template.Spec.Requirements = append(restricted.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: names})
	return restricted
}

// SchedulingType converts the cloud's instance type: single-valued requirements become labels
// (zone, capacity type and the type's name come from the offerings and the name).
func SchedulingType(it *cloudprovider.InstanceType) *scheduling.InstanceType {
	out := &scheduling.InstanceType{
		Name:        it.Name,
		Labels:      map[string]string{},
		Capacity:    it.Capacity,
		Allocatable: it.Allocatable(),
	}
	for key, values := range it.Requirements {
		switch key {
		case corev1.LabelTopologyZone, awsv1.LabelTopologyZoneID, v1.CapacityTypeLabelKey, corev1.LabelInstanceTypeStable:
			continue
		}
		if len(values) == 1 {
			out.Labels[key] = values[0]
		}
	}
	for _, o := range it.Offerings {
		out.Offerings = append(out.Offerings, scheduling.Offering{Zone: o.Zone, ZoneID: o.ZoneID, CapacityType: o.CapacityType, Price: o.Price, Available: o.Available})
	}
	return out
}

// toSchedulingNode converts a node of the cluster view. A Node not initialized yet is seen without
// its starting taints and startup taints, and no Node with the agent taints of pkg/agenttaint; an
// in-flight NodeClaim is seen with the labels its requirements pin, the allocatable it launched
// with (or, before launch, the requests it was made for) and, for limits, its capacity (or, before launch, the largest capacity among its options).
func toSchedulingNode(sn *cluster.StateNode, types map[string]*scheduling.InstanceType) *scheduling.Node {
	n := &scheduling.Node{Name: sn.Name(), NodePool: sn.NodePool(), Pods: sn.Pods}
	nc := sn.NodeClaim
	if sn.Node != nil {
		n.Labels = sn.Node.Labels
		// Agent taints go when their agent starts: a node carrying one is not held to be
		// unusable, or every node joining with Cilium's taint would cause another launch.
		n.Taints = agenttaint.Without(sn.Node.Spec.Taints)
		n.Allocatable = sn.Node.Status.Allocatable
		n.Capacity = sn.Node.Status.Capacity
		if !sn.Initialized() {
			n.Taints = slices.DeleteFunc(slices.Clone(n.Taints), func(t corev1.Taint) bool {
				return slices.Contains(startingTaintKeys, t.Key) || slices.ContainsFunc(nc.Spec.StartupTaints, func(st corev1.Taint) bool { return st.MatchTaint(&t) })
			})
		}
		if len(n.Allocatable) == 0 && nc != nil {
			n.Allocatable, n.Capacity = nc.Status.Allocatable, nc.Status.Capacity
		}
		return n
	}
	n.Labels = maps.Clone(nc.Labels)
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for _, r := range nc.Spec.Requirements {
		if r.Operator == v1.NodeSelectorOpIn && len(r.Values) == 1 {
			n.Labels[r.Key] = r.Values[0]
		}
	}
	n.Taints = nc.Spec.Taints
	n.Allocatable, n.Capacity = nc.Status.Allocatable, nc.Status.Capacity
	if len(n.Allocatable) == 0 {
		n.Allocatable = nc.Spec.Resources.Requests
	}
	if len(n.Capacity) == 0 {
		n.Capacity = largestCapacity(nc, types)
	}
	return n
}

// leaving converts a node being deleted: it takes no pod, but its capacity still counts against
// its NodePool's limits until it is gone, so that a replacement never exceeds them.
func leaving(sn *cluster.StateNode, types map[string]*scheduling.InstanceType) *scheduling.Node {
	n := toSchedulingNode(sn, types)
	n.Pods = nil
	n.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint()}
	n.Allocatable = corev1.ResourceList{}
	for res := range n.Capacity {
		n.Allocatable[res] = resource.Quantity{}
	}
	n.Allocatable[corev1.ResourcePods] = resource.Quantity{}
	return n
}

// largestCapacity is, per resource, the largest capacity among the NodeClaim's instance-type
// options, or its requests when none of them is known.
func largestCapacity(nc *v1.NodeClaim, types map[string]*scheduling.InstanceType) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, r := range nc.Spec.Requirements {
		if r.Key != corev1.LabelInstanceTypeStable || r.Operator != v1.NodeSelectorOpIn {
			continue
		}
		for _, name := range r.Values {
			it, ok := types[name]
			if !ok {
				continue
			}
			for res, q := range it.Capacity {
				if cur, ok := out[res]; !ok || q.Cmp(cur) > 0 {
					out[res] = q
				}
			}
		}
	}
	if len(out) == 0 {
		return nc.Spec.Resources.Requests
	}
	return out
}

// daemonsFor returns the daemon pods that will run on the NodeClaim's node: those that tolerate
// its taints and whose node selector and required node affinity its requirements allow (as the
// solver decides for new nodes).
func daemonsFor(nc *v1.NodeClaim, daemons []*corev1.Pod) []*corev1.Pod {
	reqs, err := scheduling.FromNodePoolRequirements(nc.Spec.Requirements)
	if err != nil {
		return nil
	}
	for _, r := range scheduling.FromLabels(nc.Labels) {
		reqs.Add(r)
	}
	var out []*corev1.Pod
	for _, ds := range daemons {
		if toleratesAll(ds, nc.Spec.Taints) && selectsNode(ds, reqs) {
			out = append(out, ds)
		}
	}
	return out
}

func toleratesAll(pod *corev1.Pod, taints []corev1.Taint) bool {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool {
			return tol.ToleratesTaint(klog.Background(), t, false)
		}) {
			return false
		}
	}
	return true
}

func selectsNode(pod *corev1.Pod, reqs scheduling.Requirements) bool {
	if reqs.Intersects(scheduling.FromLabels(pod.Spec.NodeSelector)) != nil {
		return false
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if rs, err := scheduling.FromNodeSelectorTerm(term); err == nil && reqs.Intersects(rs) == nil {
			return true
		}
	}
	return false
}
