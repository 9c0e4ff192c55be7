package scheduling

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Requirement is the set of values one label key may take, with whether the label may be absent.
// In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte and Lte all map onto it, and intersecting two
// requirements is exact. The zero value is not useful; build one with NewRequirement.
type Requirement struct {
	// Key is the label key.
	Key string
	// MinValues is the least number of distinct values the launch must keep open (0: none).
	MinValues int

	complement bool // true: every value except values; false: exactly values
	values     map[string]struct{}
	absentOK   bool  // the label may be missing from the node
	lower      int64 // values must be integers > lower (math.MinInt64: no bound)
	upper      int64 // values must be integers < upper (math.MaxInt64: no bound)
}

// NewRequirement builds the requirement of one selector term. Gt, Lt, Gte and Lte take exactly one
// integer value; anything else for them is an error, as is an unknown operator.
func NewRequirement(key, operator string, values []string) (*Requirement, error) {
	r := &Requirement{Key: key, values: map[string]struct{}{}, lower: math.MinInt64, upper: math.MaxInt64}
	switch operator {
	case string(v1.NodeSelectorOpIn):
		for _, v := range values {
			r.values[v] = struct{}{}
		}
	case string(v1.NodeSelectorOpNotIn):
		r.complement, r.absentOK = true, true
		for _, v := range values {
			r.values[v] = struct{}{}
		}
	case string(v1.NodeSelectorOpExists):
		r.complement = true
	case string(v1.NodeSelectorOpDoesNotExist):
		r.absentOK = true
	case string(v1.NodeSelectorOpGt), string(v1.NodeSelectorOpLt), string(v1.NodeSelectorOpGte), string(v1.NodeSelectorOpLte):
		if len(values) != 1 {
			return nil, fmt.Errorf("operator %s on key %s needs exactly one value, got %d", operator, key, len(values))
		}
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parsing value of operator %s on key %s, %w", operator, key, err)
		}
		r.complement = true
		switch operator {
		case string(v1.NodeSelectorOpGt):
			r.lower = n
		case string(v1.NodeSelectorOpGte):
			r.lower = satSub(n)
		case string(v1.NodeSelectorOpLt):
			r.upper = n
		default:
			r.upper = satAdd(n)
		}
	default:
		return nil, fmt.Errorf("unknown operator %q on key %s", operator, key)
	}
	return r, nil
}

func satSub(n int64) int64 {
	if n == math.MinInt64 {
		return n
	}
	return n - 1
}

func satAdd(n int64) int64 {
	if n == math.MaxInt64 {
		return n
	}
	return n + 1
}

func (r *Requirement) bounded() bool { return r.lower != math.MinInt64 || r.upper != math.MaxInt64 }

func (r *Requirement) inBounds(value string) bool {
	if !r.bounded() {
		return true
	}
	n, err := strconv.ParseInt(value, 10, 64)
	return err == nil && n > r.lower && n < r.upper
}

// Has reports whether a node whose label Key has this value satisfies the requirement.
func (r *Requirement) Has(value string) bool {
	_, listed := r.values[value]
	return listed != r.complement && r.inBounds(value)
}

// AllowsAbsent reports whether a node without the label satisfies the requirement.
func (r *Requirement) AllowsAbsent() bool { return r.absentOK }

// Values returns the allowed values, sorted, when the set is finite; nil when it is a complement.
func (r *Requirement) Values() []string {
	if r.complement {
		return nil
	}
	return slices.Sorted(maps.Keys(r.values))
}

// Single returns the one allowed value when exactly one value is allowed and the label must exist.
func (r *Requirement) Single() (string, bool) {
	if r.complement || len(r.values) != 1 || r.absentOK {
		return "", false
	}
	for v := range r.values {
		return v, true
	}
	return "", false
}

// hasPresentValue reports whether some label value satisfies r.
func (r *Requirement) hasPresentValue() bool {
	if !r.complement {
		return len(r.values) > 0 // values are filtered by bounds on intersection
	}
	if !r.bounded() {
		return true
	}
	if r.lower == math.MaxInt64 || r.upper <= r.lower+1 {
		return false
	}
	// A complement over an integer range: empty only if every integer in it is excluded.
	span := uint64(r.upper) - uint64(r.lower) - 1
	if span > uint64(len(r.values)) {
		return true
	}
	for n := r.lower + 1; n < r.upper; n++ {
		if _, excluded := r.values[strconv.FormatInt(n, 10)]; !excluded {
			return true
		}
	}
	return false
}

