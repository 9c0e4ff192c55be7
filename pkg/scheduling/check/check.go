package check

import (
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// cnode is a concrete node: an existing one, or a NodeClaim with every way it could launch.
type cnode struct {
	name    string
	pool    string
	claim   bool
	options []option // existing nodes: exactly one
	taints  []corev1.Taint
	pods    []*corev1.Pod // bound and placed
	placed  []*corev1.Pod // placed by the plan
}

type option struct {
	labels      map[string]string
	allocatable corev1.ResourceList
	capacity    corev1.ResourceList
	price       float64
}

type checker struct {
	in      *scheduling.Input
	nodes   []*cnode
	nodeOf  map[*corev1.Pod]*cnode
	errs    []error
	matches map[string][]*corev1.Pod
	// seq is each placed pod's position in plan.Order; bound pods are absent (placed before all).
	seq map[*corev1.Pod]int
}

// before reports whether q was on its node when p was placed.
func (c *checker) before(q, p *corev1.Pod) bool {
	sq, placed := c.seq[q]
	return !placed || sq < c.seq[p]
}

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// Plan re-verifies plan against in from scratch and returns every violation (nil when none).
func Plan(in *scheduling.Input, plan *scheduling.Plan) []error {
	c := &checker{in: in, nodeOf: map[*corev1.Pod]*cnode{}, matches: map[string][]*corev1.Pod{}, seq: map[*corev1.Pod]int{}}
	for i, p := range plan.Order {
		c.seq[p] = i
	}
	c.accounting(plan)
	c.buildExisting(plan)
	c.buildClaims(plan)
	for _, n := range c.nodes {
		c.checkNode(n)
	}
	for _, n := range c.nodes {
		for _, p := range n.placed {
			c.checkAffinity(p, n)
			c.checkSpread(p, n)
		}
	}
	c.checkLimits()
	c.checkMinValues(plan)
	return c.errs
}

func podName(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

func (c *checker) accounting(plan *scheduling.Plan) {
	seen := map[*corev1.Pod]int{}
	for _, pl := range plan.Placements {
		seen[pl.Pod]++
	}
	for i := range plan.NodeClaims {
		for _, p := range plan.NodeClaims[i].Pods {
			seen[p]++
		}
	}
	for _, u := range plan.Unschedulable {
		seen[u.Pod]++
		if len(u.Reasons) == 0 {
			c.fail("unschedulable pod %s has no reason", podName(u.Pod))
		}
	}
	for _, p := range c.in.Pods {
		_, ordered := c.seq[p]
		if placed := seen[p] == 1 && !slices.ContainsFunc(plan.Unschedulable, func(u scheduling.Unschedulable) bool { return u.Pod == p }); placed != ordered {
			c.fail("pod %s: placed=%v but in plan.Order=%v", podName(p), placed, ordered)
		}
		if seen[p] != 1 {
			c.fail("pod %s appears %d times in the plan, want once", podName(p), seen[p])
		}
		delete(seen, p)
	}
	for p := range seen {
		c.fail("plan holds pod %s that is not pending", podName(p))
	}
}

func (c *checker) buildExisting(plan *scheduling.Plan) {
	byName := map[string]*cnode{}
	for _, en := range c.in.Nodes {
		n := &cnode{name: en.Name, pool: en.NodePool, taints: en.Taints, pods: append([]*corev1.Pod(nil), en.Pods...),
			options: []option{{labels: en.Labels, allocatable: en.Allocatable, capacity: en.Capacity}}}
		if _, ok := en.Labels[corev1.LabelHostname]; !ok {
			// The kubelet labels a node with its name unless told otherwise.
			n.options[0].labels = maps.Clone(en.Labels)
			if n.options[0].labels == nil {
				n.options[0].labels = map[string]string{}
			}
			n.options[0].labels[corev1.LabelHostname] = en.Name
		}
		byName[en.Name] = n
		c.nodes = append(c.nodes, n)
		for _, p := range en.Pods {
			c.nodeOf[p] = n
		}
	}
	for _, pl := range plan.Placements {
		n, ok := byName[pl.Node]
		if !ok {
			c.fail("pod %s placed on unknown node %s", podName(pl.Pod), pl.Node)
			continue
		}
		n.pods = append(n.pods, pl.Pod)
		n.placed = append(n.placed, pl.Pod)
		c.nodeOf[pl.Pod] = n
	}
}

func (c *checker) buildClaims(plan *scheduling.Plan) {
	pools := map[string]*v1.NodePool{}
	for _, np := range c.in.NodePools {
		pools[np.Name] = np
	}
	types := map[string]*scheduling.InstanceType{}
	for _, it := range c.in.InstanceTypes {
		types[it.Name] = it
	}
	for i := range plan.NodeClaims {
		nc := &plan.NodeClaims[i]
		np, ok := pools[nc.NodePool]
		if !ok {
			c.fail("nodeclaim %s names unknown NodePool %s", nc.Name, nc.NodePool)
			continue
		}
		n := &cnode{name: nc.Name, pool: nc.NodePool, claim: true, taints: agenttaint.Without(np.Spec.Template.Spec.Taints),
			pods: nc.Pods, placed: nc.Pods}
		if len(nc.InstanceTypes) == 0 || len(nc.InstanceTypes) > scheduling.MaxInstanceTypes {
			c.fail("nodeclaim %s has %d instance types", nc.Name, len(nc.InstanceTypes))
		}
		cheapest := math.Inf(1)
		for _, name := range nc.InstanceTypes {
			it, ok := types[name]
			if !ok {
				c.fail("nodeclaim %s lists unknown instance type %s", nc.Name, name)
				continue
			}
			launchable := false
			for _, o := range it.Offerings {
				if !o.Available {
					continue
				}
				// Claim labels first: what the instance and offering say wins, and the
				// requirements then decide whether this option is one the claim allows.
				l := maps.Clone(nc.Labels)
				if l == nil {
					l = map[string]string{}
				}
				maps.Copy(l, it.Labels)
				maps.Copy(l, np.Spec.Template.Labels)
				l[v1.NodePoolLabelKey] = np.Name
				if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
					l[v1.NodeClassLabelKey(ref)] = ref.Name
				}
				l[corev1.LabelInstanceTypeStable] = it.Name
				l[corev1.LabelTopologyZone] = o.Zone
				if o.ZoneID != "" {
					l[awsv1.LabelTopologyZoneID] = o.ZoneID
				}
				l[v1.CapacityTypeLabelKey] = o.CapacityType
				l[corev1.LabelHostname] = nc.Name
				if !nodeClaimReqsMatch(l, nc.Requirements) {
					continue
				}
				if !nodeClaimReqsMatch(l, np.Spec.Template.Spec.Requirements) {
					c.fail("nodeclaim %s option %s/%s breaks NodePool %s requirements", nc.Name, it.Name, o.Zone, np.Name)
				}
				launchable = true
				cheapest = min(cheapest, o.Price)
				n.options = append(n.options, option{labels: l, allocatable: it.Allocatable, capacity: it.Capacity, price: o.Price})
			}
			if !launchable {
				c.fail("nodeclaim %s lists instance type %s with no offering its requirements allow", nc.Name, name)
			}
		}
		if len(n.options) == 0 {
			c.fail("nodeclaim %s cannot launch", nc.Name)
			continue
		}
		if math.Abs(nc.Launch.Price-cheapest) > 1e-9 {
			c.fail("nodeclaim %s is priced %v, its cheapest launch costs %v", nc.Name, nc.Launch.Price, cheapest)
		}
		for _, p := range nc.Pods {
			c.nodeOf[p] = n
		}
		c.nodes = append(c.nodes, n)
	}
}

// daemonOverhead is what the daemonset pods that would run on a node with these labels and
// taints request.
func (c *checker) daemonOverhead(l map[string]string, taints []corev1.Taint) map[corev1.ResourceName]float64 {
	out := map[corev1.ResourceName]float64{}
	for _, ds := range c.in.DaemonSetPods {
		if podSelectsNode(ds, l) && toleratesAll(ds, taints) {
			for n, v := range requests(ds) {
				out[n] += v
			}
		}
	}
	return out
}

func (c *checker) checkNode(n *cnode) {
	for oi, o := range n.options {
		used := map[corev1.ResourceName]float64{}
		if n.claim {
			used = c.daemonOverhead(o.labels, n.taints)
		}
		for _, p := range n.pods {
			for r, v := range requests(p) {
				used[r] += v
			}
		}
		for r, v := range used {
			q, ok := o.allocatable[r]
			avail := 0.0
			if ok {
				avail = q.AsApproximateFloat64()
			}
			if v > avail*(1+1e-9)+1e-9 && v > 0 {
				c.fail("node %s (option %d, %s) needs %v %s, has %v", n.name, oi, o.labels[corev1.LabelInstanceTypeStable], v, r, avail)
			}
		}
		for _, p := range n.placed {
			if !podSelectsNode(p, o.labels) {
				c.fail("pod %s does not select node %s (option %s)", podName(p), n.name, o.labels[corev1.LabelInstanceTypeStable])
			}
		}
	}
	for _, p := range n.placed {
		if !toleratesAll(p, n.taints) {
			c.fail("pod %s does not tolerate the taints of node %s", podName(p), n.name)
		}
	}
	c.checkHostPorts(n)
}

// checkHostPorts fails when two pods of the node use the same host port. They conflict as
// kube-scheduler's NodePorts filter has them: same protocol and port, and the same host IP or
// either one a wildcard (pods bound to different addresses share the port).
func (c *checker) checkHostPorts(n *cnode) {
	type port struct {
		proto corev1.Protocol
		port  int32
		ip    string
	}
	wild := func(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }
	var used []port
	owner := map[port]string{}
	for _, p := range n.pods {
		for _, ct := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			for _, cp := range ct.Ports {
				if cp.HostPort == 0 {
					continue
				}
				proto := cp.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				k := port{proto, cp.HostPort, cp.HostIP}
				for _, u := range used {
					if u.proto == k.proto && u.port == k.port && (u.ip == k.ip || wild(u.ip) || wild(k.ip)) {
						c.fail("pods %s and %s both use host port %d/%s on node %s", owner[u], podName(p), cp.HostPort, proto, n.name)
					}
				}
				used = append(used, k)
				owner[k] = podName(p)
			}
		}
	}
}

