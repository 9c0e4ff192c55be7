package disruption

import (
	"slices"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// MaxMultiNodeCandidates bounds multi-node consolidation's search, as Karpenter's 100.
const MaxMultiNodeCandidates = 100

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
