package disruption

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// MinReplacementSavings is the least fraction of the candidates' hourly price that a
// replacement must save: a replacement priced above (1-MinReplacementSavings) times what the
// candidates cost is not taken, so that a cluster at rest makes no moves (no replacing a node
// with one of its own type, nor with one a cent cheaper).
const MinReplacementSavings = 0.05

// SpotToSpotOff is why spot nodes are kept rather than replaced by spot nodes while the
// SpotToSpotConsolidation feature gate is off (WithSpotToSpotConsolidation).
const SpotToSpotOff = "SpotToSpotConsolidation is off (--feature-gates): spot nodes are not replaced by spot nodes"

// MinSpotToSpotOptions is how many cheaper instance types a spot node's spot replacement needs,
// as in Karpenter: with fewer, the replacement would likely be interrupted sooner than the node
// it replaces. The replacement keeps the cheapest MinSpotToSpotOptions.
const MinSpotToSpotOptions = 15

// underutilized returns the consolidation candidates with pods to move that the Underutilized
// budgets let go alone, noting the others.
func (ps *pass) underutilized(d *decision) []*candidate {
	cands := ps.candidates(func(c *candidate) bool {
		return c.consolidatable && len(c.pods) > 0 && underutilizedAllowed(c.pool.nodePool)
	})
	return slices.DeleteFunc(cands, func(c *candidate) bool {
		n, why := ps.room(c.pool, v1.DisruptionReasonUnderutilized)
		if n <= 0 {
			d.note(c, why)
		}
		return n <= 0
	})
}

// consolidate returns the command that removes the candidates, or why there is none: their
// pods must all find room on the other nodes (delete) or on those and new NodeClaims that
// together save at least MinReplacementSavings (replace; see replace).
func (ps *pass) consolidate(cands []*candidate, m method) (*command, string, error) {
	out, err := ps.simulate(cands)
	if err != nil {
		return nil, "", err
	}
	switch {
	case out.unplaced != "":
		return nil, out.unplaced, nil
	case out.displaces != "":
		return nil, out.displaces, nil
	case len(out.replacements) == 0:
		cmd := newCommand(m, cands, nil)
		if why := balanced(cmd); why != "" {
			return nil, why, nil
		}
		return cmd, "", nil
	}
	return ps.replace(cands, out.replacements, m)
}

// replace returns the command that replaces the candidates by the planned NodeClaims, or why
// there is none. The NodeClaims' cheapest options together must cost less than
// (1-MinReplacementSavings) of the candidates; each keeps the options that keep the total
// under that. Several candidates are never replaced by one NodeClaim of an instance type of
// one of them (that would just delete the others). One candidate may be replaced by several cheaper NodeClaims
// (a split: a large node whose pods the plan holds on smaller ones), and several by several,
// as the solver plans them. Spot nodes are replaced by a NodeClaim that may be spot only with
// the SpotToSpotConsolidation gate; a spot node's spot replacement needs MinSpotToSpotOptions
// cheaper types and keeps that many, and is one NodeClaim.
func (ps *pass) replace(cands []*candidate, planned []scheduling.NodeClaim, m method) (*command, string, error) {
	current := 0.0
	allSpot := true
	for _, cand := range cands {
		if !cand.priced {
			return nil, fmt.Sprintf("the price of node %s (%s %s in %s) is not known, so no replacement can be shown cheaper",
				cand.node.Name(), cand.instanceType(), cand.capacityType(), labelOf(cand.node, corev1.LabelTopologyZone)), nil
		}
		current += cand.price
		allSpot = allSpot && cand.capacityType() == v1.CapacityTypeSpot
	}
	limit := current * (1 - MinReplacementSavings)
	// Each planned NodeClaim's Launch is its cheapest option: when they already cost too much,
	// no option is priced (the common case in a settled cluster).
	cheapest := 0.0
	for i := range planned {
		cheapest += planned[i].Launch.Price + planned[i].NodeCost
	}
	if cheapest >= limit {
		return nil, tooDear(planned, cheapest, current), nil
	}
	// Several nodes merged into one of a type one of them has would just delete the others,
	// which a shorter prefix does without the churn; re-packed onto several, any type goes.
	merging := len(cands) > 1 && len(planned) == 1
	options := make([][]scheduling.Launch, len(planned))
	cheapest = 0.0
	for i := range planned {
		all, err := scheduling.PriceOptions(&planned[i], ps.snapshot.Input.InstanceTypes)
		if err != nil {
			return nil, "", err
		}
		options[i] = slices.DeleteFunc(all, func(o scheduling.Launch) bool {
			return merging && slices.ContainsFunc(cands, func(c *candidate) bool { return c.instanceType() == o.InstanceType })
		})
		if len(options[i]) == 0 {
			return nil, "no instance type can hold its pods", nil
		}
		cheapest += options[i][0].Price + planned[i].NodeCost
	}
	if cheapest >= limit {
		return nil, tooDear(planned, cheapest, current), nil
	}
	if allSpot {
		if why := ps.spotToSpot(planned, options, limit, current); why != "" {
			return nil, why, nil
		}
	}
	slack := limit - cheapest
	replacements := make([]scheduling.NodeClaim, len(planned))
	for i := range planned {
		bound := options[i][0].Price + slack
		replacements[i] = restrict(planned[i], slices.DeleteFunc(options[i], func(o scheduling.Launch) bool { return o.Price >= bound }))
	}
	cmd := newCommand(m, cands, replacements)
	if why := balanced(cmd); why != "" {
		return nil, why, nil
	}
	return cmd, "", nil
}

