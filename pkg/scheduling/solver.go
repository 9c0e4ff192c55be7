package scheduling

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// itInfo is an instance type as the solver indexes it.
type itInfo struct {
	it       *InstanceType
	offers   []offer
	labels   map[string]string
	alloc    []int64
	capacity []int64
}

// pool is a NodePool as the solver tracks it.
type pool struct {
	idx     int
	name    string
	np      *v1.NodePool
	weight  int32
	reqs    Requirements
	defined map[string]bool
	labels  map[string]string
	taints  []corev1.Taint
	daemon  []int64
	limits  []int64 // -1: unlimited; nil: no limits at all
	used    []int64
	minKeys []string
	err     error
	count   int
	// types are the instance types the pool's requirements allow (labels, and an available
	// offering in an allowed zone and capacity type), cheapest first by price; bitsets of the
	// pool's classes and nodes index this list. Ordering and judging by the pool's own offerings
	// keeps a pool's plan independent of prices it may not buy (spot, for an on-demand pool).
	types []*itInfo
	// price is, per position of types, the price of the cheapest offering the pool allows.
	price []float64
	// nodeCost is what every new node of the pool costs per hour beyond its instance
	// (Input.NodeCosts). The repacking of free pods, which chooses how many nodes to make,
	// minimises instance price plus nodeCost; the shape rule compares instance prices only,
	// because a pod it turns away usually joins another open node, which costs no nodeCost more.
	nodeCost float64
	// priceOrders caches, per offering filter, the positions of types by cheapest allowed price.
	priceOrders map[string][]int
}

// node is an existing node or a new NodeClaim.
type node struct {
	name     string
	existing *Node
	pool     *pool
	labels   map[string]string // existing nodes
	reqs     Requirements      // new nodes
	types    bitset            // new nodes: the types that hold its pods
	merged   []*variant
	used     []int64
	alloc    []int64 // existing nodes
	ports    []hostPort
	pods     []*corev1.Pod
	maxCap   []int64 // new nodes in limited pools: the largest capacity over types
	maxAlloc []int64 // new nodes: per resource, the largest allocatable over types
	minAlloc []int64 // new nodes: per resource, the smallest allocatable over types
}

// eligible reports whether pods on n count in g: n satisfies g's node filter. A new node
// satisfies it when every key the filter reads is pinned to an allowed value (or, for keys the
// node cannot have, the filter allows the label to be absent).
func (n *node) eligible(g *topoGroup) bool {
	if g.honorTaints {
		taints := n.pool.taintsOrNil()
		if n.existing != nil {
			taints = n.existing.Taints
		}
		if _, ok := tolerates(g.tolerations, taints); !ok {
			return false
		}
	}
	if len(g.filter) == 0 {
		return true
	}
	if n.existing != nil {
		return g.filter.Matches(n.labels)
	}
	for k, r := range g.filter {
		if k == corev1.LabelInstanceTypeStable {
			continue // the solver's bitset and the narrowed requirement carry it
		}
		nr, ok := n.reqs[k]
		if !ok {
			if !r.AllowsAbsent() {
				return false
			}
			continue
		}
		v, single := nr.Single()
		if !single || !r.Has(v) {
			return false
		}
	}
	return true
}

func (n *node) domain(key string) (string, bool) {
	if n.existing != nil {
		if key == corev1.LabelHostname {
			if v, ok := n.labels[key]; ok {
				return v, true
			}
			return n.name, true // the kubelet's default
		}
		v, ok := n.labels[key]
		return v, ok
	}
	if key == corev1.LabelHostname {
		return n.name, true
	}
	if r, ok := n.reqs[key]; ok {
		return r.Single()
	}
	return "", false
}

