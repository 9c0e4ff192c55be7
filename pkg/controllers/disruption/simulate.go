package disruption

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// outcome is what removing some candidates would lead to.
type outcome struct {
	// unplaced names a pod of the candidates that would fit nowhere, or would go to a node not
	// initialized yet; "" when all fit.
	unplaced string
	// displaces says, when removing the candidates makes the other pods to place (pending, of
	// leaving nodes) need more new capacity than they need now, by how much; "" when not.
	displaces string
	// replacements are the new NodeClaims that hold pods of the candidates.
	replacements []scheduling.NodeClaim
	// placements say where each pod of the candidates would go: a node's name, or a new
	// NodeClaim's placeholder name.
	placements map[types.UID]string
}

// simulate solves where the candidates' pods would go if the candidates were gone, as
// provisioning would: onto the other nodes, or onto new NodeClaims of the NodePools. The pods
// of nodes already leaving (being deleted, tainted karpenter.sh/disrupted, or in a decided
// command) and the pending pods take room too, ahead of nothing in particular; a pending pod
// that fits nowhere does not matter, and a new NodeClaim that holds only such pods is not a
// replacement (provisioning launches it anyway). Cordoned and not Ready nodes take no pod.
//
// No simulation counts on a node that is not initialized (in flight, or registered and not yet
// initialized: kube-scheduler cannot bind there now, and the node was launched for other
// pods), as Karpenter's SimulateScheduling refuses a move that would: such nodes take no pod
// (receiver), so the solver places the pods elsewhere rather than the move failing; a pod of
// the candidates placed on one anyway is unplaced. A removal is also unsafe when the other
// pods to place need new NodeClaims that cost more than they need with no candidate removed
// (the candidates' pods took room that pending pods will use, or a candidate had room they
// would have used), which is displaces. Provisioning would launch those NodeClaims as soon as
// the candidates' pods were evicted: during a scale-up, consolidation would delete nodes and
// buy them again.
func (ps *pass) simulate(cands []*candidate) (*outcome, error) {
	in, mine := ps.input(cands)
	plan, err := scheduling.Solve(&in)
	if err != nil {
		return nil, fmt.Errorf("simulating the removal of %s, %w", names(cands), err)
	}
	out := &outcome{placements: map[types.UID]string{}}
	for _, u := range plan.Unschedulable {
		if mine[u.Pod.UID] {
			out.unplaced = fmt.Sprintf("pod %s/%s fits on no other node and no NodePool can launch a node for it%s", u.Pod.Namespace, u.Pod.Name, reasonsOf(u))
			return out, nil
		}
	}
	for _, p := range plan.Placements {
		if !mine[p.Pod.UID] {
			continue
		}
		if sn := ps.byName[p.Node]; sn != nil && !sn.Initialized() {
			out.unplaced = fmt.Sprintf("pod %s/%s would go to node %s, which is not initialized yet", p.Pod.Namespace, p.Pod.Name, p.Node)
			return out, nil
		}
		out.placements[p.Pod.UID] = p.Node
	}
	others := 0.0
	for _, nc := range plan.NodeClaims {
		holds := false
		for _, pod := range nc.Pods {
			if mine[pod.UID] {
				holds = true
				out.placements[pod.UID] = nc.Name
			}
		}
		if holds {
			out.replacements = append(out.replacements, nc)
		} else {
			others += nc.Launch.Price + nc.NodeCost
		}
	}
	if len(cands) > 0 && others > 0 {
		before, err := ps.othersNeed()
		if err != nil {
			return nil, err
		}
		if others > before+1e-6 {
			out.displaces = fmt.Sprintf("pending pods would then need $%.4f/h of new nodes instead of $%.4f/h: its pods would take room they need", others, before)
		}
	}
	return out, nil
}

