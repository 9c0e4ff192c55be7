package scheduling

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// target is the ordered list of allowed domains of one topology key for the next pod.
type target struct {
	key    string
	values []string
}

// pin is a chosen domain.
type pin struct{ key, value string }

// run places the pods class by class, in passes: a pod that fails a pass (its affinity target
// may come later in the order) is retried in the next one, as long as a pass places some pod.
// When a pass places none, one last pass relaxes the preferences of pods that were waiting for an
// affinity target before they are reported unschedulable. Every pass but the last places at
// least one pod, so there are at most as many passes as pods plus one.
func (s *solver) run() {
	pending := make([][]*corev1.Pod, len(s.classes))
	for i, c := range s.classes {
		pending[i] = c.pods
	}
	for left := true; left; {
		progress := false
		left = false
		for i, c := range s.classes {
			if c.invalid != nil {
				continue
			}
			var still []*corev1.Pod
			for _, pod := range pending[i] {
				if s.placePod(c, pod) {
					progress = true
				} else {
					still = append(still, pod)
				}
			}
			pending[i] = still
			left = left || len(still) > 0
		}
		if !progress {
			if s.lastPass {
				break
			}
			s.lastPass = true
		}
	}
	s.repack()
	for i, c := range s.classes {
		c.pods = pending[i] // from here on: the pods left unscheduled
	}
}

// placePod tries the class's current variant and relaxes preferences, one at a time, on failure.
// A pod whose required affinity has no matching pod yet is not relaxed before the last pass: its
// target may be placed later in this pass.
func (s *solver) placePod(c *class, pod *corev1.Pod) bool {
	for {
		c.waiting = false
		if s.tryPlace(c, c.variants[c.cur], pod) {
			return true
		}
		if c.cur == len(c.variants)-1 || c.waiting && !s.lastPass {
			return false
		}
		c.cur++
	}
}

func (s *solver) tryPlace(c *class, v *variant, pod *corev1.Pod) bool {
	ts, msg := s.targets(c, v)
	if msg != "" {
		for _, p := range s.pools {
			c.poolFail[p.idx] = Reason{NodePool: p.name, Code: ReasonTopology, Message: msg}
		}
		return false
	}
	pins := make([]pin, len(ts))
	for i, t := range ts {
		pins[i] = pin{t.key, t.values[0]}
	}
	alternatives := 1
	if len(ts) > 0 {
		alternatives = len(ts[0].values)
	}
	for alt := range alternatives {
		if len(ts) > 0 {
			pins[0].value = ts[0].values[alt]
		}
		if s.placeWith(c, v, pod, pins) {
			return true
		}
	}
	return false
}

func cursorKey(pins []pin) string {
	if len(pins) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range pins {
		b.WriteString(p.key + "=" + p.value + ";")
	}
	return b.String()
}

// shapeMiss is a node that refused a pod only by the shape rule after the pod's requirements
// narrowed it (see placeWith), with what taking the pod would make of it.
type shapeMiss struct {
	idx    int
	cand   bitset
	merged Requirements
	extra  float64
}

// placeWith places pod on the first node that takes it, else on a new node. A node whose
// instance types the pod's own requirements narrow (arm64 or amd64 pods joining a node that
// allowed both) may fail the shape rule only because the narrowed types cost more; the node that
// would rise least in price still takes the pod when that rise is below what the pod costs apart
// (aloneCost), or when no new node can be opened: merging compatible pods, narrowing the node's
// requirements to their intersection, is then cheaper than keeping them apart.
func (s *solver) placeWith(c *class, v *variant, pod *corev1.Pod, pins []pin) bool {
	ck := cursorKey(pins)
	advancing := true
	var miss *shapeMiss
	need := s.targetLoad(c)
	for i := v.cursors[ck]; i < len(s.nodes); i++ {
		n := s.nodes[i]
		ok, permanent, cand, merged := s.fits(c, v, n, pins)
		if ok && need != nil && !s.holds(n, cand, need) {
			ok, permanent = false, false // room for this pod, not for the pods that must follow it
		}
		if ok {
			s.commit(c, v, n, pod, cand, merged)
			return true
		}
		if cand != nil && merged != nil {
			if extra := s.priceOf(n.pool, cand) - s.priceOf(n.pool, n.types); miss == nil || extra < miss.extra {
				miss = &shapeMiss{idx: i, cand: cand, merged: merged, extra: extra}
			}
		}
		if advancing && permanent {
			v.cursors[ck] = i + 1
		} else {
			advancing = false
		}
	}
	if miss != nil && miss.extra < s.aloneCost(c, v) {
		s.commitMiss(c, v, pod, ck, miss)
		return true
	}
	for _, p := range s.pools {
		if s.newNode(c, v, p, pod, pins, need) {
			return true
		}
	}
	if miss != nil {
		s.commitMiss(c, v, pod, ck, miss)
		return true
	}
	return false
}

