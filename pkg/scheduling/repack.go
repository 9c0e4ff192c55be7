package scheduling

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// Repacking of free pods.
//
// First-fit puts pods of one shape together: a NodeClaim opened for a class fills with that
// class and the next ones in size order, so pods of the same cpu:memory ratio share nodes and
// the node ends up on the family that suits that ratio, or memory-bound on a compute family.
// The cheap plans mix complementary pods (cpu-heavy with memory-heavy) on the family that is
// cheapest for the mix. After placement, the NodeClaims of a NodePool that hold only free pods
// (no topology, affinity, host ports or node requirements of their own, and selected by no
// topology term, so that where they run changes nothing else) are packed again, node by node:
// each node is the candidate (target type, pair of shapes) whose greedy balanced fill has the
// highest value per dollar, where a pod's value is what it would cost alone on its best type
// (or, in a second plan, its requests at the resource prices of the best fractional mix of
// types). The cheaper plan replaces the first-fit nodes only when it is cheaper than they are.
// Pools with limits are left alone (the first-fit nodes were admitted against them).

// repackPairs bounds the shapes paired per node (the ones with the most value left), and
// repackFills the candidate nodes filled for real per node (the best by estimate).
// Past repackMaxShapes distinct shapes in a pool the repacking is skipped: its work per node
// grows with the shapes, and pods that diverse leave first-fit little to gain from pairing.
const (
	repackPairs     = 8
	repackFills     = 6
	repackMaxShapes = 256
)

// repackShape is a set of free pods with identical requests and instance-type options.
type repackShape struct {
	req   []int64
	cp    *classPool
	pods  []*corev1.Pod
	value float64 // the cheapest fractional cost of one pod on any of its types
	best  int     // the type giving that cost
}

// repackNode is one planned node: pods per shape and the type it was filled against.
type repackNode struct {
	counts []int
	load   []int64
	typ    int
	price  float64
}

// freeClass reports whether c's pods can move between new nodes without changing anything else.
func freeClass(c *class) bool {
	if c.invalid != nil || len(c.variants) != 1 || len(c.ports) > 0 || len(c.matchedBy) > 0 || len(c.antiMatchedBy) > 0 {
		return false
	}
	v := c.variants[0]
	return len(v.reqs) == 0 && len(v.spreads) == 0 && len(v.affinities) == 0 && len(v.antis) == 0 && len(v.ownAntis) == 0
}

func (s *solver) repack() {
	free := map[*corev1.Pod]*class{}
	for _, c := range s.classes {
		if freeClass(c) {
			for _, pod := range c.pods {
				free[pod] = c
			}
		}
	}
	if len(free) == 0 {
		return
	}
	for _, p := range s.pools {
		if p.limits == nil && p.err == nil {
			s.repackPool(p, free)
		}
	}
}

// repacker holds what packing one NodePool's free pods needs: the shapes, and per instance type
// its price under the pool's requirements (-1: no offering) and its allocatable less daemonset
// overhead.
type repacker struct {
	s        *solver
	p        *pool
	shapes   []*repackShape
	base     Requirements
	order    []int
	price    []float64
	usable   [][]int64
	cpu, mem int
	envelope []int
	// scratch buffers of estimate, fill and cheapestHolding
	lines   []line
	load    []int64
	zero    []int64
	allowed bitset
}

// line is the constraint p x + q y <= c of estimate's linear programme.
type line struct{ p, q, c float64 }

// freeNodes returns p's new nodes that hold only free pods.
func (s *solver) freeNodes(p *pool, free map[*corev1.Pod]*class) []*node {
	var out []*node
	for _, n := range s.nodes {
		if n.existing != nil || n.pool != p || len(n.pods) == 0 {
			continue
		}
		if !slices.ContainsFunc(n.pods, func(pod *corev1.Pod) bool { _, ok := free[pod]; return !ok }) {
			out = append(out, n)
		}
	}
	return out
}