// othersNeed returns what the new NodeClaims cost that the pods to place need with no candidate
// removed (the pending pods and those of leaving nodes), solved once per pass.
func (ps *pass) othersNeed() (float64, error) {
	if ps.others != nil {
		return *ps.others, nil
	}
	in, _ := ps.input(nil)
	total := 0.0
	if len(in.Pods) > 0 {
		plan, err := scheduling.Solve(&in)
		if err != nil {
			return 0, fmt.Errorf("simulating the pending pods, %w", err)
		}
		for _, nc := range plan.NodeClaims {
			total += nc.Launch.Price + nc.NodeCost
		}
	}
	ps.others = &total
	return total, nil
}

// input is the snapshot without the candidates, with their pods (mine), the pods of nodes
// leaving and the pending pods to place.
func (ps *pass) input(cands []*candidate) (scheduling.Input, map[types.UID]bool) {
	gone := make(map[string]bool, len(cands))
	var pods []*corev1.Pod
	mine := map[types.UID]bool{}
	for _, cand := range cands {
		gone[cand.node.Name()] = true
		pods = append(pods, cand.pods...)
		for _, pod := range cand.pods {
			mine[pod.UID] = true
		}
	}
	in := ps.snapshot.Input
	in.Nodes = make([]*scheduling.Node, 0, len(ps.snapshot.Input.Nodes))
	receivers := ps.receiverViews()
	for i, n := range ps.snapshot.Input.Nodes {
		if gone[n.Name] {
			continue
		}
		pods = append(pods, receivers[i].leaving...)
		in.Nodes = append(in.Nodes, receivers[i].node)
	}
	for _, sn := range ps.nodes {
		if sn.Node != nil && sn.Deleting() && !gone[sn.Name()] {
			pods = append(pods, reschedulable(sn.Pods)...)
		}
	}
	in.Pods = append(pods, ps.pending...)
	ps.prune(&in)
	return in, mine
}

// receiverView is a snapshot node as every simulation of a pass sees it (see receiver).
type receiverView struct {
	node    *scheduling.Node
	leaving []*corev1.Pod
}

// receiverViews returns receiver of each of the snapshot's nodes, in its order, computed once
// per pass: every simulation walks every node.
func (ps *pass) receiverViews() []receiverView {
	if ps.receivers == nil {
		ps.receivers = make([]receiverView, len(ps.snapshot.Input.Nodes))
		for i, n := range ps.snapshot.Input.Nodes {
			ps.receivers[i].node, ps.receivers[i].leaving = ps.receiver(n)
		}
	}
	return ps.receivers
}

// receiver returns the snapshot's node as a simulation sees it, with the pods that leave it: a
// node tainted karpenter.sh/disrupted or in a command takes no pod and its pods leave; a
// cordoned, not Ready, not initialized or in-flight one takes no pod and keeps its pods; others
// are as they are.
func (ps *pass) receiver(n *scheduling.Node) (*scheduling.Node, []*corev1.Pod) {
	sn := ps.byName[n.Name]
	switch {
	case sn == nil || sn.Deleting():
		// Already converted to a leaving node by the snapshot.
		return n, nil
	case sn.Node == nil:
		// In flight: no simulation counts on it (see simulate).
		return noRoom(n), nil
	case ps.busy[n.Name] || disrupted(sn.Node):
		return noRoom(n), reschedulable(sn.Pods)
	case sn.Node.Spec.Unschedulable || !ready(sn.Node) || !sn.Initialized():
		out := noRoom(n)
		out.Pods = sn.Pods
		return out, nil
	}
	return n, nil
}

// reasonsOf renders an unschedulable pod's reasons per NodePool.
func reasonsOf(u scheduling.Unschedulable) string {
	parts := make([]string, 0, len(u.Reasons))
	for _, r := range u.Reasons {
		if r.NodePool != "" {
			parts = append(parts, fmt.Sprintf("nodepool %s: %s", r.NodePool, r.Message))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// noRoom returns a copy of n that takes no pod: no allocatable, tainted karpenter.sh/disrupted,
// its capacity still counted against its NodePool's limits.
func noRoom(n *scheduling.Node) *scheduling.Node {
	out := *n
	out.Pods = nil
	out.Taints = append(slices.Clone(n.Taints), v1.DisruptedNoScheduleTaint())
	out.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.Quantity{}}
	for res := range n.Capacity {
		out.Allocatable[res] = resource.Quantity{}
	}
	return &out
}

func names(cands []*candidate) string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.name()
	}
	return strings.Join(out, ", ")
}