// domain returns the node's value for key; for NodeClaims every option must agree.
func (c *checker) domain(n *cnode, key string) (string, bool) {
	v, ok := n.options[0].labels[key]
	for _, o := range n.options[1:] {
		w, ok2 := o.labels[key]
		if ok2 != ok || w != v {
			c.fail("node %s does not pin topology key %s (%q vs %q)", n.name, key, v, w)
			break
		}
	}
	return v, ok
}

func selectorOf(sel *metav1.LabelSelector) labels.Selector {
	if sel == nil {
		return labels.Nothing()
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return labels.Nothing()
	}
	return s
}

func termNamespaces(p *corev1.Pod, term *corev1.PodAffinityTerm) (map[string]bool, bool) {
	if ns := term.NamespaceSelector; ns != nil && len(ns.MatchLabels) == 0 && len(ns.MatchExpressions) == 0 {
		return nil, true
	}
	out := map[string]bool{}
	for _, n := range term.Namespaces {
		out[n] = true
	}
	if len(out) == 0 {
		out[p.Namespace] = true
	}
	return out, false
}

// podsMatching returns every pod on every node that the term of p selects.
func (c *checker) podsMatching(p *corev1.Pod, term *corev1.PodAffinityTerm) []*corev1.Pod {
	key := fmt.Sprintf("%s|%s", p.Namespace, term.String())
	if len(term.MatchLabelKeys) > 0 || len(term.MismatchLabelKeys) > 0 {
		key += "|" + labels.Set(p.Labels).String()
	}
	if m, ok := c.matches[key]; ok {
		return m
	}
	ns, all := termNamespaces(p, term)
	sel := termSelector(term, p.Labels)
	var out []*corev1.Pod
	for _, n := range c.nodes {
		for _, q := range n.pods {
			if (all || ns[q.Namespace]) && sel.Matches(labels.Set(q.Labels)) {
				out = append(out, q)
			}
		}
	}
	c.matches[key] = out
	return out
}