func (s *solver) repackPool(p *pool, free map[*corev1.Pod]*class) {
	old := s.freeNodes(p, free)
	if len(old) < 2 {
		return
	}
	r := s.newRepacker(p, old, free)
	if r == nil {
		return
	}
	// Three strategies, the cheapest plan wins: each pod valued at its standalone cost, or at
	// the resource prices of the best fractional mix of instance types for the whole load, and
	// the first again with every node built around the biggest pods left.
	standalone := make([]float64, len(r.shapes))
	for k, sh := range r.shapes {
		standalone[k] = sh.value
	}
	var plan []repackNode
	planCost := math.Inf(1)
	type strategy struct {
		values   []float64
		bigFirst bool
	}
	for _, st := range []strategy{{standalone, false}, {r.dualValues(), false}, {standalone, true}} {
		if st.values == nil {
			continue
		}
		cand, ok := r.plan(st.values, st.bigFirst)
		if !ok {
			continue
		}
		cost := 0.0
		for _, rn := range cand {
			cost += rn.price
		}
		if cost < planCost*(1-1e-9) || cost <= planCost*(1+1e-9) && len(cand) < len(plan) {
			plan, planCost = cand, cost
		}
	}
	if plan == nil {
		return
	}
	built, newCost := r.build(plan, old)
	oldCost := 0.0
	for _, n := range old {
		oldCost += s.nodePrice(n)
	}
	if built == nil || newCost >= oldCost*(1-1e-9) {
		return
	}
	drop := map[*node]bool{}
	for _, n := range old {
		drop[n] = true
	}
	s.nodes = slices.DeleteFunc(s.nodes, func(n *node) bool { return drop[n] })
	s.nodes = append(s.nodes, built...)
}

// newRepacker groups the pods of old into shapes and prices the instance types; nil when some
// shape has no type to go to or there are too many shapes.
func (s *solver) newRepacker(p *pool, old []*node, free map[*corev1.Pod]*class) *repacker {
	r := &repacker{s: s, p: p, cpu: s.dims.index[corev1.ResourceCPU], mem: s.dims.index[corev1.ResourceMemory]}
	byCP := map[*classPool]int{}
	for _, n := range old {
		for _, pod := range n.pods {
			c := free[pod]
			cp := c.variants[0].perPool[p.idx]
			i, ok := byCP[cp]
			if !ok {
				i = len(r.shapes)
				byCP[cp] = i
				r.shapes = append(r.shapes, &repackShape{req: c.req, cp: cp})
			}
			r.shapes[i].pods = append(r.shapes[i].pods, pod)
		}
	}
	if len(r.shapes) > repackMaxShapes {
		return nil
	}
	// Free pods have no requirements of their own: every shape's are the pool's.
	r.base = r.shapes[0].cp.reqs
	f := s.offerFilter(r.base)
	r.order = s.priceOrder(p, f)
	r.price = make([]float64, len(p.types))
	for i := range r.price {
		r.price[i] = -1
	}
	for _, i := range r.order {
		o, _ := f.cheapest(p.types[i])
		r.price[i] = o.Price + p.nodeCost
	}
	r.usable = make([][]int64, len(p.types))
	for i, t := range p.types {
		r.usable[i] = make([]int64, len(t.alloc))
		for d, q := range t.alloc {
			r.usable[i][d] = q - p.daemon[d]
		}
	}
	for _, sh := range r.shapes {
		sh.value, sh.best = math.Inf(1), -1
		sh.cp.types.each(func(i int) bool {
			if r.price[i] < 0 {
				return true
			}
			if v := r.price[i] * maxShare(sh.req, r.usable[i]); v < sh.value {
				sh.value, sh.best = v, i
			}
			return true
		})
		if sh.best < 0 {
			return nil
		}
	}
	r.envelope = r.envelopeTypes()
	return r
}