type solver struct {
	in       *Input
	dims     *dims
	types    []*itInfo
	pools    []*pool // by weight, then name
	nodes    []*node
	groups   *groups
	topoKeys []string // non-hostname keys used by any group
	classes  []*class
	order    []*corev1.Pod
	zoneIdx  map[string]int
	ctIdx    map[string]int
	zones    []string
	cts      []string
	// poolCache shares classPools between classes that differ only in labels (which the
	// NodePool compatibility does not read).
	poolCache    map[string]*classPool
	cursorsByKey map[string]map[string]int
	lastPass     bool
	// domainCache holds the domains spread groups count, per key and node inclusion policies
	// (see spreadDomains).
	domainCache map[string]map[string]struct{}
	// relaxed are the new nodes whose minValues were lowered (MinValuesBestEffort); kept apart
	// from node so that the node stays as small as it is without the policy.
	relaxed map[*node]bool
	// zoneOfID maps the offerings' zone IDs to their zones (byZone).
	zoneOfID map[string]string
	// preferNoSchedule is set when a NodePool or an existing node has a PreferNoSchedule taint:
	// classes then get a last variant that tolerates them (buildClass).
	preferNoSchedule bool
}

// Solve simulates scheduling in.Pods onto in.Nodes and new NodeClaims of in.NodePools. It is
// deterministic for a given Input, does not modify it, and never returns a plan that breaks a
// constraint it models (see docs/design/scheduling.md for what is and is not modelled). An error
// means the input itself is unusable (such as an instance type without allocatable).
func Solve(in *Input) (*Plan, error) {
	s := &solver{in: in, dims: newDims(), groups: &groups{byID: map[string]*topoGroup{}}, zoneOfID: zoneIDsOf(in.InstanceTypes)}
	if err := s.setup(); err != nil {
		return nil, err
	}
	s.run()
	return s.plan(), nil
}

// registerDims registers every resource name of the input and returns each pod's requests.
// Every resource name is registered before any vector is made, so that all vectors have one
// length: a pod's requests and an instance type's allocatable are compared position by
// position (a GPU type's nvidia.com/gpu must not outrun the pods' vectors).
func (s *solver) registerDims() []corev1.ResourceList {
	reqCache := make([]corev1.ResourceList, len(s.in.Pods))
	for i, pod := range s.in.Pods {
		reqCache[i] = PodRequests(pod)
		s.dims.addAll(reqCache[i])
	}
	for _, it := range s.in.InstanceTypes {
		s.dims.addAll(it.Allocatable)
		s.dims.addAll(it.Capacity)
	}
	for _, en := range s.in.Nodes {
		s.dims.addAll(en.Allocatable)
		s.dims.addAll(en.Capacity)
	}
	for _, ds := range s.in.DaemonSetPods {
		s.dims.addAll(PodRequests(ds))
	}
	for _, np := range s.in.NodePools {
		s.dims.addAll(corev1.ResourceList(np.Spec.Limits))
	}
	return reqCache
}

func (s *solver) setup() error {
	reqCache := s.registerDims()
	// Classes next: they register topology groups.
	byKey := map[string]*class{}
	for i, pod := range s.in.Pods {
		key := classKey(pod, reqCache[i], s.ownerMatters(pod))
		c, ok := byKey[key]
		if !ok {
			c = &class{key: key}
			byKey[key] = c
			s.classes = append(s.classes, c)
		}
		c.pods = append(c.pods, pod)
	}
	s.preferNoSchedule = s.anyPreferNoSchedule()
	for _, c := range s.classes {
		c.req = s.dims.vec(PodRequests(c.pods[0]))
		s.buildClass(c)
	}
	s.sortClasses()
	for _, it := range s.in.InstanceTypes {
		if it.Allocatable == nil {
			return fmt.Errorf("indexing instance type %s, it has no allocatable", it.Name)
		}
	}
	s.indexTypes()
	s.buildPools()
	if err := s.buildNodes(); err != nil {
		return err
	}
	keys := map[string]struct{}{}
	for _, g := range s.groups.all {
		if g.key != corev1.LabelHostname {
			keys[g.key] = struct{}{}
		}
		// Keys a spread filter reads are pinned on new nodes too, so that whether a node
		// counts for the filter is known when pods are placed.
		for k := range g.filter {
			if k != corev1.LabelHostname && k != corev1.LabelInstanceTypeStable {
				keys[k] = struct{}{}
			}
		}
	}
	s.topoKeys = slices.Sorted(maps.Keys(keys))
	s.matchClasses()
	s.linkFollowers()
	s.followersAfterTargets()
	return nil
}