// targetLoad is, for a pod of c that pods of other classes in the batch must join (a required
// pod affinity on the hostname selecting c) while none of c's pods is placed yet, the requests of
// the pod plus all those followers: the first target is placed where they all fit, as Karpenter
// sizes the target's node for its followers. nil when nothing follows.
func (s *solver) targetLoad(c *class) []int64 {
	var need []int64
	for _, f := range c.followers {
		if f.g.total > 0 || f.c.invalid != nil {
			continue
		}
		if need == nil {
			need = slices.Clone(c.req)
		}
		for range f.c.pods {
			addVec(need, f.c.req)
		}
	}
	return need
}

// holds reports whether node n can hold need on top of its load: an existing node by its
// allocatable, a new one by some instance type of cand (its narrowed types; n.types when nil),
// which is then narrowed to the types that do.
func (s *solver) holds(n *node, cand bitset, need []int64) bool {
	if n.existing != nil {
		return fitsSum(n.used, need, n.alloc)
	}
	if cand == nil {
		cand = n.types
	}
	big := newBitset(len(n.pool.types))
	cand.each(func(i int) bool {
		if fitsSum(n.used, need, n.pool.types[i].alloc) {
			big.set(i)
		}
		return true
	})
	if big.empty() {
		return false
	}
	copy(cand, big)
	return true
}

func (s *solver) commitMiss(c *class, v *variant, pod *corev1.Pod, ck string, miss *shapeMiss) {
	s.commit(c, v, s.nodes[miss.idx], pod, miss.cand, miss.merged)
	// The scan counted the node as closed to v; it is v's now.
	v.cursors[ck] = min(v.cursors[ck], miss.idx)
}

// priceOf is the price, by p's own offerings, of the cheapest of types (p.types is sorted by it).
func (s *solver) priceOf(p *pool, types bitset) float64 {
	price := 0.0
	types.each(func(i int) bool { price = p.price[i]; return false })
	return price
}

// aloneCost is what one pod of c (as v) would cost apart: on the instance type where its share
// is cheapest (its price by the pool's own offerings, times the largest share of any allocatable
// resource the pod takes), over the pools that may take it; +Inf when none. Apart, a pod shares a
// node of its own kind, so it is charged its share of one, not a whole node.
func (s *solver) aloneCost(c *class, v *variant) float64 {
	best := math.Inf(1)
	for _, p := range s.pools {
		cp := v.perPool[p.idx]
		if cp.reason != nil {
			continue
		}
		cp.types.each(func(i int) bool {
			best = min(best, fractionalCost(p, i, c.req))
			return true
		})
	}
	return best
}

// targetSet collects per-key allowed domains, keeping the first constraint's order.
type targetSet []target

func (ts *targetSet) constrain(key string, allowed []string) bool {
	for i := range *ts {
		if (*ts)[i].key == key {
			(*ts)[i].values = slices.DeleteFunc((*ts)[i].values, func(d string) bool { return !slices.Contains(allowed, d) })
			return len((*ts)[i].values) > 0
		}
	}
	*ts = append(*ts, target{key: key, values: allowed})
	return len(allowed) > 0
}