// Intersect returns the requirement satisfied exactly by the nodes satisfying both r and o.
// MinValues is the larger of the two. Neither input is modified.
func (r *Requirement) Intersect(o *Requirement) *Requirement {
	out := &Requirement{
		Key:       r.Key,
		MinValues: max(r.MinValues, o.MinValues),
		absentOK:  r.absentOK && o.absentOK,
		lower:     max(r.lower, o.lower),
		upper:     min(r.upper, o.upper),
		values:    map[string]struct{}{},
	}
	switch {
	case r.complement && o.complement:
		out.complement = true
		maps.Copy(out.values, r.values)
		maps.Copy(out.values, o.values)
	case r.complement:
		for v := range o.values {
			if _, excluded := r.values[v]; !excluded {
				out.values[v] = struct{}{}
			}
		}
	case o.complement:
		for v := range r.values {
			if _, excluded := o.values[v]; !excluded {
				out.values[v] = struct{}{}
			}
		}
	default:
		for v := range r.values {
			if _, ok := o.values[v]; ok {
				out.values[v] = struct{}{}
			}
		}
	}
	if !out.complement && out.bounded() {
		maps.DeleteFunc(out.values, func(v string, _ struct{}) bool { return !out.inBounds(v) })
	}
	return out
}

// Intersects reports whether some node (with the label or without it) satisfies both r and o.
func (r *Requirement) Intersects(o *Requirement) bool {
	if r.absentOK && o.absentOK {
		return true
	}
	return r.Intersect(o).hasPresentValue()
}

// Empty reports whether no node at all satisfies r.
func (r *Requirement) Empty() bool { return !r.absentOK && !r.hasPresentValue() }

// String renders r for messages, such as "zone In [a b]" or "gen Gt 5".
func (r *Requirement) String() string {
	vals := slices.Sorted(maps.Keys(r.values))
	s := ""
	switch {
	case !r.complement && r.absentOK && len(vals) == 0:
		return r.Key + " DoesNotExist"
	case !r.complement:
		s = fmt.Sprintf("%s In %v", r.Key, vals)
	case r.absentOK:
		s = fmt.Sprintf("%s NotIn %v", r.Key, vals)
	case len(vals) > 0:
		s = fmt.Sprintf("%s Exists except %v", r.Key, vals)
	default:
		s = r.Key + " Exists"
	}
	if r.lower != math.MinInt64 {
		s += fmt.Sprintf(" Gt %d", r.lower)
	}
	if r.upper != math.MaxInt64 {
		s += fmt.Sprintf(" Lt %d", r.upper)
	}
	return s
}

// toAPI renders r as NodeClaim requirements (one or two entries for a bounded complement).
func (r *Requirement) toAPI() []v1.NodeSelectorRequirementWithMinValues {
	var minValues *int
	if r.MinValues > 0 {
		minValues = new(r.MinValues)
	}
	vals := slices.Sorted(maps.Keys(r.values))
	var out []v1.NodeSelectorRequirementWithMinValues
	add := func(op v1.NodeSelectorOperator, values []string) {
		out = append(out, v1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: op, Values: values, MinValues: minValues})
	}
	switch {
	case !r.complement && r.absentOK && len(vals) == 0:
		add(v1.NodeSelectorOpDoesNotExist, nil)
	case !r.complement:
		add(v1.NodeSelectorOpIn, vals)
	case r.absentOK && len(vals) > 0:
		add(v1.NodeSelectorOpNotIn, vals)
	case !r.bounded():
		add(v1.NodeSelectorOpExists, nil)
	}
	if r.complement && r.lower != math.MinInt64 {
		add(v1.NodeSelectorOpGt, []string{strconv.FormatInt(r.lower, 10)})
	}
	if r.complement && r.upper != math.MaxInt64 {
		add(v1.NodeSelectorOpLt, []string{strconv.FormatInt(r.upper, 10)})
	}
	return out
}