// followersAfterTargets moves every class that follows another (a hostname pod affinity
// selecting it) to just after that class, keeping the size order otherwise: the followers then
// join the target's node, sized for them (targetLoad), before pods of other classes fill it. A
// class following several is placed after the first of them; the passes retry it if it must
// wait for the others.
func (s *solver) followersAfterTargets() {
	isFollower := map[*class]bool{}
	for _, c := range s.classes {
		for _, f := range c.followers {
			isFollower[f.c] = true
		}
	}
	if len(isFollower) == 0 {
		return
	}
	added := map[*class]bool{}
	out := make([]*class, 0, len(s.classes))
	var add func(c *class)
	add = func(c *class) {
		if added[c] {
			return
		}
		added[c] = true
		out = append(out, c)
		for _, f := range c.followers {
			add(f.c)
		}
	}
	for _, c := range s.classes {
		if !isFollower[c] {
			add(c)
		}
	}
	for _, c := range s.classes {
		add(c) // classes that only follow each other
	}
	s.classes = out
}

// linkFollowers records, on every class that a hostname pod affinity of another class selects,
// that class and the group: its first pod is placed where those followers fit too (targetLoad).
func (s *solver) linkFollowers() {
	for _, f := range s.classes {
		if f.invalid != nil {
			continue
		}
		for _, g := range f.variants[0].affinities {
			if g.key != corev1.LabelHostname {
				continue
			}
			for _, c := range s.classes {
				if c != f && c.selects(g) {
					c.followers = append(c.followers, follower{g: g, c: f})
				}
			}
		}
	}
}

// matchClasses records the groups that select each class and computes what each NodePool
// offers each variant.
func (s *solver) matchClasses() {
	for _, c := range s.classes {
		for _, g := range s.groups.all {
			if g.selects(c.namespace, c.labels) {
				c.matchedBy = append(c.matchedBy, g)
				if g.anti {
					c.antiMatchedBy = append(c.antiMatchedBy, g)
				}
			}
		}
		if c.invalid != nil {
			continue
		}
		for _, v := range c.variants {
			v.perPool = make([]*classPool, len(s.pools))
			for _, p := range s.pools {
				v.perPool[p.idx] = s.cachedClassPool(c, v, p)
			}
			v.cursors = s.sharedCursors(c, v)
		}
	}
}

