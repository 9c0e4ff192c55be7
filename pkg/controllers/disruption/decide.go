package disruption

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

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
