package scheduling

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// class is a set of pending pods identical in everything the solver reads.
type class struct {
	key         string
	pods        []*corev1.Pod
	namespace   string
	labels      map[string]string
	req         []int64
	tolerations []corev1.Toleration
	ports       []hostPort
	variants    []*variant
	cur         int
	invalid     error
	// matchedBy are the groups whose selector selects this class: placing a pod counts in them.
	matchedBy []*topoGroup
	// antiMatchedBy are the anti-affinity groups that select this class: their owners' domains
	// are closed to it.
	antiMatchedBy []*topoGroup
	// waiting is set when the last attempt failed only because no pod matches a required
	// affinity term yet.
	waiting bool
	// poolFail is the last reason each NodePool refused a pod of this class.
	poolFail map[int]Reason
	// followers are the other classes whose pod affinity on the hostname selects this class.
	followers []follower
}

// follower is a class whose hostname pod affinity (group g) selects another class.
type follower struct {
	g *topoGroup
	c *class
}

// variant is one set of constraints a class is tried with: a node-affinity alternative plus the
// preferences not yet relaxed.
type variant struct {
	reqs       Requirements
	spreads    []spreadRef
	affinities []*topoGroup
	antis      []*topoGroup
	// ownAntis are the required anti-affinity terms: only they bind pods placed later (owners).
	ownAntis []*topoGroup
	perPool  []*classPool
	cursors  map[string]int
	universe map[string][]string
	// together is set when the variant has a pod affinity on the hostname: its pods must join the
	// node of the pods they name, so the shape rule (which turns a pod away to a node of its own)
	// does not apply to them; the node grows to hold them.
	together bool
	// preferNoSchedule is set on the last variant of a term only: its pods tolerate
	// PreferNoSchedule taints. Every other variant keeps off them as off NoSchedule ones, so that
	// such a taint steers pods elsewhere while anything else fits (Karpenter's relaxation order).
	preferNoSchedule bool
}

// tolerates reports whether pods of this variant with tols tolerate taints, and if not the first
// taint they do not: PreferNoSchedule taints count unless the variant tolerates them.
func (v *variant) tolerates(tols []corev1.Toleration, taints []corev1.Taint) (corev1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && v.preferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tols, func(tol corev1.Toleration) bool { return toleratesTaint(&tol, t) }) {
			return *t, false
		}
	}
	return corev1.Taint{}, true
}

// classPool is what one NodePool can offer one variant, computed once.
type classPool struct {
	reason *Reason
	reqs   Requirements
	// types are the compatible instance types that hold one pod (plus daemonset overhead).
	types bitset
}

type hostPort struct {
	protocol corev1.Protocol
	ip       string
	port     int32
}

func (h hostPort) conflicts(o hostPort) bool {
	if h.protocol != o.protocol || h.port != o.port {
		return false
	}
	wild := func(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }
	return h.ip == o.ip || wild(h.ip) || wild(o.ip)
}

func podHostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	add := func(cs []corev1.Container) {
		for i := range cs {
			for _, p := range cs[i].Ports {
				if p.HostPort > 0 {
					proto := p.Protocol
					if proto == "" {
						proto = corev1.ProtocolTCP
					}
					out = append(out, hostPort{protocol: proto, ip: p.HostIP, port: p.HostPort})
				}
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	return out
}

// preference is one relaxable constraint, applied to a variant.
type preference func(v *variant) bool

// buildClass parses the constraints of the class's first pod into variants.
func (s *solver) buildClass(c *class) {
	pod := c.pods[0]
	c.namespace, c.labels, c.tolerations, c.ports = pod.Namespace, pod.Labels, pod.Spec.Tolerations, podHostPorts(pod)
	c.poolFail = map[int]Reason{}
	base := byZone(FromLabels(pod.Spec.NodeSelector), s.zoneOfID)
	aff := pod.Spec.Affinity
	terms, nodePrefs, err := nodeAffinity(aff, s.zoneOfID)
	if err != nil {
		c.invalid = err
		return
	}
	if s.in.PreferencePolicy == PreferenceIgnore {
		nodePrefs = nil
	}
	var required []func(v *variant) error
	var prefs, podPrefs []preference
	s.spreadConstraints(pod, &required, &prefs)
	if aff != nil {
		s.podAffinityConstraints(c, aff, &required, &podPrefs)
	}
	if c.invalid != nil {
		return
	}
	// Preferences are dropped from the front, one more per variant: ScheduleAnyway spreads
	// first, then preferred pod (anti-)affinity and then preferred node affinity, each lowest
	// weight first. Spread preferences also run first, so their node filter is the required
	// requirements only.
	prefs = append(append(prefs, podPrefs...), nodePrefs...)
	// With PreferNoSchedule taints about, one more variant per term, with every preference
	// dropped, tolerates them: they are relaxed last.
	last := len(prefs)
	if s.preferNoSchedule {
		last++
	}
	for _, term := range terms {
		for drop := 0; drop <= last; drop++ {
			v := &variant{reqs: base.Merge(term), cursors: map[string]int{}, universe: map[string][]string{}, preferNoSchedule: drop > len(prefs)}
			if base.Intersects(term) != nil {
				continue
			}
			for _, r := range required {
				if err := r(v); err != nil {
					c.invalid = err
					return
				}
			}
			for _, p := range prefs[min(drop, len(prefs)):] {
				p(v)
			}
			v.together = slices.ContainsFunc(v.affinities, func(g *topoGroup) bool { return g.key == corev1.LabelHostname })
			c.variants = append(c.variants, v)
		}
	}
	if len(c.variants) == 0 {
		c.invalid = fmt.Errorf("nodeSelector conflicts with every required node affinity term")
	}
}

// nodeAffinity returns the required node affinity terms (alternatives; one empty term when there
// are none) and the preferred terms as preferences, lowest weight first.
func nodeAffinity(aff *corev1.Affinity, zoneOfID map[string]string) ([]Requirements, []preference, error) {
	terms := []Requirements{{}}
	if aff == nil || aff.NodeAffinity == nil {
		return terms, nil, nil
	}
	if rn := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; rn != nil && len(rn.NodeSelectorTerms) > 0 {
		terms = nil
		for _, t := range rn.NodeSelectorTerms {
			rs, err := FromNodeSelectorTerm(t)
			if err != nil {
				return nil, nil, fmt.Errorf("parsing required node affinity, %w", err)
			}
			terms = append(terms, byZone(rs, zoneOfID))
		}
	}
	var prefs []preference
	pref := slices.Clone(aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	slices.SortStableFunc(pref, func(a, b corev1.PreferredSchedulingTerm) int { return cmp.Compare(a.Weight, b.Weight) })
	for _, p := range pref {
		rs, err := FromNodeSelectorTerm(p.Preference)
		if err != nil {
			continue
		}
		rs = byZone(rs, zoneOfID)
		prefs = append(prefs, func(v *variant) bool {
			if v.reqs.Intersects(rs) != nil {
				return false
			}
			v.reqs = v.reqs.Merge(rs)
			return true
		})
	}
	return terms, prefs, nil
}

// spreadConstraints adds the pod's DoNotSchedule spreads as required and ScheduleAnyway ones as
// preferences.
func (s *solver) spreadConstraints(pod *corev1.Pod, required *[]func(v *variant) error, prefs *[]preference) {
	constraints := SpreadConstraints(pod, s.in.DefaultSpread)
	for i := range constraints {
		tsc := &constraints[i]
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway && s.in.PreferencePolicy == PreferenceIgnore {
			continue
		}
		add := func(v *variant) error {
			// Honouring node affinity (the default) counts only pods on nodes this pod could
			// use: the filter is the required part of v's requirements, before preferences.
			var filter Requirements
			if tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor {
				filter = v.reqs
			}
			var tolerations []corev1.Toleration
			if tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
				tolerations = append([]corev1.Toleration{}, pod.Spec.Tolerations...)
			}
			g, err := s.groups.getFiltered(tsc.TopologyKey, []string{pod.Namespace}, false, tsc.LabelSelector, filter, tolerations)
			if err != nil {
				return err
			}
			ref := spreadRef{g: g, maxSkew: int(tsc.MaxSkew), minDomains: 1}
			if tsc.MinDomains != nil {
				ref.minDomains = int(*tsc.MinDomains)
			}
			v.spreads = append(v.spreads, ref)
			return nil
		}
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway {
			*prefs = append(*prefs, func(v *variant) bool { return add(v) == nil })
			continue
		}
		*required = append(*required, add)
	}
}

func (s *solver) podAffinityConstraints(c *class, aff *corev1.Affinity, required *[]func(v *variant) error, prefs *[]preference) {
	ns, podLabels := c.pods[0].Namespace, c.pods[0].Labels
	addTerms := func(terms []corev1.PodAffinityTerm, anti bool) {
		for i := range terms {
			g, err := s.groups.affinityGroup(ns, podLabels, &terms[i])
			if err != nil {
				c.invalid = err
				return
			}
			if anti {
				g.anti = true
				*required = append(*required, func(v *variant) error {
					v.antis, v.ownAntis = append(v.antis, g), append(v.ownAntis, g)
					return nil
				})
			} else {
				*required = append(*required, func(v *variant) error { v.affinities = append(v.affinities, g); return nil })
			}
		}
	}
	addPrefs := func(terms []corev1.WeightedPodAffinityTerm, anti bool) {
		if s.in.PreferencePolicy == PreferenceIgnore {
			return
		}
		terms = slices.Clone(terms)
		slices.SortStableFunc(terms, func(a, b corev1.WeightedPodAffinityTerm) int { return cmp.Compare(a.Weight, b.Weight) })
		for i := range terms {
			g, err := s.groups.affinityGroup(ns, podLabels, &terms[i].PodAffinityTerm)
			if err != nil {
				continue
			}
			if anti {
				*prefs = append(*prefs, func(v *variant) bool { v.antis = append(v.antis, g); return true })
			} else {
				*prefs = append(*prefs, func(v *variant) bool { v.affinities = append(v.affinities, g); return true })
			}
		}
	}
	if pa := aff.PodAffinity; pa != nil {
		addTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, false)
		addPrefs(pa.PreferredDuringSchedulingIgnoredDuringExecution, false)
	}
	if pa := aff.PodAntiAffinity; pa != nil {
		addTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, true)
		addPrefs(pa.PreferredDuringSchedulingIgnoredDuringExecution, true)
	}
}

// tolerates reports whether tols tolerate taints, leaving PreferNoSchedule taints aside (as the
// DaemonSet controller and topology spreading's nodeTaintsPolicy do), and if not the first taint
// they do not. Placing a class's pods uses variant.tolerates, which counts them.
func tolerates(tols []corev1.Toleration, taints []corev1.Taint) (corev1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tols, func(tol corev1.Toleration) bool { return toleratesTaint(&tol, t) }) {
			return *t, false
		}
	}
	return corev1.Taint{}, true
}

func (c *class) selects(g *topoGroup) bool { return slices.Contains(c.matchedBy, g) }

// toleratesTaint: an empty key with Exists tolerates every taint; an empty effect every effect;
// Exists ignores the value, Equal (the default) compares it.
func toleratesTaint(tol *corev1.Toleration, t *corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key == "" {
		return tol.Operator == corev1.TolerationOpExists
	}
	if tol.Key != t.Key {
		return false
	}
	return tol.Operator == corev1.TolerationOpExists || tol.Value == t.Value
}