// build turns the plan into nodes, pinning topology keys as newNode does, and prices them. The
// nodes take the names of the nodes they replace first. It returns nil when some node cannot be
// built (no type left once pinned, or minValues not met under MinValuesStrict).
func (r *repacker) build(plan []repackNode, old []*node) ([]*node, float64) {
	s, p := r.s, r.p
	built := make([]*node, 0, len(plan))
	cost := 0.0
	next := make([]int, len(r.shapes))
	zero := make([]int64, len(s.dims.names))
	for i, rn := range plan {
		cand := newBitset(len(p.types))
		for w := range cand {
			cand[w] = ^uint64(0)
		}
		var pods []*corev1.Pod
		for k, cnt := range rn.counts {
			if cnt == 0 {
				continue
			}
			for w := range cand {
				cand[w] &= r.shapes[k].cp.types[w]
			}
			pods = append(pods, r.shapes[k].pods[next[k]:next[k]+cnt]...)
			next[k] += cnt
		}
		cand.each(func(t int) bool {
			if !fitsSum(zero, rn.load, p.types[t].alloc) {
				cand.unset(t)
			}
			return true
		})
		reqs := r.base.Clone()
		s.pinTopology(p, reqs, cand)
		if cand.empty() {
			return nil, 0
		}
		relaxed := false
		if !s.minValuesOK(p, reqs, cand) {
			if s.in.MinValuesPolicy != MinValuesBestEffort {
				return nil, 0
			}
			s.relaxMinValues(p, reqs, cand)
			relaxed = true
		}
		var name string
		if i < len(old) {
			name = old[i].name
		} else {
			p.count++
			name = p.name + "-" + strconv.Itoa(p.count)
		}
		n := &node{name: name, pool: p, reqs: reqs, types: cand, used: rn.load, pods: pods}
		if relaxed {
			s.markRelaxed(n)
		}
		built = append(built, n)
		cost += s.nodePrice(n)
	}
	return built, cost
}

// nodePrice is what new node n costs per hour: the price of the offering it would launch plus
// its pool's per-node cost.
func (s *solver) nodePrice(n *node) float64 {
	f := s.offerFilter(n.reqs)
	for _, i := range s.priceOrder(n.pool, f) {
		if n.types.has(i) {
			o, _ := f.cheapest(n.pool.types[i])
			return o.Price + n.pool.nodeCost
		}
	}
	return 0
}

// maxShare is the largest fraction of any resource of alloc that req takes (+Inf if it asks
// for a resource alloc lacks).
func maxShare(req, alloc []int64) float64 {
	share := 0.0
	for d, q := range req {
		if q <= 0 {
			continue
		}
		if alloc[d] <= 0 {
			return math.Inf(1)
		}
		share = max(share, float64(q)/float64(alloc[d]))
	}
	return share
}

// plan packs the shapes node by node, each node the best of bestNode, valuing pods by values.
func (r *repacker) plan(values []float64, bigFirst bool) ([]repackNode, bool) {
	left := make([]int, len(r.shapes))
	total := 0
	for k, sh := range r.shapes {
		left[k] = len(sh.pods)
		total += left[k]
	}
	var plan []repackNode
	for total > 0 {
		best, ok := r.bestNode(values, left, bigFirst)
		if !ok {
			return nil, false
		}
		for k, c := range best.counts {
			left[k] -= c
			total -= c
		}
		plan = append(plan, best)
	}
	return plan, true
}

// bestNode tries every target type with every pair of shapes (see pairs): it fills the target
// with the pair, keeping cpu and memory balanced, tops it up with any shape, prices the node as
// the cheapest type that holds the result, and returns the node with the most value per dollar.
func (r *repacker) bestNode(values []float64, left []int, bigFirst bool) (repackNode, bool) {
	live := make([]int, 0, len(r.shapes))
	for k := range r.shapes {
		if left[k] > 0 {
			live = append(live, k)
		}
	}
	slices.SortStableFunc(live, func(a, b int) int {
		return cmp.Compare(values[b]*float64(left[b]), values[a]*float64(left[a]))
	})
	pairs, targets := r.pairs(values, live, bigFirst)
	// Rank every (target, pair) by the value per dollar of its best fractional fill, then fill
	// the most promising few for real.
	type candidate struct {
		t, a, b int
		est     float64
	}
	var cands []candidate
	for _, t := range targets {
		for _, ab := range pairs {
			a, b := ab[0], ab[1]
			if r.shapes[a].cp.types.has(t) && r.shapes[b].cp.types.has(t) {
				cands = append(cands, candidate{t, a, b, r.estimate(values, left, t, a, b)})
			}
		}
	}
	slices.SortStableFunc(cands, func(x, y candidate) int { return cmp.Compare(y.est, x.est) })
	counts := make([]int, len(r.shapes))
	var best repackNode
	bestEff := -1.0
	for _, c := range cands[:min(len(cands), repackFills)] {
		load := r.fill(live, left, counts, c.t, c.a, c.b)
		if load == nil {
			continue
		}
		ft, fp := r.cheapestHolding(counts, load)
		if ft < 0 || fp <= 0 {
			continue
		}
		value := 0.0
		for k, n := range counts {
			value += float64(n) * values[k]
		}
		if eff := value / fp; eff > bestEff {
			bestEff = eff
			best = repackNode{counts: slices.Clone(counts), load: slices.Clone(load), typ: ft, price: fp}
		}
	}
	return best, bestEff >= 0
}