func (s *solver) sortClasses() {
	cpu, mem := s.dims.index[corev1.ResourceCPU], s.dims.index[corev1.ResourceMemory]
	slices.SortStableFunc(s.classes, func(a, b *class) int {
		if c := cmp.Compare(b.req[cpu], a.req[cpu]); c != 0 {
			return c
		}
		if c := cmp.Compare(b.req[mem], a.req[mem]); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
}

func (s *solver) intern(v string, idx map[string]int, list *[]string) int {
	if i, ok := idx[v]; ok {
		return i
	}
	idx[v] = len(*list)
	*list = append(*list, v)
	return idx[v]
}

// indexTypes indexes the instance types that have an available offering (the others can
// never launch), in input order: each pool orders them by its own prices (poolTypes).
func (s *solver) indexTypes() {
	s.zoneIdx, s.ctIdx = map[string]int{}, map[string]int{}
	for _, it := range s.in.InstanceTypes {
		s.dims.addAll(it.Allocatable)
	}
	for _, it := range s.in.InstanceTypes {
		info := &itInfo{it: it, labels: maps.Clone(it.Labels), alloc: s.dims.vec(it.Allocatable), capacity: s.dims.vec(it.Capacity)}
		if d, ok := s.dims.index[ResourceNodes]; ok {
			info.capacity[d] = 1 // every node counts once against a NodePool's `nodes` limit
		}
		if info.labels == nil {
			info.labels = map[string]string{}
		}
		info.labels[corev1.LabelInstanceTypeStable] = it.Name
		for i, o := range it.Offerings {
			if o.Available {
				info.offers = append(info.offers, offer{zone: s.intern(o.Zone, s.zoneIdx, &s.zones), ct: s.intern(o.CapacityType, s.ctIdx, &s.cts), price: o.Price, idx: i})
			}
		}
		if len(info.offers) > 0 {
			s.types = append(s.types, info)
		}
	}
}

func (s *solver) buildPools() {
	nps := slices.Clone(s.in.NodePools)
	slices.SortStableFunc(nps, func(a, b *v1.NodePool) int {
		wa, wb := int32(0), int32(0)
		if a.Spec.Weight != nil {
			wa = *a.Spec.Weight
		}
		if b.Spec.Weight != nil {
			wb = *b.Spec.Weight
		}
		if wa != wb {
			return cmp.Compare(wb, wa)
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i, np := range nps {
		s.pools = append(s.pools, s.newPool(i, np))
	}
}

func (s *solver) newPool(i int, np *v1.NodePool) *pool {
	// Agent taints (Cilium's, the EBS CSI driver's...) leave with their agent's start, like
	// startupTaints: pods need not tolerate them.
	p := &pool{idx: i, name: np.Name, np: np, defined: map[string]bool{}, taints: agenttaint.Without(np.Spec.Template.Spec.Taints)}
	if np.Spec.Weight != nil {
		p.weight = *np.Spec.Weight
	}
	p.labels = maps.Clone(np.Spec.Template.Labels)
	if p.labels == nil {
		p.labels = map[string]string{}
	}
	p.labels[v1.NodePoolLabelKey] = np.Name
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		p.labels[v1.NodeClassLabelKey(ref)] = ref.Name
	}
	p.reqs, p.err = FromNodePoolRequirements(np.Spec.Template.Spec.Requirements)
	if p.err == nil {
		p.reqs = byZone(p.reqs, s.zoneOfID)
		for _, r := range FromLabels(p.labels) {
			p.reqs.Add(r)
		}
		for k, r := range p.reqs {
			if r.MinValues > 0 {
				p.minKeys = append(p.minKeys, k)
			}
			if _, ok := p.labels[k]; ok || !r.AllowsAbsent() && !s.typeKey(k) {
				p.defined[k] = true
			}
		}
		slices.Sort(p.minKeys)
	}
	p.nodeCost = s.in.NodeCosts[np.Name]
	if p.err == nil {
		s.poolTypes(p)
	}
	p.daemon = make([]int64, len(s.dims.names))
	for _, ds := range s.in.DaemonSetPods {
		if _, ok := tolerates(ds.Spec.Tolerations, p.taints); ok && (p.err != nil || daemonFits(ds, p.reqs)) {
			addVec(p.daemon, s.dims.vec(PodRequests(ds)))
		}
	}
	if len(np.Spec.Limits) > 0 {
		p.limits = make([]int64, len(s.dims.names))
		lim := s.dims.vec(corev1.ResourceList(np.Spec.Limits))
		for d, name := range s.dims.names {
			p.limits[d] = -1
			if _, ok := np.Spec.Limits[name]; ok {
				p.limits[d] = lim[d]
			}
		}
		p.used = make([]int64, len(s.dims.names))
	}
	return p
}

// poolTypes lists the instance types p allows, by the price of the cheapest offering p allows
// (then name), with that price.
func (s *solver) poolTypes(p *pool) {
	f := s.offerFilter(p.reqs)
	type priced struct {
		t     *itInfo
		price float64
	}
	var list []priced
	for _, t := range s.types {
		if !typeCompatible(p.reqs, f, p, t) {
			continue
		}
		o, _ := f.cheapest(t)
		list = append(list, priced{t, o.Price})
	}
	slices.SortStableFunc(list, func(a, b priced) int {
		if c := cmp.Compare(a.price, b.price); c != 0 {
			return c
		}
		return strings.Compare(a.t.it.Name, b.t.it.Name)
	})
	p.types, p.price = make([]*itInfo, len(list)), make([]float64, len(list))
	for i, l := range list {
		p.types[i], p.price[i] = l.t, l.price
	}
}

func (p *pool) taintsOrNil() []corev1.Taint {
	if p == nil {
		return nil
	}
	return p.taints
}

// typeKey reports whether some instance type defines label k (zone and capacity type included).
func (s *solver) typeKey(k string) bool {
	if k == corev1.LabelTopologyZone || k == v1.CapacityTypeLabelKey {
		return true
	}
	for _, t := range s.types {
		if _, ok := t.labels[k]; ok {
			return true
		}
	}
	return false
}

func daemonFits(ds *corev1.Pod, poolReqs Requirements) bool {
	pod := FromLabels(ds.Spec.NodeSelector)
	if poolReqs.Intersects(pod) != nil {
		return false
	}
	aff := ds.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, t := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		rs, err := FromNodeSelectorTerm(t)
		if err == nil && poolReqs.Intersects(rs) == nil {
			return true
		}
	}
	return false
}

func (s *solver) buildNodes() error {
	for _, en := range s.in.Nodes {
		s.dims.addAll(en.Allocatable)
	}
	for _, en := range s.in.Nodes {
		n := &node{name: en.Name, existing: en, labels: en.Labels, alloc: s.dims.vec(en.Allocatable), used: make([]int64, len(s.dims.names))}
		if n.labels == nil {
			n.labels = map[string]string{}
		}
		for _, p := range s.pools {
			if p.name == en.NodePool && p.limits != nil {
				addVec(p.used, s.dims.vec(en.Capacity))
				if d, ok := s.dims.index[ResourceNodes]; ok {
					p.used[d]++
				}
			}
		}
		for _, pod := range en.Pods {
			addVec(n.used, s.dims.vec(PodRequests(pod)))
			n.ports = append(n.ports, podHostPorts(pod)...)
			if err := s.countExisting(n, pod); err != nil {
				return err
			}
		}
		s.nodes = append(s.nodes, n)
	}
	return nil
}

// countExisting records a bound pod in the topology groups: as a member of the groups that
// select it, and as an owner of its required anti-affinity terms.
func (s *solver) countExisting(n *node, pod *corev1.Pod) error {
	if aff := pod.Spec.Affinity; aff != nil && aff.PodAntiAffinity != nil {
		for i := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			g, err := s.groups.affinityGroup(pod.Namespace, pod.Labels, &aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i])
			if err != nil {
				return fmt.Errorf("reading anti-affinity of bound pod %s/%s, %w", pod.Namespace, pod.Name, err)
			}
			g.anti = true
			if d, ok := n.domain(g.key); ok {
				g.owners[d]++
			}
		}
	}
	for _, g := range s.groups.all {
		if g.selects(pod.Namespace, pod.Labels) && n.eligible(g) {
			if d, ok := n.domain(g.key); ok {
				g.counts[d]++
				g.total++
			}
		}
	}
	return nil
}

// sharedCursors returns the node cursors of variant v of c, shared with every other class whose
// pods are interchangeable with c's for placement (same requests, requirements, tolerations,
// host ports, topology groups and PreferNoSchedule tolerance; labels may differ as long as the same anti-affinity groups
// select them). A node a pod of one such class can never use again, none of them can.
func (s *solver) sharedCursors(c *class, v *variant) map[string]int {
	var b strings.Builder
	fmt.Fprintf(&b, "%v|%v|%v|%t|", c.req, v.reqs.ToAPI(), c.ports, v.preferNoSchedule)
	for i := range c.tolerations {
		b.WriteString(c.tolerations[i].String())
	}
	for _, sp := range v.spreads {
		fmt.Fprintf(&b, "|s%p/%d/%d", sp.g, sp.maxSkew, sp.minDomains)
	}
	for _, list := range [][]*topoGroup{v.affinities, v.antis, c.antiMatchedBy} {
		b.WriteByte('|')
		for _, g := range list {
			fmt.Fprintf(&b, "%p,", g)
		}
	}
	key := b.String()
	if s.cursorsByKey == nil {
		s.cursorsByKey = map[string]map[string]int{}
	}
	cur, ok := s.cursorsByKey[key]
	if !ok {
		cur = map[string]int{}
		s.cursorsByKey[key] = cur
	}
	return cur
}

func (s *solver) cachedClassPool(c *class, v *variant, p *pool) *classPool {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%v|%v|%t|", p.idx, c.req, v.reqs.ToAPI(), v.preferNoSchedule)
	for i := range c.tolerations {
		b.WriteString(c.tolerations[i].String())
	}
	key := b.String()
	if s.poolCache == nil {
		s.poolCache = map[string]*classPool{}
	}
	if cp, ok := s.poolCache[key]; ok {
		return cp
	}
	cp := s.classPool(c, v, p)
	s.poolCache[key] = cp
	return cp
}

// classPool computes once what pool p offers variant v of class c. The result must not be
// modified: classes with the same requests, requirements and tolerations share it.
func (s *solver) classPool(c *class, v *variant, p *pool) *classPool {
	cp := &classPool{}
	if p.err != nil {
		cp.reason = &Reason{NodePool: p.name, Code: ReasonInvalid, Message: p.err.Error()}
		return cp
	}
	if t, ok := v.tolerates(c.tolerations, p.taints); !ok {
		cp.reason = &Reason{NodePool: p.name, Code: ReasonTaints, Message: fmt.Sprintf("does not tolerate taint %s=%s:%s", t.Key, t.Value, t.Effect)}
		return cp
	}
	if err := p.reqs.Intersects(v.reqs); err != nil {
		cp.reason = &Reason{NodePool: p.name, Code: ReasonRequirements, Message: err.Error()}
		return cp
	}
	cp.reqs = p.reqs.Merge(v.reqs)
	for _, r := range cp.reqs {
		if r.Empty() {
			cp.reason = &Reason{NodePool: p.name, Code: ReasonRequirements, Message: fmt.Sprintf("no value satisfies %s", r)}
			return cp
		}
	}
	cp.types = newBitset(len(p.types))
	compatible := 0
	need := slices.Clone(p.daemon)
	addVec(need, c.req)
	f := s.offerFilter(cp.reqs)
	for i, t := range p.types {
		if !typeCompatible(cp.reqs, f, p, t) {
			continue
		}
		compatible++
		if fitsSum(need, make([]int64, len(need)), t.alloc) {
			cp.types.set(i)
		}
	}
	switch {
	case compatible == 0:
		cp.reason = &Reason{NodePool: p.name, Code: ReasonRequirements, Message: s.explainNoType(cp.reqs, p)}
	case cp.types.empty():
		cp.reason = &Reason{NodePool: p.name, Code: ReasonNoFit, Message: fmt.Sprintf("no compatible instance type has room for requests %s plus daemonset overhead %s", s.dims.format(c.req), s.dims.format(p.daemon))}
	}
	return cp
}

// shapeSlack is how much dearer than the best instance-type shape (per unit of the node's load)
// the cheapest type holding a NodeClaim may become when a pod is added. Without it a node keeps
// growing until only the largest types hold it, and those are often of a family whose resource
// ratio does not suit the load (a memory-heavy family for cpu-bound pods), which costs far more
// than the pods need; with it the pod opens or joins another node instead.
const shapeSlack = 0.05

// fractionalCost is what load would cost on the shape of p's type i if it could be bought by
// the fraction: its price in p x the largest share of any allocatable resource the load takes.
func fractionalCost(p *pool, i int, load []int64) float64 {
	share := 0.0
	for d, l := range load {
		if l > 0 {
			share = max(share, float64(l)/float64(p.types[i].alloc[d]))
		}
	}
	return p.price[i] * share
}

// shapeOK reports whether adding one pod of c to n keeps its cheapest instance type's shape: the
// load's fractional cost on the cheapest type of cand (the types that would hold it) may exceed
// its fractional cost on the node's current cheapest type by at most shapeSlack. Growing within
// a family passes (larger sizes are no dearer per unit); moving to a family whose resource ratio
// suits the load worse does not.
func (s *solver) shapeOK(n *node, c *class, cand bitset) bool {
	before, after := -1, -1
	n.types.each(func(i int) bool { before = i; return false })
	cand.each(func(i int) bool { after = i; return false })
	if before < 0 || before == after {
		return true
	}
	load := slices.Clone(n.used)
	addVec(load, c.req)
	return fractionalCost(n.pool, after, load) <= fractionalCost(n.pool, before, load)*(1+shapeSlack)
}

// explainNoType names the first requirement (by key) that no instance type or offering meets on
// its own, or says that only their combination fails.
func (s *solver) explainNoType(reqs Requirements, p *pool) string {
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		one := Requirements{k: reqs[k]}
		f := s.offerFilter(one)
		if !slices.ContainsFunc(s.types, func(t *itInfo) bool { return typeCompatible(one, f, p, t) }) {
			return fmt.Sprintf("no instance type or offering meets %s", reqs[k])
		}
	}
	return "no instance type or offering meets the pod's and the NodePool's requirements together"
}