// targets computes, for every non-hostname topology key the class is constrained on, the domains
// the next pod may go to, best first. A non-empty message means no domain is allowed.
func (s *solver) targets(c *class, v *variant) ([]target, string) {
	if len(v.spreads) == 0 && len(v.affinities) == 0 && len(v.antis) == 0 && len(c.antiMatchedBy) == 0 {
		return nil, ""
	}
	var ts targetSet
	for _, step := range []func(*class, *variant, *targetSet) string{s.spreadTargets, s.affinityTargets, s.antiTargets} {
		if msg := step(c, v, &ts); msg != "" {
			return nil, msg
		}
	}
	return ts, ""
}

// spreadTargets allows the domains where one more pod keeps the skew within maxSkew, least
// loaded first.
func (s *solver) spreadTargets(c *class, v *variant, ts *targetSet) string {
	for _, sp := range v.spreads {
		g := sp.g
		if g.key == corev1.LabelHostname {
			continue
		}
		u := s.universeOf(c, v, g.key)
		// The skew is measured over every domain the constraint counts, reachable by this pod or
		// not: an empty one keeps the minimum at zero.
		domains := s.spreadDomains(g, u)
		minCount := 0
		if len(domains) >= sp.minDomains && len(domains) > 0 {
			minCount = g.counts[domains[0]]
			for _, d := range domains {
				minCount = min(minCount, g.counts[d])
			}
		}
		allowed := sortedDomains(u, g.counts, func(d string) bool { return g.counts[d]+1-minCount <= sp.maxSkew }, false)
		if !ts.constrain(g.key, allowed) {
			return fmt.Sprintf("topology spread on %s: no domain keeps the skew within %d", g.key, sp.maxSkew)
		}
	}
	return ""
}

// affinityTargets allows the domains holding a matching pod, most first; with no matching pod
// anywhere, a pod its own term selects may start anywhere.
func (s *solver) affinityTargets(c *class, v *variant, ts *targetSet) string {
	for _, g := range v.affinities {
		if g.key == corev1.LabelHostname {
			continue
		}
		u := s.universeOf(c, v, g.key)
		var allowed []string
		switch {
		case g.total > 0:
			allowed = sortedDomains(u, g.counts, func(d string) bool { return g.counts[d] > 0 }, true)
		case c.selects(g):
			allowed = slices.Clone(u)
		default:
			c.waiting = true
			return fmt.Sprintf("pod affinity on %s: no pod matches the term yet", g.key)
		}
		if !ts.constrain(g.key, allowed) {
			return fmt.Sprintf("pod affinity on %s: the matching pods are in no domain this pod may use", g.key)
		}
	}
	return ""
}

// antiTargets allows the domains without a pod the class's anti-affinity selects, and without a
// placed pod whose anti-affinity selects the class.
func (s *solver) antiTargets(c *class, v *variant, ts *targetSet) string {
	for _, g := range v.antis {
		if g.key == corev1.LabelHostname {
			continue
		}
		u := s.universeOf(c, v, g.key)
		if !ts.constrain(g.key, sortedDomains(u, g.counts, func(d string) bool { return g.counts[d] == 0 }, false)) {
			return fmt.Sprintf("pod anti-affinity on %s: every domain already holds a matching pod", g.key)
		}
	}
	for _, g := range c.antiMatchedBy {
		if g.key == corev1.LabelHostname || len(g.owners) == 0 {
			continue
		}
		u := s.universeOf(c, v, g.key)
		if !ts.constrain(g.key, sortedDomains(u, g.owners, func(d string) bool { return g.owners[d] == 0 }, false)) {
			return fmt.Sprintf("anti-affinity of placed pods on %s excludes every domain", g.key)
		}
	}
	return ""
}