func (c *checker) sameDomain(a, b *cnode, key string) bool {
	if a == b {
		return true
	}
	da, oka := c.domain(a, key)
	db, okb := c.domain(b, key)
	return oka && okb && da == db
}

func (c *checker) checkAffinity(p *corev1.Pod, n *cnode) {
	aff := p.Spec.Affinity
	if aff != nil && aff.PodAffinity != nil {
		for i := range aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			c.checkAffinityTerm(p, n, &aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
	}
	c.checkOthersAntiAffinity(p, n)
	if aff != nil && aff.PodAntiAffinity != nil {
		for i := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			term := &aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i]
			for _, q := range c.podsMatching(p, term) {
				if q != p && c.sameDomain(c.nodeOf[q], n, term.TopologyKey) {
					c.fail("pod %s breaks required anti-affinity on %s with pod %s", podName(p), term.TopologyKey, podName(q))
				}
			}
		}
	}
}

// checkAffinityTerm replays one required affinity term: a pod bound or placed before p must match
// in p's domain, unless none matches anywhere and p matches its own term.
func (c *checker) checkAffinityTerm(p *corev1.Pod, n *cnode, term *corev1.PodAffinityTerm) {
	if _, ok := c.domain(n, term.TopologyKey); !ok {
		c.fail("pod %s on node %s without affinity key %s", podName(p), n.name, term.TopologyKey)
		return
	}
	others, near, self := 0, 0, false
	for _, q := range c.podsMatching(p, term) {
		if q == p {
			self = true
			continue
		}
		if !c.before(q, p) {
			continue
		}
		others++
		if c.sameDomain(c.nodeOf[q], n, term.TopologyKey) {
			near++
		}
	}
	if near == 0 && (others > 0 || !self) {
		c.fail("pod %s breaks required pod affinity on %s", podName(p), term.TopologyKey)
	}
}