// spotToSpot applies the rules of replacing spot nodes only by NodeClaims that may be spot, and
// returns why they cannot be, or "": it needs the SpotToSpotConsolidation gate, and when the
// cheapest option is spot, one NodeClaim with MinSpotToSpotOptions spot options under limit, of
// which it keeps the cheapest MinSpotToSpotOptions in options[0].
func (ps *pass) spotToSpot(planned []scheduling.NodeClaim, options [][]scheduling.Launch, limit, current float64) string {
	if !ps.spotToSpotGate && slices.ContainsFunc(options, func(o []scheduling.Launch) bool {
		return slices.ContainsFunc(o, func(l scheduling.Launch) bool { return l.CapacityType == v1.CapacityTypeSpot })
	}) {
		return SpotToSpotOff
	}
	if !slices.ContainsFunc(options, func(o []scheduling.Launch) bool { return o[0].CapacityType == v1.CapacityTypeSpot }) {
		return ""
	}
	if len(planned) > 1 {
		return fmt.Sprintf("its pods would need %d new nodes, and spot nodes are replaced by spot only one for one", len(planned))
	}
	spot := slices.DeleteFunc(slices.Clone(options[0]), func(o scheduling.Launch) bool {
		return o.CapacityType != v1.CapacityTypeSpot || o.Price+planned[0].NodeCost >= limit
	})
	if len(spot) < MinSpotToSpotOptions {
		return fmt.Sprintf("spot-to-spot replacement needs at least %d cheaper instance types, found %d (cheapest %s at $%.4f/h against $%.4f/h now)",
			MinSpotToSpotOptions, len(spot), options[0][0].InstanceType, options[0][0].Price+planned[0].NodeCost, current)
	}
	options[0] = spot[:MinSpotToSpotOptions]
	return ""
}

// tooDear says that the planned NodeClaims, at cheapest, save too little against current.
func tooDear(planned []scheduling.NodeClaim, cheapest, current float64) string {
	if len(planned) > 1 {
		return fmt.Sprintf("no cheaper option: its pods would need %d new nodes costing $%.4f/h against $%.4f/h now (a replacement must save at least %.0f%%)",
			len(planned), cheapest, current, MinReplacementSavings*100)
	}
	return fmt.Sprintf("no cheaper option: the cheapest replacement, %s %s, costs $%.4f/h against $%.4f/h now (a replacement must save at least %.0f%%)",
		planned[0].Launch.InstanceType, planned[0].Launch.CapacityType, cheapest, current, MinReplacementSavings*100)
}

// BalancedThreshold is k of the Balanced policy: a move is taken when its savings fraction is at
// least 1/k of its disruption fraction (Karpenter's default consolidationThreshold).
const BalancedThreshold = 2.0

// disruptionCost is what moving the pods of one node costs in the Balanced policy's terms: 1 for
// the node and each pod's eviction cost.
func disruptionCost(pods []*corev1.Pod) float64 { return 1 + podsCost(pods) }

// balanced returns why the command is refused by the Balanced policy of one of its candidates'
// NodePools, or "". Each such NodePool is scored on its own: its share of the savings (its
// candidates' price less their share of the replacement's, by price) over its total cost,
// against its candidates' disruption cost over its total.
func balanced(cmd *command) string {
	pools := map[*pool][]*candidate{}
	var order []*pool
	for _, cand := range cmd.candidates {
		if cand.pool.nodePool.Spec.Disruption.ConsolidationPolicy != v1.ConsolidationPolicyBalanced {
			continue
		}
		if _, ok := pools[cand.pool]; !ok {
			order = append(order, cand.pool)
		}
		pools[cand.pool] = append(pools[cand.pool], cand)
	}
	for _, p := range order {
		price, disruption := 0.0, 0.0
		for _, cand := range pools[p] {
			price += cand.price
			disruption += disruptionCost(cand.pods)
		}
		savings := price
		if cmd.current > 0 {
			savings -= cmd.price * price / cmd.current
		}
		if p.cost <= 0 || p.disruption <= 0 {
			return fmt.Sprintf("nodepool %s is Balanced and its cost is not known", p.nodePool.Name)
		}
		savingsFraction, disruptionFraction := savings/p.cost, disruption/p.disruption
		if savingsFraction*BalancedThreshold < disruptionFraction {
			pods := 0
			for _, cand := range pools[p] {
				pods += len(cand.pods)
			}
			return fmt.Sprintf("nodepool %s is Balanced: the move saves %.1f%% of its cost ($%.4f/h) but disrupts %.1f%% of it (%d node(s), %d pod(s)); it must save at least 1/%.0f as much as it disrupts",
				p.nodePool.Name, savingsFraction*100, savings, disruptionFraction*100, len(pools[p]), pods, BalancedThreshold)
		}
	}
	return ""
}

// restrict narrows a planned NodeClaim to the options, priced at the first.
func restrict(nc scheduling.NodeClaim, options []scheduling.Launch) scheduling.NodeClaim {
	names := make([]string, len(options))
	for i, o := range options {
		names[i] = o.InstanceType
	}
	nc.InstanceTypes = names
	nc.Launch = options[0]
	reqs := make([]v1.NodeSelectorRequirementWithMinValues, 0, len(nc.Requirements))
	for _, r := range nc.Requirements {
		if r.Key == corev1.LabelInstanceTypeStable && r.Operator == v1.NodeSelectorOpIn {
			r.Values = names
		}
		reqs = append(reqs, r)
	}
	nc.Requirements = reqs
	return nc
}