// spreadDomains returns the domains spread group g counts, as kube-scheduler and Karpenter do:
// those of every NodePool and existing node that its node inclusion policies admit. With
// nodeAffinityPolicy Honor (g.filter set) a NodePool counts with the instance types that satisfy
// both its requirements and the filter, and an existing node when its labels match the filter;
// with Ignore every NodePool and node counts. With nodeTaintsPolicy Honor only NodePools and
// nodes whose taints the pod tolerates count; with Ignore (the default) taints do not matter.
// reachable (the domains the pod itself may use) is always included. Computed once per group:
// neither the NodePools nor the existing nodes change during a Solve.
func (s *solver) spreadDomains(g *topoGroup, reachable []string) []string {
	if g.domains != nil {
		return g.domains
	}
	set := map[string]struct{}{}
	for _, d := range reachable {
		set[d] = struct{}{}
	}
	// Groups that differ only in their selector count the same domains.
	ck := fmt.Sprintf("%s|%v|%v|%v", g.key, g.filter.ToAPI(), g.honorTaints, g.tolerations)
	if s.domainCache == nil {
		s.domainCache = map[string]map[string]struct{}{}
	}
	if cached, ok := s.domainCache[ck]; ok {
		maps.Copy(set, cached)
		g.domains = unionSorted(set)
		return g.domains
	}
	counted := map[string]struct{}{}
	s.countedDomains(g, counted)
	s.domainCache[ck] = counted
	maps.Copy(set, counted)
	g.domains = unionSorted(set)
	return g.domains
}

// countedDomains adds to set the domains of the NodePools and existing nodes that g's node
// inclusion policies admit (see spreadDomains).
func (s *solver) countedDomains(g *topoGroup, set map[string]struct{}) {
	for _, p := range s.pools {
		if p.err != nil {
			continue
		}
		if _, ok := tolerates(g.tolerations, p.taints); g.honorTaints && !ok {
			continue
		}
		reqs := p.reqs
		if len(g.filter) > 0 {
			if p.reqs.Intersects(g.filter) != nil {
				continue
			}
			reqs = p.reqs.Merge(g.filter)
		}
		s.poolDomains(p, reqs, g.key, set)
	}
	for _, n := range s.nodes {
		if n.existing == nil {
			continue
		}
		if _, ok := tolerates(g.tolerations, n.existing.Taints); g.honorTaints && !ok {
			continue
		}
		if v, ok := n.labels[g.key]; ok && (len(g.filter) == 0 || g.filter.Matches(n.labels)) {
			set[v] = struct{}{}
		}
	}
}

// poolDomains adds to set the values of key that p's instance types offer under reqs.
func (s *solver) poolDomains(p *pool, reqs Requirements, key string, set map[string]struct{}) {
	f := s.offerFilter(reqs)
	r := reqs[key]
	for _, t := range p.types {
		if !typeCompatible(reqs, f, p, t) {
			continue
		}
		switch key {
		case corev1.LabelTopologyZone, v1.CapacityTypeLabelKey:
			for _, o := range t.offers {
				if f.zone[o.zone] && f.ct[o.ct] {
					if key == corev1.LabelTopologyZone {
						set[s.zones[o.zone]] = struct{}{}
					} else {
						set[s.cts[o.ct]] = struct{}{}
					}
				}
			}
		default:
			if val, ok := valueOf(t, p, key); ok && (r == nil || r.Has(val)) {
				set[val] = struct{}{}
			}
		}
	}
}

// universeOf returns the domains of key that variant v of class c could land in: values offered
// by the NodePools' compatible instance types and labels of the existing nodes it may use (whose
// labels match and whose taints c tolerates; an untolerated node's domain still counts for a
// spread with nodeTaintsPolicy Ignore, through spreadDomains). v.universe caches it: a variant
// belongs to one class.
func (s *solver) universeOf(c *class, v *variant, key string) []string {
	if u, ok := v.universe[key]; ok {
		return u
	}
	set := map[string]struct{}{}
	for _, p := range s.pools {
		cp := v.perPool[p.idx]
		if cp == nil || cp.reason != nil {
			continue
		}
		r := cp.reqs[key]
		cp.types.each(func(i int) bool {
			t := p.types[i]
			switch key {
			case corev1.LabelTopologyZone, v1.CapacityTypeLabelKey:
				zr, cr := cp.reqs[corev1.LabelTopologyZone], cp.reqs[v1.CapacityTypeLabelKey]
				for _, o := range t.it.Offerings {
					if o.Available && (zr == nil || zr.Has(o.Zone)) && (cr == nil || cr.Has(o.CapacityType)) {
						if key == corev1.LabelTopologyZone {
							set[o.Zone] = struct{}{}
						} else {
							set[o.CapacityType] = struct{}{}
						}
					}
				}
			default:
				if val, ok := valueOf(t, p, key); ok && (r == nil || r.Has(val)) {
					set[val] = struct{}{}
				}
			}
			return true
		})
	}
	for _, n := range s.nodes {
		if val, ok := n.labels[key]; ok && c.mayUseExisting(v, n) {
			set[val] = struct{}{}
		}
	}
	u := unionSorted(set)
	v.universe[key] = u
	return u
}