// pairs returns the pairs of shapes to try (among the live shapes, sorted by value left, the
// first repackPairs), and the target types: the envelope plus the best type of each paired
// shape. With bigFirst every pair holds the live shape whose pods are worth most (as first-fit
// decreasing starts with the largest items), so that big pods are not left to nodes of their
// own at the end.
func (r *repacker) pairs(values []float64, live []int, bigFirst bool) ([][2]int, []int) {
	paired := live[:min(len(live), repackPairs)]
	var pairs [][2]int
	if bigFirst {
		biggest := live[0]
		for _, k := range live {
			if values[k] > values[biggest] {
				biggest = k
			}
		}
		if !slices.Contains(paired, biggest) {
			paired = append(slices.Clone(paired[:len(paired)-1]), biggest)
		}
		for _, b := range paired {
			pairs = append(pairs, [2]int{biggest, b})
		}
	} else {
		for i, a := range paired {
			for _, b := range paired[i:] {
				pairs = append(pairs, [2]int{a, b})
			}
		}
	}
	targets := slices.Clone(r.envelope)
	for _, k := range paired {
		if !slices.Contains(targets, r.shapes[k].best) {
			targets = append(targets, r.shapes[k].best)
		}
	}
	return pairs, targets
}

// estimate is the value per dollar of the best fractional fill of type t with shapes a and b
// (a linear programme in two variables, solved at the vertices of its feasible region).
func (r *repacker) estimate(values []float64, left []int, t, a, b int) float64 {
	alloc := r.usable[t]
	ra, rb := r.shapes[a].req, r.shapes[b].req
	lines := append(r.lines[:0], line{-1, 0, 0}, line{0, -1, 0}, line{1, 0, float64(left[a])}, line{0, 1, float64(left[b])})
	if a == b {
		lines[3].c = 0
	}
	for d := range alloc {
		if ra[d] > 0 || rb[d] > 0 {
			lines = append(lines, line{float64(ra[d]), float64(rb[d]), float64(alloc[d])})
		}
	}
	r.lines = lines
	feasible := func(x, y float64) bool {
		for _, l := range lines {
			if l.p*x+l.q*y > l.c*(1+1e-9)+1e-9 {
				return false
			}
		}
		return true
	}
	best := 0.0
	for i, l1 := range lines {
		for _, l2 := range lines[i+1:] {
			det := l1.p*l2.q - l1.q*l2.p
			if det == 0 {
				continue
			}
			x := (l1.c*l2.q - l1.q*l2.c) / det
			y := (l1.p*l2.c - l1.c*l2.p) / det
			if feasible(x, y) {
				best = max(best, values[a]*x+values[b]*y)
			}
		}
	}
	return best / r.price[t]
}

// fill fills a node of type t with shapes a and b, each step adding the one that keeps the cpu
// and memory shares of the load closest, then tops it up with the live shapes in order. It
// returns the load (daemonset overhead included; a scratch buffer, valid until the next fill),
// or nil when nothing fits; counts receives the pods per shape.
func (r *repacker) fill(live, left, counts []int, t, a, b int) []int64 {
	alloc, shapes := r.usable[t], r.shapes
	clear(counts)
	if r.load == nil {
		r.load = make([]int64, len(alloc))
	}
	load := r.load
	clear(load)
	fits := func(k int) bool { return counts[k] < left[k] && fitsSum(load, shapes[k].req, alloc) }
	share := func(d int, k int) float64 {
		if alloc[d] <= 0 {
			return 0
		}
		return float64(load[d]+shapes[k].req[d]) / float64(alloc[d])
	}
	imbalance := func(k int) float64 { return math.Abs(share(r.cpu, k) - share(r.mem, k)) }
	add := func(k int) {
		addVec(load, shapes[k].req)
		counts[k]++
	}
	placed := 0
pair:
	for ; ; placed++ {
		fa, fb := fits(a), a != b && fits(b)
		switch {
		case fa && fb && imbalance(b) < imbalance(a):
			add(b)
		case fa:
			add(a)
		case fb:
			add(b)
		default:
			break pair
		}
	}
	for _, k := range live {
		for shapes[k].cp.types.has(t) && fits(k) {
			add(k)
			placed++
		}
	}
	if placed == 0 {
		return nil
	}
	addVec(load, r.p.daemon)
	return load
}

