package disruption

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/schedulinginput"
)

// pass is one disruption pass's view of the cluster. Deciding reads only this, never the API
// server or the cloud, so that a decision can be benchmarked and explained from a pass built in
// memory.
type pass struct {
	now   time.Time
	pools []*pool
	// nodes are every node of the view, by name.
	nodes  []*cluster.StateNode
	byName map[string]*cluster.StateNode
	// pending are the pods provisioning would launch for, and those kube-scheduler has not
	// tried yet (see unseen): they take room in every simulation, and one that fits nowhere
	// blocks nothing.
	pending []*corev1.Pod
	// snapshot is provisioning's scheduling input without pods.
	snapshot *schedulinginput.Snapshot
	// busy are the nodes of commands already decided (waiting to be validated, or whose
	// replacements are launching): they are neither candidates nor receivers.
	busy map[string]bool
	// free and hasInterPod are computed on first use (see prune).
	free        map[string]corev1.ResourceList
	hasInterPod *bool
	// others is, computed on first use, the hourly price of the new NodeClaims that the pods
	// to place other than candidates' (pending pods, pods of leaving nodes) need with no
	// candidate removed (see simulate).
	others *float64
	// receivers are the snapshot's nodes as simulations see them, computed on first use.
	receivers []receiverView
	// alone says why each candidate tried on its own this pass could not go (single-node
	// consolidation takes multi-node's answer rather than simulating it again), and movable
	// which could.
	alone   map[*candidate]string
	movable map[*candidate]bool
	// stuckBefore are the NodeClaims that earlier passes found could not go on their own:
	// multi-node consolidation grows its set from the others first (see unstuck).
	stuckBefore map[string]bool
	// wake is the earliest time a pod's karpenter.sh/do-not-disrupt duration ends on a node
	// classify looked at (zero if none): the next pass is due then. invalid are the objects of
	// those nodes whose karpenter.sh/do-not-disrupt value protects nothing, to be told.
	wake    time.Time
	invalid []invalidDoNotDisrupt
	// spotToSpotGate is the controller's SpotToSpotConsolidation feature gate.
	spotToSpotGate bool
}

// stuck returns, for the next pass, the candidates that could not go on their own: those this
// pass tried alone and found so, and those found so before that it did not try alone.
func (ps *pass) stuck() map[string]bool {
	out := map[string]bool{}
	for _, p := range ps.pools {
		for _, cand := range p.candidates {
			_, failed := ps.alone[cand]
			if failed || !ps.movable[cand] && ps.stuckBefore[cand.name()] {
				out[cand.name()] = true
			}
		}
	}
	return out
}

// pool is one NodePool's part of a pass.
type pool struct {
	nodePool *v1.NodePool
	// nodes counts the NodePool's initialized nodes; disrupting those being deleted, not Ready,
	// or tainted karpenter.sh/disrupted; taken those this pass's decision uses.
	nodes, disrupting, taken int
	// candidates are the NodePool's nodes that some method may disrupt.
	candidates []*candidate
	// cost is the summed hourly price of the NodePool's priced initialized nodes, and
	// disruption their summed disruption cost (see disruptionCost): the Balanced policy's
	// denominators.
	cost, disruption float64
}

// candidate is a node that a method may disrupt, with what deciding needs of it.
type candidate struct {
	pool *pool
	node *cluster.StateNode
	// pods would have to move if the node went.
	pods []*corev1.Pod
	// price is the node's hourly cost (see priceOf), known when priced.
	price  float64
	priced bool
	// drifted is the NodeClaim's Drifted condition; consolidatable says that consolidation may
	// take the node (policy, consolidateAfter), else notConsolidatable says why not.
	drifted           bool
	consolidatable    bool
	notConsolidatable string
}

func (c *candidate) name() string { return c.node.NodeClaim.Name }

// capacityType is the node's karpenter.sh/capacity-type.
func (c *candidate) capacityType() string {
	return labelOf(c.node, v1.CapacityTypeLabelKey)
}

func (c *candidate) instanceType() string {
	return labelOf(c.node, corev1.LabelInstanceTypeStable)
}

// labelOf is the Node's label, else the NodeClaim's.
func labelOf(sn *cluster.StateNode, key string) string {
	if sn.Node != nil {
		if v, ok := sn.Node.Labels[key]; ok {
			return v
		}
	}
	if sn.NodeClaim != nil {
		return sn.NodeClaim.Labels[key]
	}
	return ""
}