// mayUseExisting reports whether variant v of c may land on n as far as its labels and taints
// go: n is an existing node, its labels match v's requirements and c tolerates its taints.
func (c *class) mayUseExisting(v *variant, n *node) bool {
	if n.existing == nil || !v.reqs.Matches(n.labels) {
		return false
	}
	_, ok := v.tolerates(c.tolerations, n.existing.Taints)
	return ok
}

// fits reports whether one pod of c (as variant v, in the pinned domains) fits on n, and whether
// a failure is permanent (n will never fit this variant in these domains again). For a new node
// it also returns the narrowed instance types and, if v was not yet merged, the new requirements.
func (s *solver) fits(c *class, v *variant, n *node, pins []pin) (ok, permanent bool, cand bitset, merged Requirements) {
	if !s.nodeAdmits(c, v, n, pins) {
		return false, true, nil, nil
	}
	if ok, permanent := s.hostnameFits(c, v, n); !ok {
		return false, permanent, nil, nil
	}
	for _, hp := range c.ports {
		if slices.ContainsFunc(n.ports, hp.conflicts) {
			return false, true, nil, nil
		}
	}
	if n.existing != nil {
		return true, false, nil, nil
	}
	cand, merged, ok = s.narrow(c, v, n)
	return ok, !ok, cand, merged // on failure, cand is set when only the shape rule refused
}

// nodeAdmits checks what never changes in n's favour: pinned domains, requirements, taints and,
// for existing nodes, resources.
func (s *solver) nodeAdmits(c *class, v *variant, n *node, pins []pin) bool {
	if n.existing == nil {
		if v.perPool[n.pool.idx].reason != nil {
			return false
		}
		for _, p := range pins {
			if d, ok := n.domain(p.key); !ok || d != p.value {
				return false
			}
		}
		return true
	}
	for _, p := range pins {
		if n.labels[p.key] != p.value {
			return false
		}
	}
	if !v.reqs.Matches(n.labels) || !fitsSum(n.used, c.req, n.alloc) {
		return false
	}
	_, ok := v.tolerates(c.tolerations, n.existing.Taints)
	return ok
}

// narrow returns the instance types of new node n that still hold its pods plus one of c, and
// the merged requirements when v is new on n. When only the shape rule refuses the pod, it
// returns them with ok false.
func (s *solver) narrow(c *class, v *variant, n *node) (bitset, Requirements, bool) {
	if !fitsSum(n.used, c.req, n.maxAlloc) {
		return nil, nil, false // no type is large enough in some resource: quick reject
	}
	reqs, merged, checkOfferings, ok := s.mergeOnto(v, n)
	if !ok {
		return nil, nil, false
	}
	var f offerFilter
	if checkOfferings {
		f = s.offerFilter(reqs)
	}
	cp := v.perPool[n.pool.idx]
	cand := newBitset(len(n.pool.types))
	for w := range cand {
		cand[w] = n.types[w] & cp.types[w]
	}
	if !checkOfferings && n.minAlloc != nil && fitsSum(n.used, c.req, n.minAlloc) && (v.together || s.shapeOK(n, c, cand)) {
		// Every remaining type holds the new load: nothing to filter.
		if cand.empty() || !s.minValuesOK(n.pool, reqs, cand) {
			return nil, nil, false
		}
		return cand, merged, true
	}
	any := false
	cand.each(func(i int) bool {
		t := n.pool.types[i]
		// A type in both n.types and cp.types satisfies each side's label requirements, hence
		// their intersection (labels are single-valued); only the zone x capacity-type
		// combination of its offerings can still fail the merged requirements.
		if !fitsSum(n.used, c.req, t.alloc) || checkOfferings && !hasOffering(f, t) {
			cand.unset(i)
			return true
		}
		any = true
		return true
	})
	if !any || !s.minValuesOK(n.pool, reqs, cand) {
		return nil, nil, false
	}
	if !v.together && !s.shapeOK(n, c, cand) {
		return cand, merged, false // refused by the shape rule alone: see placeWith
	}
	return cand, merged, true
}