// typeCompatible reports whether instance type t, in pool p, can satisfy reqs (whose offering
// filter is f): every label t defines is allowed, every key neither t nor p defines may be absent,
// and some available offering has an allowed zone and capacity type.
func typeCompatible(reqs Requirements, f offerFilter, p *pool, t *itInfo) bool {
	for k, r := range reqs {
		if k == corev1.LabelTopologyZone || k == v1.CapacityTypeLabelKey {
			continue
		}
		if val, ok := t.labels[k]; ok {
			if !r.Has(val) {
				return false
			}
			continue
		}
		if p.defined[k] {
			continue
		}
		if !r.AllowsAbsent() {
			return false
		}
	}
	_, ok := f.cheapest(t)
	return ok
}

// offer is an available offering with its zone and capacity type interned.
type offer struct {
	zone, ct int
	price    float64
	idx      int
}

// offerFilter is a requirement set's zone and capacity-type parts evaluated once over every
// zone and capacity type that some instance type offers.
type offerFilter struct {
	zone, ct []bool
}

func (s *solver) offerFilter(reqs Requirements) offerFilter {
	f := offerFilter{zone: make([]bool, len(s.zones)), ct: make([]bool, len(s.cts))}
	zr, cr := reqs[corev1.LabelTopologyZone], reqs[v1.CapacityTypeLabelKey]
	for i, z := range s.zones {
		f.zone[i] = zr == nil || zr.Has(z)
	}
	for i, c := range s.cts {
		f.ct[i] = cr == nil || cr.Has(c)
	}
	return f
}