// checkOthersAntiAffinity: no pod sharing a domain with p has an anti-affinity term selecting p.
func (c *checker) checkOthersAntiAffinity(p *corev1.Pod, n *cnode) {
	for _, nn := range c.nodes {
		for _, q := range nn.pods {
			if q == p || q.Spec.Affinity == nil || q.Spec.Affinity.PodAntiAffinity == nil {
				continue
			}
			for i := range q.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				term := &q.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i]
				ns, all := termNamespaces(q, term)
				if (all || ns[p.Namespace]) && termSelector(term, q.Labels).Matches(labels.Set(p.Labels)) && c.sameDomain(nn, n, term.TopologyKey) {
					c.fail("pod %s shares %s with pod %s whose anti-affinity excludes it", podName(p), term.TopologyKey, podName(q))
				}
			}
		}
	}
}

// spreadCounts counts, per domain of the nodes eligible for p under tsc's inclusion policies,
// the pods tsc selects that were bound or placed up to and including p.
func (c *checker) spreadCounts(p *corev1.Pod, tsc *corev1.TopologySpreadConstraint, sel labels.Selector) map[string]int {
	counts := map[string]int{}
	honor := tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
	honorTaints := tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
	for _, nn := range c.nodes {
		d, ok := c.domain(nn, tsc.TopologyKey)
		if !ok || honor && !podSelectsNode(p, nn.options[0].labels) || honorTaints && !toleratesAll(p, nn.taints) {
			continue
		}
		if _, seen := counts[d]; !seen {
			counts[d] = 0
		}
		for _, q := range nn.pods {
			if (q == p || c.before(q, p)) && q.Namespace == p.Namespace && sel.Matches(labels.Set(q.Labels)) {
				counts[d]++
			}
		}
	}
	return counts
}

func (c *checker) checkSpread(p *corev1.Pod, n *cnode) {
	constraints, selectors := c.spreads(p)
	for i := range constraints {
		tsc := &constraints[i]
		if tsc.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		mine, ok := c.domain(n, tsc.TopologyKey)
		if !ok {
			c.fail("pod %s on node %s without spread key %s", podName(p), n.name, tsc.TopologyKey)
			continue
		}
		counts := c.spreadCounts(p, tsc, selectors[i])
		// Replayed as kube-scheduler checks it: the skew p's placement made, counting p in
		// its own domain and against the other domains' counts (the minimum excluding p).
		minC := math.MaxInt
		for d, v := range counts {
			if d == mine {
				v--
			}
			minC = min(minC, v)
		}
		minDomains := 1
		if tsc.MinDomains != nil {
			minDomains = int(*tsc.MinDomains)
		}
		if len(counts) < minDomains {
			minC = 0
		}
		if counts[mine]-minC > int(tsc.MaxSkew) {
			c.fail("pod %s: spread on %s has skew %d > %d in domain %s", podName(p), tsc.TopologyKey, counts[mine]-minC, tsc.MaxSkew, mine)
		}
	}
}

func (c *checker) checkLimits() {
	for _, np := range c.in.NodePools {
		if len(np.Spec.Limits) == 0 {
			continue
		}
		used := map[corev1.ResourceName]float64{}
		for _, en := range c.in.Nodes {
			if en.NodePool == np.Name {
				for r, q := range en.Capacity {
					used[r] += q.AsApproximateFloat64()
				}
			}
		}
		for _, n := range c.nodes {
			if !n.claim || n.pool != np.Name {
				continue
			}
			worst := map[corev1.ResourceName]float64{}
			for _, o := range n.options {
				for r, q := range o.capacity {
					worst[r] = max(worst[r], q.AsApproximateFloat64())
				}
			}
			for r, v := range worst {
				used[r] += v
			}
		}
		for r, q := range np.Spec.Limits {
			if used[r] > q.AsApproximateFloat64()*(1+1e-9) {
				c.fail("NodePool %s uses %v %s, over its limit %v", np.Name, used[r], r, q.AsApproximateFloat64())
			}
		}
	}
}
