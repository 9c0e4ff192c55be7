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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/joinfailure"
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
// writes nothing. opts are the controller's (WithNodeCost): give the ones the controller runs
// with, or prices and savings differ from its decisions.
func Explain(ctx context.Context, kube client.Client, cloud cloudprovider.CloudProvider, nodeName string, now time.Time, opts ...Option) (*Explanation, error) {
	c := &Controller{kube: kube, apiReader: kube, cluster: cluster.New(kube, false), cloud: cloud, JoinFailureHold: joinfailure.DefaultHold}
	for _, o := range opts {
		o(c)
	}
	blocked := map[string]string{}
	ps, err := c.newPass(ctx, now, nil, func(sn *cluster.StateNode, why string) { blocked[sn.NodeClaim.Name] = why })
	if ps == nil {
		return nil, err
	}
	sn := ps.find(nodeName)
	if sn == nil {
		return nil, errors.Join(fmt.Errorf("no node or nodeclaim named %s", nodeName), err)
	}
	out := &Explanation{Node: sn.Name(), NodePool: sn.NodePool(), State: "kept"}
	if sn.NodeClaim == nil {
		out.State, out.Reason = "not-managed", "the node has no NodeClaim: Joiner did not launch it and does not disrupt it"
		return out, err
	}
	out.describeNodeClaim(sn.NodeClaim)
	p, cand := ps.poolOf(sn)
	if p != nil {
		out.Budgets = ps.budgetsLeft(p)
	}
	if price, ok := ps.priceOf(sn); ok {
		out.Price = &price
	}
	out.State, out.Reason, err = ps.stateOf(sn, cand, blocked[sn.NodeClaim.Name], err)
	if sn.Node != nil && sn.Initialized() && !sn.Deleting() {
		dry, derr := ps.dryRun(sn, cand)
		err = errors.Join(err, derr)
		out.DryRun = dry
	}
	return out, err
}

// find returns the node with that Node or NodeClaim name, or nil.
func (ps *pass) find(name string) *cluster.StateNode {
	if sn := ps.byName[name]; sn != nil {
		return sn
	}
	for _, sn := range ps.nodes {
		if sn.NodeClaim != nil && sn.NodeClaim.Name == name {
			return sn
		}
	}
	return nil
}

// poolOf returns the node's pool and, if it is one, its candidate.
func (ps *pass) poolOf(sn *cluster.StateNode) (*pool, *candidate) {
	var p *pool
	for _, q := range ps.pools {
		if q.nodePool.Name == sn.NodePool() {
			p = q
		}
		for _, cand := range q.candidates {
			if cand.node == sn {
				return q, cand
			}
		}
	}
	return p, nil
}

// describeNodeClaim fills what the NodeClaim says of itself.
func (e *Explanation) describeNodeClaim(nc *v1.NodeClaim) {
	e.NodeClaim = nc.Name
	e.Consolidatable = isTrue(nc, v1.ConditionTypeConsolidatable)
	if cond := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDrifted); cond != nil && cond.Status == metav1.ConditionTrue {
		e.Drifted = cond.Reason
	}
	if d := nc.Spec.ExpireAfter.Duration; d != nil {
		at := nc.CreationTimestamp.Add(*d)
		e.ExpiresAt = &at
	}
}

// budgetsLeft says per reason how many more of the pool's nodes may be disrupted now.
func (ps *pass) budgetsLeft(p *pool) map[string]string {
	out := map[string]string{}
	for _, reason := range []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonDrifted, v1.DisruptionReasonUnderutilized} {
		n, why := ps.room(p, reason)
		switch {
		case n <= 0:
			out[string(reason)] = why
		case n > 1<<30:
			out[string(reason)] = "no limit"
		default:
			out[string(reason)] = fmt.Sprintf("%d more node(s)", n)
		}
	}
	return out
}

// stateOf returns the node's state and reason; for a candidate it decides, as the next pass
// would, and joins any error to err.
func (ps *pass) stateOf(sn *cluster.StateNode, cand *candidate, blocked string, err error) (string, string, error) {
	switch {
	case sn.Deleting():
		reason := "the node is being deleted"
		if cond := conditionMessage(sn.NodeClaim, v1.ConditionTypeDisruptionReason); cond != "" {
			reason += ": " + cond
		}
		return "deleting", reason, err
	case sn.Node != nil && disrupted(sn.Node):
		return "disrupting", "tainted " + v1.DisruptedTaintKey + ": a command is replacing or deleting it", err
	case blocked != "":
		return "kept", blocked, err
	case cand == nil && (sn.Node == nil || !sn.Initialized()):
		return "kept", "not initialized", err
	case cand == nil:
		return "kept", "not a candidate", err
	}
	d, derr := ps.decide()
	err = errors.Join(err, derr)
	switch {
	case d.cmd != nil && slices.Contains(d.cmd.candidates, cand):
		return "candidate", "the next pass decides: " + d.cmd.describe() + fmt.Sprintf(" (validated again %s later)", ValidationPeriod), err
	case d.notes[cand.name()] != "":
		return "kept", d.notes[cand.name()], err
	case d.cmd != nil:
		return "candidate", fmt.Sprintf("another decision goes first: %s of %v", d.cmd.describe(), d.cmd.nodeNames()), err
	}
	return "candidate", "no method takes it now", err
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