// cheapest returns t's cheapest available offering the filter allows (first on ties).
func (f offerFilter) cheapest(t *itInfo) (Offering, bool) {
	best := -1
	for i, o := range t.offers {
		if f.zone[o.zone] && f.ct[o.ct] && (best < 0 || o.price < t.offers[best].price) {
			best = i
		}
	}
	if best < 0 {
		return Offering{}, false
	}
	return t.it.Offerings[t.offers[best].idx], true
}

// valueOf returns the value t (with pool p's labels) gives key k, for keys other than zone and
// capacity type.
func valueOf(t *itInfo, p *pool, k string) (string, bool) {
	if v, ok := t.labels[k]; ok {
		return v, true
	}
	v, ok := p.labels[k]
	return v, ok
}

// anyPreferNoSchedule reports whether a NodePool's template or an existing node has a
// PreferNoSchedule taint.
func (s *solver) anyPreferNoSchedule() bool {
	pns := func(t corev1.Taint) bool { return t.Effect == corev1.TaintEffectPreferNoSchedule }
	for _, np := range s.in.NodePools {
		if slices.ContainsFunc(np.Spec.Template.Spec.Taints, pns) {
			return true
		}
	}
	for _, n := range s.in.Nodes {
		if slices.ContainsFunc(n.Taints, pns) {
			return true
		}
	}
	return false
}
