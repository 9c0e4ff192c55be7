package scheduling

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func (s *solver) plan() *Plan {
	p := &Plan{Order: s.order}
	for _, n := range s.nodes {
		if n.existing != nil {
			for _, pod := range n.pods {
				p.Placements = append(p.Placements, Placement{Pod: pod, Node: n.name})
			}
			continue
		}
		p.NodeClaims = append(p.NodeClaims, s.nodeClaim(n))
	}
	for _, c := range s.classes {
		for _, pod := range c.pods {
			p.Unschedulable = append(p.Unschedulable, Unschedulable{Pod: pod, Reasons: s.reasons(c)})
		}
	}
	return p
}

type option struct {
	t   *itInfo
	off Offering
}

func (s *solver) nodeClaim(n *node) NodeClaim {
	f := s.offerFilter(n.reqs)
	var opts []option
	for _, i := range s.priceOrder(n.pool, f) {
		if len(opts) == MaxInstanceTypes {
			break
		}
		if n.types.has(i) {
			o, _ := f.cheapest(n.pool.types[i])
			opts = append(opts, option{t: n.pool.types[i], off: o})
		}
	}
	slices.SortStableFunc(opts, func(a, b option) int {
		if c := cmp.Compare(a.off.Price, b.off.Price); c != 0 {
			return c
		}
		return strings.Compare(a.t.it.Name, b.t.it.Name)
	})
	opts = opts[:min(len(opts), MaxInstanceTypes)]
	names := make([]string, len(opts))
	for i, o := range opts {
		names[i] = o.t.it.Name
	}
	// The options already satisfy any instance-type requirement, so the narrowed one is just
	// their names (cheapest first), keeping its minValues.
	reqs := n.reqs.Clone()
	itReq := v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: names}
	if r, ok := reqs[corev1.LabelInstanceTypeStable]; ok {
		if r.MinValues > 0 {
			itReq.MinValues = new(r.MinValues)
		}
		delete(reqs, corev1.LabelInstanceTypeStable)
	}
	labels := maps.Clone(n.pool.labels)
	for k, r := range reqs {
		if v, ok := r.Single(); ok {
			labels[k] = v
		}
	}
	if len(names) == 1 {
		labels[corev1.LabelInstanceTypeStable] = names[0]
	}
	apiReqs := append(reqs.ToAPI(), itReq)
	nc := NodeClaim{
		Name: n.name, NodePool: n.pool.name, Requirements: apiReqs, Labels: labels,
		Taints: n.pool.taints, Pods: n.pods, InstanceTypes: names, Requests: s.dims.list(n.used), NodeCost: n.pool.nodeCost,
		MinValuesRelaxed: s.relaxed[n],
	}
	if len(opts) > 0 {
		o := opts[0]
		nc.Launch = Launch{InstanceType: o.t.it.Name, Zone: o.off.Zone, CapacityType: o.off.CapacityType, Price: o.off.Price}
	}
	return nc
}

func (s *solver) reasons(c *class) []Reason {
	if c.invalid != nil {
		return []Reason{{Code: ReasonInvalid, Message: c.invalid.Error()}}
	}
	v := c.variants[c.cur]
	var out []Reason
	for _, p := range s.pools {
		switch {
		case v.perPool[p.idx].reason != nil:
			out = append(out, *v.perPool[p.idx].reason)
		case c.poolFail[p.idx].Code != "":
			out = append(out, c.poolFail[p.idx])
		default:
			out = append(out, Reason{NodePool: p.name, Code: ReasonTopology, Message: "no node satisfies the pod's topology and affinity constraints"})
		}
	}
	if len(s.pools) == 0 {
		out = append(out, Reason{Code: ReasonNoFit, Message: "no existing node fits and no NodePool can launch now (none exists, or each is held or not ready)"})
	}
	return out
}

// priceOrder returns the positions of p's types that have an offering f allows, by that
// offering's price, then name. It is computed once per pool and distinct filter.
func (s *solver) priceOrder(p *pool, f offerFilter) []int {
	key := fmt.Sprint(f.zone, f.ct)
	if order, ok := p.priceOrders[key]; ok {
		return order
	}
	var order []int
	price := make([]float64, len(p.types))
	for i, t := range p.types {
		if o, ok := f.cheapest(t); ok {
			order = append(order, i)
			price[i] = o.Price
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(price[a], price[b]); c != 0 {
			return c
		}
		return strings.Compare(p.types[a].it.Name, p.types[b].it.Name)
	})
	if p.priceOrders == nil {
		p.priceOrders = map[string][]int{}
	}
	p.priceOrders[key] = order
	return order
}
