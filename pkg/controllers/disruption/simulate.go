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
	// unplaced names a pod of the candidates that would fit nowhere, "" when all fit.
	unplaced string
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
func (ps *pass) simulate(cands []*candidate) (*outcome, error) {
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
	for _, n := range ps.snapshot.Input.Nodes {
		if gone[n.Name] {
			continue
		}
		sn := ps.byName[n.Name]
		switch {
		case sn == nil || sn.Node == nil || sn.Deleting():
			// In flight, or already converted to a leaving node by the snapshot.
		case ps.busy[n.Name] || disrupted(sn.Node):
			pods = append(pods, reschedulable(sn.Pods)...)
			n = noRoom(n)
		case sn.Node.Spec.Unschedulable || !ready(sn.Node):
			n = noRoom(n)
			n.Pods = sn.Pods
		}
		in.Nodes = append(in.Nodes, n)
	}
	for _, sn := range ps.nodes {
		if sn.Node != nil && sn.Deleting() && !gone[sn.Name()] {
			pods = append(pods, reschedulable(sn.Pods)...)
		}
	}
	in.Pods = append(pods, ps.pending...)
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
		if mine[p.Pod.UID] {
			out.placements[p.Pod.UID] = p.Node
		}
	}
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
		}
	}
	return out, nil
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
