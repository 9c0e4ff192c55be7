package check

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// mergeKeys returns sel ANDed with "key In (value)" for each key of match and "key NotIn (value)"
// for each key of mismatch that the owner's labels carry, as Kubernetes reads matchLabelKeys and
// mismatchLabelKeys. A nil selector selects nothing and stays so.
func mergeKeys(sel *metav1.LabelSelector, owner map[string]string, match, mismatch []string) labels.Selector {
	s := selectorOf(sel)
	if sel == nil {
		return s
	}
	for op, keys := range map[string][]string{"in": match, "notin": mismatch} {
		for _, k := range keys {
			v, ok := owner[k]
			if !ok {
				continue
			}
			var r *labels.Requirement
			var err error
			if op == "in" {
				r, err = labels.NewRequirement(k, "in", []string{v})
			} else {
				r, err = labels.NewRequirement(k, "notin", []string{v})
			}
			if err == nil {
				s = s.Add(*r)
			}
		}
	}
	return s
}

// termSelector is the selector an affinity term of a pod with ownerLabels applies.
func termSelector(term *corev1.PodAffinityTerm, ownerLabels map[string]string) labels.Selector {
	return mergeKeys(term.LabelSelector, ownerLabels, term.MatchLabelKeys, term.MismatchLabelKeys)
}

// spreads returns the spread constraints p is checked against with their selectors: its own,
// else the input's defaults with the selector kube-scheduler deduces (Services of p's namespace
// selecting it, then its ReplicationController's labels, or its ReplicaSet's or StatefulSet's
// selector); none when nothing can be deduced.
func (c *checker) spreads(p *corev1.Pod) ([]corev1.TopologySpreadConstraint, []labels.Selector) {
	own := p.Spec.TopologySpreadConstraints
	if len(own) > 0 {
		sels := make([]labels.Selector, len(own))
		for i := range own {
			sels[i] = mergeKeys(own[i].LabelSelector, p.Labels, own[i].MatchLabelKeys, nil)
		}
		return own, sels
	}
	ds := c.in.DefaultSpread
	if ds == nil || len(ds.Constraints) == 0 {
		return nil, nil
	}
	sel := deducedSelector(p, ds)
	if sel.Empty() {
		return nil, nil
	}
	sels := make([]labels.Selector, len(ds.Constraints))
	for i := range sels {
		sels[i] = sel
	}
	return ds.Constraints, sels
}

// deducedSelector is the selector kube-scheduler deduces for p's default spreads (see spreads).
func deducedSelector(p *corev1.Pod, ds *scheduling.DefaultSpread) labels.Selector {
	set := labels.Set{}
	for _, svc := range ds.Services {
		if svc.Namespace == p.Namespace && svc.Spec.Selector != nil && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(p.Labels)) {
			maps.Copy(set, svc.Spec.Selector)
		}
	}
	var ownerSel *metav1.LabelSelector
	for _, ref := range p.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			var rcLabels map[string]string
			rcLabels, ownerSel = controllerOf(p.Namespace, ref, ds)
			maps.Copy(set, rcLabels)
		}
	}
	sel := labels.SelectorFromSet(set)
	if ownerSel != nil {
		if o, err := metav1.LabelSelectorAsSelector(ownerSel); err == nil {
			if reqs, ok := o.Requirements(); ok {
				sel = sel.Add(reqs...)
			}
		}
	}
	return sel
}

// controllerOf returns what a controller reference contributes to a default selector: a
// ReplicationController's labels, or a ReplicaSet's or StatefulSet's selector.
func controllerOf(namespace string, ref metav1.OwnerReference, ds *scheduling.DefaultSpread) (map[string]string, *metav1.LabelSelector) {
	switch {
	case ref.APIVersion == "v1" && ref.Kind == "ReplicationController":
		for _, rc := range ds.ReplicationControllers {
			if rc.Namespace == namespace && rc.Name == ref.Name {
				return rc.Spec.Selector, nil
			}
		}
	case ref.APIVersion == "apps/v1" && ref.Kind == "ReplicaSet":
		for _, rs := range ds.ReplicaSets {
			if rs.Namespace == namespace && rs.Name == ref.Name {
				return nil, rs.Spec.Selector
			}
		}
	case ref.APIVersion == "apps/v1" && ref.Kind == "StatefulSet":
		for _, ss := range ds.StatefulSets {
			if ss.Namespace == namespace && ss.Name == ref.Name {
				return nil, ss.Spec.Selector
			}
		}
	}
	return nil, nil
}

// checkMinValues: every NodeClaim's options keep at least the minValues of its NodePool's
// requirements, unless under MinValuesBestEffort it says it relaxed them, and then at least the
// lower minValues its own requirements carry.
func (c *checker) checkMinValues(plan *scheduling.Plan) {
	pools := map[string]*v1.NodePool{}
	for _, np := range c.in.NodePools {
		pools[np.Name] = np
	}
	byName := map[string]*cnode{}
	for _, n := range c.nodes {
		byName[n.name] = n
	}
	for i := range plan.NodeClaims {
		nc := &plan.NodeClaims[i]
		np, n := pools[nc.NodePool], byName[nc.Name]
		if np == nil || n == nil || !n.claim {
			continue
		}
		if nc.MinValuesRelaxed && c.in.MinValuesPolicy != scheduling.MinValuesBestEffort {
			c.fail("nodeclaim %s relaxed minValues under policy %q", nc.Name, c.in.MinValuesPolicy)
		}
		own := map[string]int{}
		for _, r := range nc.Requirements {
			if r.MinValues != nil {
				own[r.Key] = max(own[r.Key], *r.MinValues)
			}
		}
		relaxedAny := false
		for _, r := range np.Spec.Template.Spec.Requirements {
			if r.MinValues == nil {
				continue
			}
			kept := map[string]bool{}
			for _, o := range n.options {
				if v, ok := o.labels[r.Key]; ok {
					kept[v] = true
				}
			}
			need := *r.MinValues
			if nc.MinValuesRelaxed && own[r.Key] < need {
				relaxedAny = true
				need = own[r.Key]
			}
			if len(kept) < need {
				c.fail("nodeclaim %s keeps %d values of %s, minValues %d", nc.Name, len(kept), r.Key, need)
			}
		}
		if nc.MinValuesRelaxed && !relaxedAny {
			c.fail("nodeclaim %s says it relaxed minValues but carries its NodePool's", nc.Name)
		}
	}
}
