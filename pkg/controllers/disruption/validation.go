package disruption

import (
	"fmt"
)

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