// cheapestHolding returns the cheapest type (and its price) that every shape with pods on the
// node allows and that holds load.
func (r *repacker) cheapestHolding(counts []int, load []int64) (int, float64) {
	if r.allowed == nil {
		r.allowed, r.zero = newBitset(len(r.p.types)), make([]int64, len(load))
	}
	allowed, zero := r.allowed, r.zero
	for w := range allowed {
		allowed[w] = ^uint64(0)
	}
	for k, c := range counts {
		if c > 0 {
			for w := range allowed {
				allowed[w] &= r.shapes[k].cp.types[w]
			}
		}
	}
	for _, i := range r.order {
		if allowed.has(i) && fitsSum(zero, load, r.p.types[i].alloc) {
			return i, r.price[i]
		}
	}
	return -1, 0
}

// dualValues prices cpu and memory as the best fractional mix of instance types would for the
// shapes' whole load: the prices (pc, pm) maximising pc x cpu + pm x memory with no type worth
// more than it costs. A pod's value is then what its requests cost at those prices. It returns
// nil when the load asks for neither resource.
func (r *repacker) dualValues() []float64 {
	shapes, usable, price, cpu, mem := r.shapes, r.usable, r.price, r.cpu, r.mem
	var tc, tm float64
	for _, sh := range shapes {
		tc += float64(sh.req[cpu]) * float64(len(sh.pods))
		tm += float64(sh.req[mem]) * float64(len(sh.pods))
	}
	if tc == 0 && tm == 0 {
		return nil
	}
	var types []int
	for _, sh := range shapes {
		sh.cp.types.each(func(i int) bool {
			if price[i] > 0 && usable[i][cpu] > 0 && usable[i][mem] > 0 {
				types = append(types, i)
			}
			return true
		})
	}
	slices.Sort(types)
	types = slices.Compact(types)
	if len(types) == 0 {
		return nil
	}
	pcOf := func(pm float64) float64 {
		pc := math.Inf(1)
		for _, i := range types {
			pc = min(pc, (price[i]-pm*float64(usable[i][mem]))/float64(usable[i][cpu]))
		}
		return pc
	}
	hi := math.Inf(1)
	for _, i := range types {
		hi = min(hi, price[i]/float64(usable[i][mem]))
	}
	lo := 0.0
	obj := func(pm float64) float64 { return pcOf(pm)*tc + pm*tm }
	for range 100 {
		m1, m2 := lo+(hi-lo)/3, hi-(hi-lo)/3
		if obj(m1) < obj(m2) {
			lo = m1
		} else {
			hi = m2
		}
	}
	pm := (lo + hi) / 2
	pc := pcOf(pm)
	values := make([]float64, len(shapes))
	for k, sh := range shapes {
		values[k] = pc*float64(sh.req[cpu]) + pm*float64(sh.req[mem])
	}
	return values
}

// envelope returns the types that are the cheapest for some weighting of cpu against memory
// (the lower envelope of price over the two resources), among those the shapes may use.
func (r *repacker) envelopeTypes() []int {
	shapes, usable, price, cpu, mem := r.shapes, r.usable, r.price, r.cpu, r.mem
	var out []int
	const steps = 32
	for step := range steps + 1 {
		w := float64(step) / steps // weight of cpu share against memory share
		best, bestCost := -1, math.Inf(1)
		for i := range r.p.types {
			if price[i] <= 0 || usable[i][cpu] <= 0 || usable[i][mem] <= 0 {
				continue
			}
			allowed := false
			for _, sh := range shapes {
				if sh.cp.types.has(i) {
					allowed = true
					break
				}
			}
			if !allowed {
				continue
			}
			// cost of one unit of a load asking w of cpu and 1-w of memory, per GiB-equivalent
			c := price[i] * max(w/float64(usable[i][cpu])*1e3, (1-w)/float64(usable[i][mem])*float64(1<<30))
			if c < bestCost {
				best, bestCost = i, c
			}
		}
		if best >= 0 && !slices.Contains(out, best) {
			out = append(out, best)
		}
	}
	return out
}