// mergeOnto returns the requirements new node n would have with a pod of v: its own, or when v
// is new on n the merged ones (also returned as merged), and whether the merge narrows zone or
// capacity type (the types' offerings must then be checked again); ok is false when the
// requirements do not intersect.
func (s *solver) mergeOnto(v *variant, n *node) (reqs, merged Requirements, checkOfferings, ok bool) {
	if len(v.reqs) == 0 || slices.Contains(n.merged, v) {
		return n.reqs, nil, false, true
	}
	if n.reqs.Intersects(v.reqs) != nil {
		return nil, nil, false, false
	}
	merged = n.reqs.Merge(v.reqs)
	_, zone := v.reqs[corev1.LabelTopologyZone]
	_, ct := v.reqs[v1.CapacityTypeLabelKey]
	return merged, merged, zone || ct, true
}

// hostnameFits checks the constraints whose domain is the node itself.
func (s *solver) hostnameFits(c *class, v *variant, n *node) (ok, permanent bool) {
	h, _ := n.domain(corev1.LabelHostname)
	for _, sp := range v.spreads {
		// Another node can always be added as a domain with no matching pod, so the global
		// minimum is zero and a node takes at most maxSkew pods of the group.
		if sp.g.key == corev1.LabelHostname && sp.g.counts[h]+1 > sp.maxSkew {
			return false, true
		}
	}
	for _, g := range v.antis {
		if g.key == corev1.LabelHostname && g.counts[h] > 0 {
			return false, true
		}
	}
	for _, g := range c.antiMatchedBy {
		if g.key == corev1.LabelHostname && g.owners[h] > 0 {
			return false, true
		}
	}
	for _, g := range v.affinities {
		if g.key == corev1.LabelHostname && g.counts[h] == 0 && (g.total > 0 || !c.selects(g)) {
			return false, false
		}
	}
	return true, false
}

func (s *solver) minValuesOK(p *pool, reqs Requirements, cand bitset) bool {
	for _, k := range p.minKeys {
		need := reqs[k].MinValues
		if s.valuesKept(p, reqs, cand, k, need) < need {
			return false
		}
	}
	return true
}

// valuesKept counts, up to limit, the distinct values of key k that the types of cand (types of
// p) keep open under reqs: for zone and capacity type those of their available offerings that
// reqs allow, for other keys their labels.
func (s *solver) valuesKept(p *pool, reqs Requirements, cand bitset, k string, limit int) int {
	seen := map[string]struct{}{}
	cand.each(func(i int) bool {
		t := p.types[i]
		switch k {
		case corev1.LabelTopologyZone, v1.CapacityTypeLabelKey:
			for _, o := range t.it.Offerings {
				if o.Available {
					if k == corev1.LabelTopologyZone && reqs[k].Has(o.Zone) {
						seen[o.Zone] = struct{}{}
					} else if k == v1.CapacityTypeLabelKey && reqs[k].Has(o.CapacityType) {
						seen[o.CapacityType] = struct{}{}
					}
				}
			}
		default:
			if val, ok := valueOf(t, p, k); ok {
				seen[val] = struct{}{}
			}
		}
		return len(seen) < limit
	})
	return len(seen)
}

// markRelaxed records that new node n's minValues were lowered.
func (s *solver) markRelaxed(n *node) {
	if s.relaxed == nil {
		s.relaxed = map[*node]bool{}
	}
	s.relaxed[n] = true
}

// relaxMinValues lowers, in reqs (modified), every minValues of p that cand does not meet to the
// number of values cand keeps, as Karpenter's BestEffort policy relaxes a new NodeClaim. The
// relaxed requirement then binds the pods that join the node.
func (s *solver) relaxMinValues(p *pool, reqs Requirements, cand bitset) {
	for _, k := range p.minKeys {
		r := reqs[k]
		if kept := s.valuesKept(p, reqs, cand, k, r.MinValues); kept < r.MinValues {
			relaxed := *r
			relaxed.MinValues = kept
			reqs[k] = &relaxed
		}
	}
}