// newPass reads the view, the pending pods, the PodDisruptionBudgets and provisioning's snapshot,
// and sorts every node into its NodePool's counts and candidates. Nodes blocked by
// do-not-disrupt or a PodDisruptionBudget are not candidates; blocked receives why.
func (c *Controller) newPass(ctx context.Context, now time.Time, busy map[string]bool, blocked func(sn *cluster.StateNode, why string)) (*pass, error) {
	nodePools, err := c.cluster.NodePools(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := c.cluster.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	unbound, err := c.cluster.UnboundPods(ctx)
	if err != nil {
		return nil, err
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := c.kube.List(ctx, &pdbs); err != nil {
		return nil, fmt.Errorf("listing poddisruptionbudgets, %w", err)
	}
	held := provisioning.JoinFailureHold(c.apiReader, c.cloud, func() time.Time { return now }, c.JoinFailureHold)
	snap, err := schedulinginput.NewSnapshot(ctx, c.cluster, c.cloud, held, c.nodeCost)
	if snap == nil {
		return nil, err
	}
	if err != nil {
		// A NodePool whose instance types could not be read is in snap.Excluded: it cannot
		// launch a replacement now, which the simulations see; the rest goes ahead.
		log.FromContext(ctx).Error(err, "Reading instance types for disruption; their NodePools launch no replacement this pass")
	}
	schedulinginput.ApplySettings(ctx, c.kube, c.settings, &snap.Input)
	ps := &pass{now: now, nodes: nodes, byName: map[string]*cluster.StateNode{}, snapshot: snap, busy: busy, spotToSpotGate: c.spotToSpot}
	for _, pod := range unbound {
		if schedulinginput.Provisionable(pod) || unseen(pod) {
			ps.pending = append(ps.pending, pod)
		}
	}
	ps.classify(nodePools, pdbs.Items, blocked)
	return ps, nil
}

// classify fills the pools' counts and candidates.
func (ps *pass) classify(nodePools []*v1.NodePool, pdbs []policyv1.PodDisruptionBudget, blocked func(*cluster.StateNode, string)) {
	byPool := map[string]*pool{}
	for _, np := range nodePools {
		p := &pool{nodePool: np}
		byPool[np.Name] = p
		ps.pools = append(ps.pools, p)
	}
	for _, sn := range ps.nodes {
		ps.byName[sn.Name()] = sn
		p := byPool[sn.NodePool()]
		if p == nil || sn.NodeClaim == nil || !sn.Initialized() {
			continue
		}
		p.nodes++
		if price, ok := ps.priceOf(sn); ok {
			p.cost += price
		}
		p.disruption += disruptionCost(reschedulable(sn.Pods))
		if sn.Deleting() || !ready(sn.Node) || disrupted(sn.Node) {
			p.disrupting++
			continue
		}
		if ps.busy[sn.Name()] {
			continue
		}
		ps.readDoNotDisrupt(sn)
		if why := notDisruptable(sn); why != "" {
			blocked(sn, why)
			continue
		}
		drifted := isTrue(sn.NodeClaim, v1.ConditionTypeDrifted)
		podsBlock := blockingMove(sn.Pods, pdbs, ps.now)
		if podsBlock != "" && (!drifted || !eventual(sn.NodeClaim)) {
			blocked(sn, podsBlock)
			continue
		}
		cand := &candidate{pool: p, node: sn, pods: reschedulable(sn.Pods), drifted: drifted}
		cand.notConsolidatable = notConsolidatable(p.nodePool, sn, len(cand.pods) == 0, ps.now)
		if podsBlock != "" {
			// Drift only: consolidation never takes a node its pods keep.
			cand.notConsolidatable = podsBlock
		}
		cand.consolidatable = cand.notConsolidatable == ""
		cand.price, cand.priced = ps.priceOf(sn)
		if !cand.drifted && !cand.consolidatable {
			blocked(sn, cand.notConsolidatable)
			continue
		}
		p.candidates = append(p.candidates, cand)
	}
	for _, p := range ps.pools {
		slices.SortStableFunc(p.candidates, compareCandidates)
	}
}

// readDoNotDisrupt adds the node's invalid do-not-disrupt values to invalid, and moves wake to
// the end of its pods' first protection by a duration if sooner.
func (ps *pass) readDoNotDisrupt(sn *cluster.StateNode) {
	ps.invalid = append(ps.invalid, invalidDoNotDisrupts(sn, ps.now)...)
	if _, ends := doNotDisruptPod(sn.Pods, ps.now); !ends.IsZero() && (ps.wake.IsZero() || ends.Before(ps.wake)) {
		ps.wake = ends
	}
}

// compareCandidates orders candidates by how little disrupting them costs: the least summed
// eviction cost of the pods to move first (see evictionCost), then the longest quiet, then by
// name.
func compareCandidates(a, b *candidate) int {
	if d := cmp.Compare(podsCost(a.pods), podsCost(b.pods)); d != 0 {
		return d
	}
	if d := quietSince(a.node).Compare(quietSince(b.node)); d != 0 {
		return d
	}
	return strings.Compare(a.name(), b.name())
}

// candidates returns every pool's candidates that keep returns true for, in candidate order.
func (ps *pass) candidates(keep func(*candidate) bool) []*candidate {
	var out []*candidate
	for _, p := range ps.pools {
		for _, cand := range p.candidates {
			if keep(cand) {
				out = append(out, cand)
			}
		}
	}
	slices.SortStableFunc(out, compareCandidates)
	return out
}

// quietSince is when the NodeClaim became Consolidatable.
func quietSince(sn *cluster.StateNode) time.Time {
	if cond := meta.FindStatusCondition(sn.NodeClaim.Status.Conditions, v1.ConditionTypeConsolidatable); cond != nil {
		return cond.LastTransitionTime.Time
	}
	return time.Time{}
}

// disrupted reports whether the Node carries karpenter.sh/disrupted:NoSchedule.
func disrupted(node *corev1.Node) bool {
	taint := v1.DisruptedNoScheduleTaint()
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
}

// priceOf returns what the node costs per hour, and whether it is known: its offering's price
// (instance type, zone, capacity type) plus its NodePool's per-node cost (the cloud provider's,
// such as volumes, and the operator's --node-cost), as provisioning weighs a new node, so that
// deleting a node saves its per-node cost and a replacement costs its own.
func (ps *pass) priceOf(sn *cluster.StateNode) (float64, bool) {
	price, ok := scheduling.OfferingPrice(ps.snapshot.Input.InstanceTypes, labelOf(sn, corev1.LabelInstanceTypeStable),
		labelOf(sn, corev1.LabelTopologyZone), labelOf(sn, v1.CapacityTypeLabelKey))
	if !ok {
		return 0, false
	}
	return price + ps.snapshot.NodeCost(sn.NodePool()), true
}

// evictionCost is what evicting the pod costs, as Karpenter weighs it: 1, plus its
// controller.kubernetes.io/pod-deletion-cost over 2^27, plus its priority over 2^25, kept
// within [-10, 10]. Pods that are cheaper to delete, or less important, go first.
func evictionCost(pod *corev1.Pod) float64 {
	cost := 1.0
	if raw, ok := pod.Annotations[corev1.PodDeletionCost]; ok {
		if v, err := strconv.ParseInt(raw, 10, 32); err == nil {
			cost += float64(v) / (1 << 27)
		}
	}
	if pod.Spec.Priority != nil {
		cost += float64(*pod.Spec.Priority) / (1 << 25)
	}
	return min(max(cost, -10), 10)
}

// podsCost is the summed eviction cost of the pods.
func podsCost(pods []*corev1.Pod) float64 {
	sum := 0.0
	for _, pod := range pods {
		sum += evictionCost(pod)
	}
	return sum
}

// unseen reports whether kube-scheduler has not tried to place the pod yet: unbound, not
// finished or terminating, not a DaemonSet's, and without a PodScheduled condition. Such a pod
// (a new replica, or one recreated for a pod a disruption just evicted) is bound within moments
// to whatever room there is, so simulations count it as pending: a decision that used its room
// would not hold.
func unseen(pod *corev1.Pod) bool {
	if pod.Spec.NodeName != "" || finished(pod) || !pod.DeletionTimestamp.IsZero() || ownedByDaemonSet(pod) || mirror(pod) {
		return false
	}
	return !slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled })
}
