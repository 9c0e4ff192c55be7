package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// topoGroup counts, per domain of one topology key, the pods that match one selector in a set of
// namespaces. Spread constraints, affinity terms and anti-affinity terms with the same key,
// selector and namespaces share one group. owners counts the pods whose required anti-affinity
// term is this group, so that a newcomer the group selects keeps out of their domains.
type topoGroup struct {
	id         string
	key        string
	allNS      bool
	namespaces map[string]struct{}
	selector   labels.Selector
	counts     map[string]int
	owners     map[string]int
	total      int
	anti       bool
	// filter, for spread groups honouring node affinity, is the required node affinity of the
	// pods that own the constraint: only pods on nodes that satisfy it are counted.
	filter Requirements
	// honorTaints, for spread groups with nodeTaintsPolicy Honor, counts only pods on nodes whose
	// taints tolerations tolerates.
	honorTaints bool
	tolerations []corev1.Toleration
	// domains, for spread groups, are the domains the group counts (see spreadDomains), once
	// computed.
	domains []string
}

func (g *topoGroup) selects(namespace string, podLabels map[string]string) bool {
	if !g.allNS {
		if _, ok := g.namespaces[namespace]; !ok {
			return false
		}
	}
	return g.selector.Matches(labels.Set(podLabels))
}

// spreadRef is one topology spread constraint of a class.
type spreadRef struct {
	g          *topoGroup
	maxSkew    int
	minDomains int
}

// groups deduplicates topology groups for one Solve.
type groups struct {
	byID map[string]*topoGroup
	all  []*topoGroup
}

func (gs *groups) get(key string, namespaces []string, allNS bool, sel *metav1.LabelSelector) (*topoGroup, error) {
	return gs.getFiltered(key, namespaces, allNS, sel, nil, nil)
}

// getFiltered is get for spread groups: filter is the node affinity the counted nodes must
// satisfy (nil: any), tolerations (non-nil: nodeTaintsPolicy Honor) what their taints must allow.
func (gs *groups) getFiltered(key string, namespaces []string, allNS bool, sel *metav1.LabelSelector, filter Requirements, tolerations []corev1.Toleration) (*topoGroup, error) {
	key = topologyKey(key)
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("parsing label selector, %w", err)
	}
	if sel == nil {
		selector = labels.Nothing()
	}
	ns := slices.Clone(namespaces)
	slices.Sort(ns)
	id := fmt.Sprintf("%s|%v|%v|%s", key, allNS, ns, selector.String())
	if sel == nil {
		id += "|nothing"
	}
	if len(filter) > 0 {
		id += fmt.Sprintf("|%v", filter.ToAPI())
	}
	if tolerations != nil {
		id += "|honor-taints"
		for i := range tolerations {
			id += tolerations[i].String()
		}
	}
	if g, ok := gs.byID[id]; ok {
		return g, nil
	}
	g := &topoGroup{id: id, key: key, allNS: allNS, namespaces: map[string]struct{}{}, selector: selector,
		counts: map[string]int{}, owners: map[string]int{}, filter: filter, honorTaints: tolerations != nil, tolerations: tolerations}
	for _, n := range ns {
		g.namespaces[n] = struct{}{}
	}
	gs.byID[id] = g
	gs.all = append(gs.all, g)
	return g, nil
}

// affinityGroup returns the group of a pod (anti-)affinity term of a pod in namespace ns with
// labels podLabels (its matchLabelKeys and mismatchLabelKeys read them). An empty
// namespaceSelector means every namespace; other namespace selectors are not modelled and fall
// back to the listed namespaces (or the pod's own).
func (gs *groups) affinityGroup(ns string, podLabels map[string]string, term *corev1.PodAffinityTerm) (*topoGroup, error) {
	allNS := term.NamespaceSelector != nil && len(term.NamespaceSelector.MatchLabels) == 0 && len(term.NamespaceSelector.MatchExpressions) == 0
	namespaces := term.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{ns}
	}
	return gs.get(term.TopologyKey, namespaces, allNS, WithLabelKeys(term.LabelSelector, podLabels, term.MatchLabelKeys, term.MismatchLabelKeys))
}

// sortedDomains returns the domains of universe ordered by count ascending (desc when reverse),
// then by name.
func sortedDomains(universe []string, counts map[string]int, keep func(d string) bool, reverse bool) []string {
	out := make([]string, 0, len(universe))
	for _, d := range universe {
		if keep(d) {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		ca, cb := counts[a], counts[b]
		if ca != cb {
			if reverse {
				return cb - ca
			}
			return ca - cb
		}
		return strings.Compare(a, b)
	})
	return out
}

func unionSorted(sets ...map[string]struct{}) []string {
	all := map[string]struct{}{}
	for _, s := range sets {
		maps.Copy(all, s)
	}
	return slices.Sorted(maps.Keys(all))
}