func (s *solver) withinLimits(p *pool, t *itInfo) bool {
	if p.limits == nil {
		return true
	}
	for i, l := range p.limits {
		if l >= 0 && p.used[i]+t.capacity[i] > l {
			return false
		}
	}
	return true
}

// newNode opens a NodeClaim in pool p for one pod of c, pinning every topology key in use.
// need, when set, is the load of the pod and its followers (targetLoad): the node's types are
// narrowed to those that hold it when some do.
func (s *solver) newNode(c *class, v *variant, p *pool, pod *corev1.Pod, pins []pin, need []int64) bool {
	cp := v.perPool[p.idx]
	if cp.reason != nil {
		return false
	}
	fail := func(code ReasonCode, msg string) bool {
		c.poolFail[p.idx] = Reason{NodePool: p.name, Code: code, Message: msg}
		return false
	}
	for _, g := range v.affinities {
		if g.key == corev1.LabelHostname && (g.total > 0 || !c.selects(g)) {
			c.waiting = c.waiting || g.total == 0
			return fail(ReasonTopology, "pod affinity on kubernetes.io/hostname: must join a node that has a matching pod")
		}
	}
	reqs := cp.reqs.Clone()
	for _, pn := range pins {
		r, _ := NewRequirement(pn.key, string(v1.NodeSelectorOpIn), []string{pn.value})
		reqs.Add(r)
		if reqs[pn.key].Empty() {
			return fail(ReasonTopology, fmt.Sprintf("domain %s=%s is not allowed", pn.key, pn.value))
		}
	}
	cand, limited := s.candidates(p, reqs, cp.types, len(pins) > 0)
	if need != nil {
		sizeFor(p, cand, need)
	}
	s.pinTopology(p, reqs, cand)
	switch {
	case cand.empty() && limited:
		return fail(ReasonLimits, "launching a node would exceed the NodePool's limits")
	case cand.empty():
		return fail(ReasonNoFit, "no instance type offers the chosen domains")
	}
	relaxed := false
	if !s.minValuesOK(p, reqs, cand) {
		if s.in.MinValuesPolicy != MinValuesBestEffort {
			return fail(ReasonRequirements, "fewer instance types than minValues require")
		}
		s.relaxMinValues(p, reqs, cand)
		relaxed = true
	}
	p.count++
	n := &node{name: p.name + "-" + strconv.Itoa(p.count), pool: p, reqs: reqs, types: cand, merged: []*variant{v}, used: slices.Clone(p.daemon)}
	if relaxed {
		s.markRelaxed(n)
	}
	s.nodes = append(s.nodes, n)
	s.commit(c, v, n, pod, nil, nil)
	return true
}

// sizeFor narrows cand, types of p, to those that hold need plus p's daemonset overhead, when
// some do (otherwise the followers cannot all fit on one node anyway, and cand is kept).
func sizeFor(p *pool, cand bitset, need []int64) {
	big := newBitset(len(p.types))
	cand.each(func(i int) bool {
		if fitsSum(p.daemon, need, p.types[i].alloc) {
			big.set(i)
		}
		return true
	})
	if !big.empty() {
		copy(cand, big)
	}
}