// prune replaces the nodes that cannot take even the smallest of the pods to place (per
// resource, the least any of them requests) by one node per NodePool that takes no pod and
// carries their summed capacity, so that limits still count them and the solver does not walk
// them. It is sound only when no pod of the cluster has pod affinity, anti-affinity or topology
// spread constraints (the pods of a full node can matter to those), so then it does nothing.
func (ps *pass) prune(in *scheduling.Input) {
	if ps.interPod() || len(in.Pods) == 0 {
		return
	}
	least := scheduling.PodRequests(in.Pods[0]).DeepCopy()
	for _, pod := range in.Pods[1:] {
		req := scheduling.PodRequests(pod)
		for res, q := range least {
			if r, ok := req[res]; !ok {
				delete(least, res)
			} else if r.Cmp(q) < 0 {
				least[res] = r
			}
		}
	}
	least[corev1.ResourcePods] = resource.MustParse("1")
	kept := make([]*scheduling.Node, 0, len(in.Nodes))
	full := map[string]*scheduling.Node{}
	var order []string
	for _, n := range in.Nodes {
		if len(n.Pods) == 0 || fits(ps.freeOf(n), least) {
			kept = append(kept, n)
			continue
		}
		agg, ok := full[n.NodePool]
		if !ok {
			agg = &scheduling.Node{Name: "full-nodes-of-" + n.NodePool, NodePool: n.NodePool, Capacity: corev1.ResourceList{},
				Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.Quantity{}}, Taints: []corev1.Taint{v1.DisruptedNoScheduleTaint()}}
			full[n.NodePool] = agg
			order = append(order, n.NodePool)
		}
		for res, q := range n.Capacity {
			sum := agg.Capacity[res]
			sum.Add(q)
			agg.Capacity[res] = sum
		}
	}
	for _, pool := range order {
		kept = append(kept, full[pool])
	}
	in.Nodes = kept
}

// fits reports whether free holds at least least of every resource.
func fits(free, least corev1.ResourceList) bool {
	for res, q := range least {
		if f, ok := free[res]; !ok || f.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

// freeOf returns what the node's pods leave of its allocatable, computed once per pass.
func (ps *pass) freeOf(n *scheduling.Node) corev1.ResourceList {
	if free, ok := ps.free[n.Name]; ok {
		return free
	}
	free := n.Allocatable.DeepCopy()
	if free == nil {
		free = corev1.ResourceList{}
	}
	for _, pod := range n.Pods {
		for res, q := range scheduling.PodRequests(pod) {
			f := free[res]
			f.Sub(q)
			free[res] = f
		}
	}
	pods := free[corev1.ResourcePods]
	pods.Sub(*resource.NewQuantity(int64(len(n.Pods)), resource.DecimalSI))
	free[corev1.ResourcePods] = pods
	if ps.free == nil {
		ps.free = map[string]corev1.ResourceList{}
	}
	ps.free[n.Name] = free
	return free
}

// interPod reports whether some pod of the cluster, bound or pending, has pod affinity,
// anti-affinity or topology spread constraints; computed once per pass.
func (ps *pass) interPod() bool {
	if ps.hasInterPod != nil {
		return *ps.hasInterPod
	}
	found := slices.ContainsFunc(ps.pending, constrained)
	for _, sn := range ps.nodes {
		found = found || slices.ContainsFunc(sn.Pods, constrained)
	}
	ps.hasInterPod = &found
	return found
}

func constrained(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	return len(pod.Spec.TopologySpreadConstraints) > 0 || a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}
