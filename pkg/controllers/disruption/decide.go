package disruption

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// MinReplacementSavings is the least fraction of the candidates' hourly price that a
// replacement must save: a replacement priced above (1-MinReplacementSavings) times what the
// candidates cost is not taken, so that a cluster at rest makes no moves (no replacing a node
// with one of its own type, nor with one a cent cheaper).
const MinReplacementSavings = 0.05

// MinSpotToSpotOptions is how many cheaper instance types a spot node's spot replacement needs,
// as in Karpenter: with fewer, the replacement would likely be interrupted sooner than the node
// it replaces. The replacement keeps the cheapest MinSpotToSpotOptions.
const MinSpotToSpotOptions = 15

// MaxMultiNodeCandidates bounds multi-node consolidation's search, as Karpenter's 100.
const MaxMultiNodeCandidates = 100

// method is one way of disrupting nodes, named as the metrics label it.
type method struct {
	reason v1.DisruptionReason
	// label is the metrics' reason; consolidationType their consolidation_type ("" for drift).
	label, consolidationType string
}

var (
	methodEmpty   = method{reason: v1.DisruptionReasonEmpty, label: "empty", consolidationType: "empty"}
	methodDrifted = method{reason: v1.DisruptionReasonDrifted, label: "drifted"}
	methodMulti   = method{reason: v1.DisruptionReasonUnderutilized, label: "underutilized", consolidationType: "multi"}
	methodSingle  = method{reason: v1.DisruptionReasonUnderutilized, label: "underutilized", consolidationType: "single"}
)

// command is a decision: delete the candidates, or launch the replacements, wait for them to be
// initialized and then delete the candidates.
type command struct {
	method       method
	candidates   []*candidate
	replacements []scheduling.NodeClaim
	// price is the replacements' summed hourly cost (launch price and per-node cost); current
	// the candidates' (of those priced, see priceOf).
	price, current float64
	// validateAt is when the command is checked again before it is carried out.
	validateAt time.Time
	// launched are the replacement NodeClaims created, at launchedAt.
	launched   []string
	launchedAt time.Time
	// decided describes a command a new leader resumed from its record (see record.go).
	decided string
}

func (c *command) decision() string {
	if len(c.replacements) > 0 {
		return "replace"
	}
	return "delete"
}

// savings is the hourly price the command takes off the cluster.
func (c *command) savings() float64 { return c.current - c.price }

// nodeNames are the candidates' Node names.
func (c *command) nodeNames() []string {
	out := make([]string, len(c.candidates))
	for i, cand := range c.candidates {
		out[i] = cand.node.Name()
	}
	return out
}

// describe says what the command does, for events and logs.
func (c *command) describe() string {
	if c.decided != "" {
		return c.decided
	}
	if len(c.replacements) == 0 {
		if c.current > 0 {
			return fmt.Sprintf("%s, deleting %d node(s), saving $%.4f/h", c.method.reason, len(c.candidates), c.savings())
		}
		return fmt.Sprintf("%s, deleting %d node(s)", c.method.reason, len(c.candidates))
	}
	r := c.replacements[0].Launch
	if len(c.replacements) > 1 {
		types := make([]string, len(c.replacements))
		for i := range c.replacements {
			types[i] = c.replacements[i].Launch.InstanceType + " " + c.replacements[i].Launch.CapacityType
		}
		return fmt.Sprintf("%s, replacing %d node(s) with %d (cheapest options %s, $%.4f/h together), saving $%.4f/h",
			c.method.reason, len(c.candidates), len(c.replacements), strings.Join(types, ", "), c.price, c.savings())
	}
	return fmt.Sprintf("%s, replacing %d node(s) with %d (cheapest option %s %s at $%.4f/h), saving $%.4f/h",
		c.method.reason, len(c.candidates), len(c.replacements), r.InstanceType, r.CapacityType, c.price, c.savings())
}

func newCommand(m method, cands []*candidate, replacements []scheduling.NodeClaim) *command {
	cmd := &command{method: m, candidates: cands, replacements: replacements}
	for _, cand := range cands {
		if cand.priced {
			cmd.current += cand.price
		}
	}
	for i := range replacements {
		cmd.price += replacements[i].Launch.Price + replacements[i].NodeCost
	}
	return cmd
}