// Requirements are ANDed requirements, at most one per key.
type Requirements map[string]*Requirement

// Add intersects req into rs (rs is modified; req is not retained).
func (rs Requirements) Add(req *Requirement) {
	if cur, ok := rs[req.Key]; ok {
		rs[req.Key] = cur.Intersect(req)
		return
	}
	cp := *req
	cp.values = maps.Clone(req.values)
	rs[req.Key] = &cp
}

// Clone returns a copy of rs that shares no mutable state with it (requirements are never mutated
// in place, so the values are shared).
func (rs Requirements) Clone() Requirements { return maps.Clone(rs) }

// Merge returns the intersection of rs and o as new Requirements.
func (rs Requirements) Merge(o Requirements) Requirements {
	out := rs.Clone()
	for _, r := range o {
		out.Add(r)
	}
	return out
}

// Intersects reports whether, on every key both constrain, some node satisfies both.
func (rs Requirements) Intersects(o Requirements) error {
	small, large := rs, o
	if len(small) > len(large) {
		small, large = large, small
	}
	for k, r := range small {
		if q, ok := large[k]; ok && !r.Intersects(q) {
			return fmt.Errorf("%s conflicts with %s", q, r)
		}
	}
	return nil
}

// Compatible reports whether a node described by the node requirements rs can satisfy the pod
// requirements pod: keys both constrain must intersect, and a key the node does not define means
// the label is absent, which the pod's requirement must allow.
func (rs Requirements) Compatible(pod Requirements) error {
	for k, r := range pod {
		q, ok := rs[k]
		if !ok {
			if !r.AllowsAbsent() {
				return fmt.Errorf("%s: the node has no label %s", r, k)
			}
			continue
		}
		if !r.Intersects(q) {
			return fmt.Errorf("%s conflicts with %s", r, q)
		}
	}
	return nil
}

// Matches reports whether a node with these labels satisfies every requirement.
func (rs Requirements) Matches(labels map[string]string) bool {
	for k, r := range rs {
		v, ok := labels[k]
		if !ok {
			if !r.AllowsAbsent() {
				return false
			}
			continue
		}
		if !r.Has(v) {
			return false
		}
	}
	return true
}

// ToAPI renders rs as NodeClaim requirements sorted by key.
func (rs Requirements) ToAPI() []v1.NodeSelectorRequirementWithMinValues {
	var out []v1.NodeSelectorRequirementWithMinValues
	for _, k := range slices.Sorted(maps.Keys(rs)) {
		out = append(out, rs[k].toAPI()...)
	}
	return out
}

// FromNodePoolRequirements parses NodePool (or NodeClaim) requirements, keeping minValues.
func FromNodePoolRequirements(reqs []v1.NodeSelectorRequirementWithMinValues) (Requirements, error) {
	rs := Requirements{}
	for _, in := range reqs {
		r, err := NewRequirement(in.Key, string(in.Operator), in.Values)
		if err != nil {
			return nil, err
		}
		if in.MinValues != nil {
			r.MinValues = *in.MinValues
		}
		rs.Add(r)
	}
	return rs, nil
}

// FromNodeSelectorTerm parses one term of a pod's node affinity (its matchExpressions; matchFields
// are not modelled and are an error).
func FromNodeSelectorTerm(term corev1.NodeSelectorTerm) (Requirements, error) {
	if len(term.MatchFields) > 0 {
		return nil, fmt.Errorf("matchFields are not supported")
	}
	rs := Requirements{}
	for _, e := range term.MatchExpressions {
		r, err := NewRequirement(e.Key, string(e.Operator), e.Values)
		if err != nil {
			return nil, err
		}
		rs.Add(r)
	}
	return rs, nil
}

// FromLabels returns requirements that allow exactly these label values (In, one value each).
func FromLabels(labels map[string]string) Requirements {
	rs := make(Requirements, len(labels))
	for k, v := range labels {
		rs[k] = &Requirement{Key: k, values: map[string]struct{}{v: {}}, lower: math.MinInt64, upper: math.MaxInt64}
	}
	return rs
}