// commit places pod on n and updates the node, the pool's limit usage and the topology counts.
func (s *solver) commit(c *class, v *variant, n *node, pod *corev1.Pod, cand bitset, merged Requirements) {
	if n.existing == nil {
		if cand != nil {
			copy(n.types, cand)
		}
		if merged != nil {
			n.reqs = merged
			n.merged = append(n.merged, v)
		}
		n.maxAlloc = make([]int64, len(s.dims.names))
		n.minAlloc = nil
		n.types.each(func(i int) bool {
			alloc := n.pool.types[i].alloc
			if n.minAlloc == nil {
				n.minAlloc = slices.Clone(alloc)
			}
			for d, q := range alloc {
				n.maxAlloc[d] = max(n.maxAlloc[d], q)
				n.minAlloc[d] = min(n.minAlloc[d], q)
			}
			return true
		})
		if p := n.pool; p.limits != nil {
			s.keepCheapestOptions(n)
			newMax := make([]int64, len(s.dims.names))
			n.types.each(func(i int) bool {
				for d, q := range p.types[i].capacity {
					newMax[d] = max(newMax[d], q)
				}
				return true
			})
			for d := range newMax {
				if n.maxCap != nil {
					p.used[d] -= n.maxCap[d]
				}
				p.used[d] += newMax[d]
			}
			n.maxCap = newMax
		}
	}
	addVec(n.used, c.req)
	n.ports = append(n.ports, c.ports...)
	n.pods = append(n.pods, pod)
	s.order = append(s.order, pod)
	for _, g := range c.matchedBy {
		if !n.eligible(g) {
			continue
		}
		if d, ok := n.domain(g.key); ok {
			g.counts[d]++
			g.total++
		}
	}
	for _, g := range v.ownAntis {
		if d, ok := n.domain(g.key); ok {
			g.owners[d]++
		}
	}
}

// keepCheapestOptions narrows a new node of a pool with limits to the MaxInstanceTypes cheapest
// types it could launch as: its NodeClaim carries no others, so the largest of them is the most it
// can add to the pool, and counting that (not the largest of every type that fits, a 448-vCPU
// machine for a 1-vCPU pod) keeps a large batch from exhausting the limits on paper. The node's
// types only shrink afterwards, so what was counted never grows.
func (s *solver) keepCheapestOptions(n *node) {
	kept := newBitset(len(n.pool.types))
	count := 0
	for _, i := range s.priceOrder(n.pool, s.offerFilter(n.reqs)) {
		if count == MaxInstanceTypes {
			break
		}
		if n.types.has(i) {
			kept.set(i)
			count++
		}
	}
	copy(n.types, kept)
}

func hasOffering(f offerFilter, t *itInfo) bool {
	_, ok := f.cheapest(t)
	return ok
}

// allowsPinned reports whether t still qualifies once key is pinned to value (it qualified
// before): for zone and capacity type an offering must remain, otherwise its label must match.
func allowsPinned(f offerFilter, p *pool, t *itInfo, key, value string) bool {
	if key == corev1.LabelTopologyZone || key == v1.CapacityTypeLabelKey {
		return hasOffering(f, t)
	}
	v, ok := valueOf(t, p, key)
	return ok && v == value
}

// candidates returns the types of from within p's limits (and, when checkReqs, compatible with
// reqs), and whether limits excluded any.
func (s *solver) candidates(p *pool, reqs Requirements, from bitset, checkReqs bool) (bitset, bool) {
	cand := newBitset(len(p.types))
	limited := false
	f := s.offerFilter(reqs)
	from.each(func(i int) bool {
		t := p.types[i]
		if !s.withinLimits(p, t) {
			limited = true
			return true
		}
		if !checkReqs || typeCompatible(reqs, f, p, t) {
			cand.set(i)
		}
		return true
	})
	return cand, limited
}

// pinTopology pins every topology key in use that reqs leaves open to the value of the cheapest
// remaining option, narrowing reqs and cand in place, so that the node's domains are known when
// pods are counted.
func (s *solver) pinTopology(p *pool, reqs Requirements, cand bitset) {
	f := s.offerFilter(reqs)
	for _, k := range s.topoKeys {
		if r, ok := reqs[k]; ok {
			if _, single := r.Single(); single {
				continue
			}
		}
		value, found := "", false
		cand.each(func(i int) bool {
			t := p.types[i]
			switch k {
			case corev1.LabelTopologyZone, v1.CapacityTypeLabelKey:
				if o, ok := f.cheapest(t); ok {
					value, found = o.Zone, true
					if k == v1.CapacityTypeLabelKey {
						value = o.CapacityType
					}
				}
			default:
				value, found = valueOf(t, p, k)
			}
			return !found
		})
		if !found {
			continue
		}
		r, _ := NewRequirement(k, string(v1.NodeSelectorOpIn), []string{value})
		reqs.Add(r)
		f = s.offerFilter(reqs)
		cand.each(func(i int) bool {
			if !allowsPinned(f, p, p.types[i], k, value) {
				cand.unset(i)
			}
			return true
		})
	}
}
