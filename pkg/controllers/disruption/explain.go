package disruption

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
)

// Explanation is a node's disruption state as a pass sees it now, with a dry run of removing it.
type Explanation struct {
	Node      string `json:"node"`
	NodeClaim string `json:"nodeClaim,omitempty"`
	NodePool  string `json:"nodePool,omitempty"`
	// State is one of: not-managed, deleting, disrupting (tainted karpenter.sh/disrupted),
	// candidate, kept.
	State string `json:"state"`
	// Reason says why the node is kept, or what the next pass would do with it.
	Reason string `json:"reason"`
	// Drifted is the Drifted condition's reason, if True; Consolidatable whether it is True.
	Drifted        string `json:"drifted,omitempty"`
	Consolidatable bool   `json:"consolidatable"`
	// ExpiresAt is when expireAfter deletes the NodeClaim, if ever.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Price is the node's hourly price, when known.
	Price *float64 `json:"price,omitempty"`
	// Budgets are, per reason, how many more of the NodePool's nodes may be disrupted now.
	Budgets map[string]string `json:"budgets,omitempty"`
	// DryRun is removing the node now, whatever keeps it.
	DryRun *DryRun `json:"dryRun,omitempty"`
}

// DryRun is where the node's pods would go if it were removed now, and what that saves.
type DryRun struct {
	// Placements map each pod (namespace/name) to a node, or to "new NodeClaim" with its type.
	Placements map[string]string `json:"placements,omitempty"`
	// Unplaced names a pod that would fit nowhere.
	Unplaced string `json:"unplaced,omitempty"`
	// Decision is what single-node consolidation would do: delete, replace, or why neither.
	Decision string `json:"decision"`
	// Savings is the hourly price saved, when the decision is delete or replace.
	Savings *float64 `json:"savings,omitempty"`
}

// Explain reads the cluster through kube and the instance types through cloud, as a pass would
// at now, and explains the node named (a Node's name, or a NodeClaim's). It decides nothing and
// writes nothing.
func Explain(ctx context.Context, kube client.Client, cloud cloudprovider.CloudProvider, nodeName string, now time.Time) (*Explanation, error) {
	c := &Controller{kube: kube, apiReader: kube, cluster: cluster.New(kube, false), cloud: cloud}
	blocked := map[string]string{}
	ps, err := c.newPass(ctx, now, nil, func(sn *cluster.StateNode, why string) { blocked[sn.NodeClaim.Name] = why })
	if ps == nil {
		return nil, err
	}
	sn := ps.byName[nodeName]
	if sn == nil {
		for _, n := range ps.nodes {
			if n.NodeClaim != nil && n.NodeClaim.Name == nodeName {
				sn = n
			}
		}
	}
	if sn == nil {
		return nil, errors.Join(fmt.Errorf("no node or nodeclaim named %s", nodeName), err)
	}
	out := &Explanation{Node: sn.Name(), NodePool: sn.NodePool(), State: "kept"}
	if sn.NodeClaim == nil {
		out.State, out.Reason = "not-managed", "the node has no NodeClaim: Joiner did not launch it and does not disrupt it"
		return out, err
	}
	nc := sn.NodeClaim
	out.NodeClaim = nc.Name
	out.Consolidatable = isTrue(nc, v1.ConditionTypeConsolidatable)
	if isTrue(nc, v1.ConditionTypeDrifted) {
		for _, cond := range nc.Status.Conditions {
			if cond.Type == v1.ConditionTypeDrifted {
				out.Drifted = cond.Reason
			}
		}
	}
	if d := nc.Spec.ExpireAfter.Duration; d != nil {
		at := nc.CreationTimestamp.Add(*d)
		out.ExpiresAt = &at
	}
	var p *pool
	var cand *candidate
	for _, q := range ps.pools {
		if q.nodePool.Name == sn.NodePool() {
			p = q
		}
		for _, x := range q.candidates {
			if x.node == sn {
				cand = x
			}
		}
	}
	if p != nil {
		out.Budgets = map[string]string{}
		for _, reason := range []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonDrifted, v1.DisruptionReasonUnderutilized} {
			n, why := ps.room(p, reason)
			if n <= 0 {
				out.Budgets[string(reason)] = why
			} else if n > 1<<30 {
				out.Budgets[string(reason)] = "no limit"
			} else {
				out.Budgets[string(reason)] = fmt.Sprintf("%d more node(s)", n)
			}
		}
	}
	switch {
	case sn.Deleting():
		out.State, out.Reason = "deleting", "the node is being deleted"
		if cond := conditionMessage(nc, v1.ConditionTypeDisruptionReason); cond != "" {
			out.Reason += ": " + cond
		}
	case sn.Node != nil && disrupted(sn.Node):
		out.State, out.Reason = "disrupting", "tainted "+v1.DisruptedTaintKey+": a command is replacing or deleting it"
	case blocked[nc.Name] != "":
		out.Reason = blocked[nc.Name]
	case cand != nil:
		out.State = "candidate"
		d, derr := ps.decide()
		err = errors.Join(err, derr)
		switch {
		case d.cmd != nil && slices.Contains(d.cmd.candidates, cand):
			out.Reason = "the next pass decides: " + d.cmd.describe() + fmt.Sprintf(" (validated again %s later)", ValidationPeriod)
		case d.notes[nc.Name] != "":
			out.State, out.Reason = "kept", d.notes[nc.Name]
		case d.cmd != nil:
			out.Reason = fmt.Sprintf("another decision goes first: %s of %v", d.cmd.describe(), d.cmd.nodeNames())
		default:
			out.Reason = "no method takes it now"
		}
	case sn.Node == nil || !sn.Initialized():
		out.Reason = "not initialized"
	default:
		out.Reason = "not a candidate"
	}
	if sn.Node != nil && sn.Initialized() && !sn.Deleting() {
		dry, derr := ps.dryRun(sn, cand)
		err = errors.Join(err, derr)
		out.DryRun = dry
	}
	if price, ok := ps.priceOf(sn); ok {
		out.Price = &price
	}
	return out, err
}