// decision is the outcome of deciding: a command or none, and why each node considered is kept.
type decision struct {
	cmd *command
	// notes say, by NodeClaim name, why a candidate was not taken.
	notes map[string]string
}

func (d *decision) note(cand *candidate, why string) {
	if d.notes == nil {
		d.notes = map[string]string{}
	}
	d.notes[cand.name()] = why
}

// decide runs the methods in Karpenter's order (Empty, Drifted, multi-node then single-node
// consolidation) and returns the first command found. It reads only the pass.
func (ps *pass) decide() (*decision, error) {
	d := &decision{}
	for _, run := range []func(*decision) (*command, error){ps.empty, ps.drifted, ps.multi, ps.single} {
		cmd, err := run(d)
		if err != nil {
			return d, err
		}
		if cmd != nil {
			d.cmd = cmd
			return d, nil
		}
	}
	return d, nil
}

// room returns how many more of the pool's nodes the reason's budgets let this pass take, and
// why not when none.
func (ps *pass) room(p *pool, reason v1.DisruptionReason) (int, string) {
	allowed, limiting, err := limitingBudget(p.nodePool, reason, p.nodes, ps.now)
	if err != nil {
		return 0, fmt.Sprintf("disruption budget cannot be read: %v", err)
	}
	left := allowed - p.disrupting - p.taken
	if left > 0 {
		return left, ""
	}
	return 0, fmt.Sprintf("disruption budget exhausted for %s: %s allows %d node(s) disrupted at once", reason, limiting, allowed)
}

// withinBudgets returns the candidates that the budgets of reason let go together, in order,
// noting the others.
func (ps *pass) withinBudgets(d *decision, cands []*candidate, reason v1.DisruptionReason) []*candidate {
	var out []*candidate
	for _, cand := range cands {
		if n, why := ps.room(cand.pool, reason); n <= 0 {
			d.note(cand, why)
			continue
		}
		cand.pool.taken++
		out = append(out, cand)
	}
	for _, cand := range out {
		cand.pool.taken--
	}
	return out
}

// empty deletes every empty consolidatable node the Empty budgets allow.
func (ps *pass) empty(d *decision) (*command, error) {
	cands := ps.withinBudgets(d, ps.candidates(func(c *candidate) bool { return c.consolidatable && len(c.pods) == 0 }), v1.DisruptionReasonEmpty)
	if len(cands) == 0 {
		return nil, nil
	}
	return newCommand(methodEmpty, cands, nil), nil
}

// drifted deletes every drifted node with no pod to move that the Drifted budgets allow, else
// replaces the first drifted node whose pods all find room, on existing nodes or on as many new
// NodeClaims as they need, whatever they cost.
func (ps *pass) drifted(d *decision) (*command, error) {
	all := ps.withinBudgets(d, ps.candidates(func(c *candidate) bool { return c.drifted }), v1.DisruptionReasonDrifted)
	if len(all) == 0 {
		return nil, nil
	}
	if empty := slices.DeleteFunc(slices.Clone(all), func(c *candidate) bool { return len(c.pods) > 0 }); len(empty) > 0 {
		return newCommand(methodDrifted, empty, nil), nil
	}
	for _, cand := range all {
		out, err := ps.simulate([]*candidate{cand})
		if err != nil {
			return nil, err
		}
		if out.unplaced != "" {
			d.note(cand, "drifted, but "+out.unplaced)
			continue
		}
		return newCommand(methodDrifted, []*candidate{cand}, out.replacements), nil
	}
	return nil, nil
}

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

// multi finds several underutilized candidates to remove together, deleted or replaced by
// cheaper nodes, among the first MaxMultiNodeCandidates in order. When all that the budgets let
// go together can simply be deleted, that is the command (one simulation). Otherwise two
// searches run and the one that saves more wins (on a tie, grow's, which moves no node for
// nothing): Karpenter's, the longest prefix that works, found by binary search (prefix), which
// finds merges no candidate makes alone; and grow, which adds candidates one at a time where
// they save something. A prefix alone falls short twice: one candidate whose pods fit nowhere
// cheaper ends every prefix at it and leaves the nodes behind it to single-node consolidation,
// one per pass; and a longer prefix may carry a node replaced at a loss on the savings of the
// others. When grow's best is one node, single-node consolidation takes it.
func (ps *pass) multi(d *decision) (*command, error) {
	all := ps.underutilized(d)
	together := ps.withinBudgets(d, all[:min(len(all), MaxMultiNodeCandidates)], v1.DisruptionReasonUnderutilized)
	var prefix *command
	if len(together) >= 2 {
		cmd, _, err := ps.consolidate(together, methodMulti)
		if err != nil || cmd != nil && len(cmd.replacements) == 0 {
			return cmd, err
		}
		if prefix = cmd; prefix == nil {
			if prefix, err = ps.prefix(together[:len(together)-1]); err != nil {
				return nil, err
			}
		}
	}
	grown, err := ps.grow(ps.unstuck(all))
	if err != nil {
		return nil, err
	}
	switch {
	case prefix != nil && (grown == nil || prefix.savings() > grown.savings()+1e-9):
		return prefix, nil
	case grown != nil && len(grown.candidates) >= 2:
		return grown, nil
	}
	return nil, nil
}

