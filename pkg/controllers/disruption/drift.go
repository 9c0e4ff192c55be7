package disruption

import (
	"slices"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

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