// dryRun simulates removing the node now, as single-node consolidation would.
func (ps *pass) dryRun(sn *cluster.StateNode, cand *candidate) (*DryRun, error) {
	if cand == nil {
		cand = &candidate{pool: &pool{nodePool: &v1.NodePool{}}, node: sn, pods: reschedulable(sn.Pods)}
		cand.price, cand.priced = ps.priceOf(sn)
		for _, p := range ps.pools {
			if p.nodePool.Name == sn.NodePool() {
				cand.pool = p
			}
		}
	}
	out := &DryRun{Placements: map[string]string{}}
	sim, err := ps.simulate([]*candidate{cand})
	if err != nil {
		return nil, err
	}
	out.Unplaced = sim.unplaced
	launches := map[string]string{}
	for _, r := range sim.replacements {
		launches[r.Name] = fmt.Sprintf("new NodeClaim of nodepool %s (cheapest %s %s at $%.4f/h)", r.NodePool, r.Launch.InstanceType, r.Launch.CapacityType, r.Launch.Price)
	}
	for _, pod := range cand.pods {
		where, ok := sim.placements[pod.UID]
		if !ok {
			continue
		}
		if l, ok := launches[where]; ok {
			where = l
		}
		out.Placements[pod.Namespace+"/"+pod.Name] = where
	}
	cmd, why, err := ps.consolidate([]*candidate{cand}, methodSingle)
	if err != nil {
		return out, err
	}
	if cmd == nil {
		out.Decision = why
		return out, nil
	}
	out.Decision = cmd.describe()
	if cmd.current > 0 {
		s := cmd.savings()
		out.Savings = &s
	}
	return out, nil
}

// WriteText prints the explanation for a person.
func (e *Explanation) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Node:       %s\n", e.Node)
	if e.NodeClaim != "" {
		fmt.Fprintf(&b, "NodeClaim:  %s\nNodePool:   %s\n", e.NodeClaim, e.NodePool)
	}
	fmt.Fprintf(&b, "State:      %s\nReason:     %s\n", e.State, e.Reason)
	if e.Price != nil {
		fmt.Fprintf(&b, "Price:      $%.4f/h\n", *e.Price)
	}
	fmt.Fprintf(&b, "Consolidatable: %v\n", e.Consolidatable)
	if e.Drifted != "" {
		fmt.Fprintf(&b, "Drifted:    %s\n", e.Drifted)
	}
	if e.ExpiresAt != nil {
		fmt.Fprintf(&b, "Expires at: %s\n", e.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if len(e.Budgets) > 0 {
		b.WriteString("Budgets:\n")
		for _, reason := range slices.Sorted(maps.Keys(e.Budgets)) {
			fmt.Fprintf(&b, "  %-14s %s\n", reason+":", e.Budgets[reason])
		}
	}
	if e.DryRun != nil {
		b.WriteString("Dry run, if the node were removed now:\n")
		for _, pod := range slices.Sorted(maps.Keys(e.DryRun.Placements)) {
			fmt.Fprintf(&b, "  %s -> %s\n", pod, e.DryRun.Placements[pod])
		}
		if e.DryRun.Unplaced != "" {
			fmt.Fprintf(&b, "  %s\n", e.DryRun.Unplaced)
		}
		fmt.Fprintf(&b, "  Decision: %s\n", e.DryRun.Decision)
		if e.DryRun.Savings != nil {
			fmt.Fprintf(&b, "  Savings:  $%.4f/h\n", *e.DryRun.Savings)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func conditionMessage(nc *v1.NodeClaim, conditionType string) string {
	for _, c := range nc.Status.Conditions {
		if c.Type == conditionType && c.Status == "True" {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}