// prefix returns the command for the longest prefix of at least two of the candidates that can
// be deleted or replaced by cheaper nodes, by binary search as Karpenter does: a prefix that
// works makes the search try longer ones. Nil when none works.
func (ps *pass) prefix(cands []*candidate) (*command, error) {
	var best *command
	lo, hi := 2, len(cands)
	for lo <= hi {
		mid := (lo + hi) / 2
		cmd, _, err := ps.consolidate(cands[:mid], methodMulti)
		if err != nil {
			return nil, err
		}
		if cmd != nil {
			best, lo = cmd, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best, nil
}

// grow builds a command from the candidates, taking them in order, and returns it (nil when no
// candidate can go). A candidate joins when its NodePool's budget has room, the set with it
// still works, and it adds at least MinReplacementSavings of its own price to the savings: a
// node merely replaced by one like it, carried by the savings of the others, is churn. A
// candidate that fails alone (while the set is empty) is remembered with why, so that
// single-node consolidation does not simulate it again.
func (ps *pass) grow(cands []*candidate) (*command, error) {
	var cmd *command
	var chosen []*candidate
	defer func() {
		for _, cand := range chosen {
			cand.pool.taken--
		}
	}()
	for _, cand := range cands {
		if n, _ := ps.room(cand.pool, v1.DisruptionReasonUnderutilized); n <= 0 {
			continue
		}
		next, why, err := ps.consolidate(append(slices.Clone(chosen), cand), methodMulti)
		if err != nil {
			return nil, err
		}
		if len(chosen) == 0 {
			ps.remember(cand, next != nil, why)
		}
		if next == nil || cmd != nil && next.savings()-cmd.savings() < MinReplacementSavings*cand.price {
			continue
		}
		cmd = next
		chosen = append(chosen, cand)
		cand.pool.taken++
	}
	return cmd, nil
}

// unstuck returns, of the candidates, the first MaxMultiNodeCandidates that earlier passes did
// not find stuck on their own, then the stuck ones, in order, at most MaxMultiNodeCandidates in
// all. Candidates whose pods fit nowhere cheaper stay quiet longest and so come first in
// candidate order, pass after pass: without this they filled grow's window while the nodes that
// could go waited for single-node consolidation, one per pass. A stuck node still goes alone
// through single-node consolidation, which tries every candidate, and in a prefix.
func (ps *pass) unstuck(cands []*candidate) []*candidate {
	out := make([]*candidate, 0, min(len(cands), MaxMultiNodeCandidates))
	for _, stuck := range []bool{false, true} {
		for _, cand := range cands {
			if ps.stuckBefore[cand.name()] == stuck && len(out) < MaxMultiNodeCandidates {
				out = append(out, cand)
			}
		}
	}
	return out
}

// remember records whether the candidate can go alone, and why not, for the rest of the pass.
func (ps *pass) remember(cand *candidate, movable bool, why string) {
	if movable {
		if ps.movable == nil {
			ps.movable = map[*candidate]bool{}
		}
		ps.movable[cand] = true
		return
	}
	if ps.alone == nil {
		ps.alone = map[*candidate]string{}
	}
	ps.alone[cand] = why
}

// single takes the first underutilized candidate that can be deleted, or replaced by one
// cheaper node, noting why each one before it cannot.
func (ps *pass) single(d *decision) (*command, error) {
	for _, cand := range ps.underutilized(d) {
		if why, failed := ps.alone[cand]; failed {
			d.note(cand, why)
			continue
		}
		cmd, why, err := ps.consolidate([]*candidate{cand}, methodSingle)
		if err != nil {
			return nil, err
		}
		ps.remember(cand, cmd != nil, why)
		if cmd != nil {
			return cmd, nil
		}
		d.note(cand, why)
	}
	return nil, nil
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
// as the solver plans them. A spot node's spot replacement needs MinSpotToSpotOptions cheaper
// types and keeps that many, and is one NodeClaim.
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
	if allSpot && slices.ContainsFunc(options, func(o []scheduling.Launch) bool { return o[0].CapacityType == v1.CapacityTypeSpot }) {
		if len(planned) > 1 {
			return nil, fmt.Sprintf("its pods would need %d new nodes, and spot nodes are replaced by spot only one for one", len(planned)), nil
		}
		spot := slices.DeleteFunc(slices.Clone(options[0]), func(o scheduling.Launch) bool {
			return o.CapacityType != v1.CapacityTypeSpot || o.Price+planned[0].NodeCost >= limit
		})
		if len(spot) < MinSpotToSpotOptions {
			return nil, fmt.Sprintf("spot-to-spot replacement needs at least %d cheaper instance types, found %d (cheapest %s at $%.4f/h against $%.4f/h now)",
				MinSpotToSpotOptions, len(spot), options[0][0].InstanceType, options[0][0].Price+planned[0].NodeCost, current), nil
		}
		options[0] = spot[:MinSpotToSpotOptions]
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

// revalidate decides the command again on a later pass: every candidate must still be one for
// its method, within budgets, and the decision must be the same kind at no higher price. It
// returns the command rebuilt on the fresh candidates, or why it no longer holds.
func (ps *pass) revalidate(old *command) (*command, string, error) {
	cands, why := ps.rebind(old)
	if why != "" {
		return nil, why, nil
	}
	defer func() {
		for _, cand := range cands {
			cand.pool.taken--
		}
	}()
	cmd, why, err := ps.redecide(old.method, cands)
	if err != nil || cmd == nil {
		return nil, why, err
	}
	if old.method != methodDrifted && (len(cmd.replacements) > len(old.replacements) || cmd.price > old.price+1e-9) {
		return nil, fmt.Sprintf("the decision changed: now %s", cmd.describe()), nil
	}
	return cmd, "", nil
}

// rebind finds the command's candidates among this pass's, each taken from its pool's budget
// (the caller gives them back), or says why one cannot be.
func (ps *pass) rebind(old *command) ([]*candidate, string) {
	byName := map[string]*candidate{}
	for _, p := range ps.pools {
		for _, cand := range p.candidates {
			byName[cand.name()] = cand
		}
	}
	var cands []*candidate
	for _, o := range old.candidates {
		cand := byName[o.name()]
		why := ""
		if cand == nil {
			why = fmt.Sprintf("node %s is no longer a candidate", o.node.Name())
		} else if n, full := ps.room(cand.pool, old.method.reason); n <= 0 {
			why = full
		}
		if why != "" {
			for _, c := range cands {
				c.pool.taken--
			}
			return nil, why
		}
		cand.pool.taken++
		cands = append(cands, cand)
	}
	return cands, ""
}

// redecide decides the method again on exactly these candidates.
func (ps *pass) redecide(m method, cands []*candidate) (*command, string, error) {
	switch m {
	case methodEmpty:
		for _, cand := range cands {
			if !cand.consolidatable || len(cand.pods) > 0 {
				return nil, fmt.Sprintf("node %s is no longer empty", cand.node.Name()), nil
			}
		}
		return newCommand(m, cands, nil), "", nil
	case methodDrifted:
		if !cands[0].drifted {
			return nil, fmt.Sprintf("node %s is no longer drifted", cands[0].node.Name()), nil
		}
		out, err := ps.simulate(cands)
		switch {
		case err != nil:
			return nil, "", err
		case out.unplaced != "":
			return nil, out.unplaced, nil
		case len(cands) > 1 && len(out.replacements) > 0:
			return nil, "the drifted nodes are no longer empty", nil
		}
		return newCommand(m, cands, out.replacements), "", nil
	}
	for _, cand := range cands {
		if !cand.consolidatable {
			return nil, fmt.Sprintf("node %s: %s", cand.node.Name(), cand.notConsolidatable), nil
		}
	}
	return ps.consolidate(cands, m)
}
