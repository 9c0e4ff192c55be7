package disruption

import (
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// empty deletes every empty consolidatable node the Empty budgets allow.
func (ps *pass) empty(d *decision) (*command, error) {
	cands := ps.withinBudgets(d, ps.candidates(func(c *candidate) bool { return c.consolidatable && len(c.pods) == 0 }), v1.DisruptionReasonEmpty)
	if len(cands) == 0 {
		return nil, nil
	}
	return newCommand(methodEmpty, cands, nil), nil
}
