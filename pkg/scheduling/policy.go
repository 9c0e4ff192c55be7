package scheduling

import (
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// MinValuesPolicy is how a NodePool requirement's minValues binds a new NodeClaim (Karpenter's
// --min-values-policy).
type MinValuesPolicy string

const (
	// MinValuesStrict (the default, also for "") refuses a new NodeClaim whose options keep
	// fewer distinct values of a key than its minValues.
	MinValuesStrict MinValuesPolicy = "Strict"
	// MinValuesBestEffort launches it anyway, lowering that requirement's minValues to the number
	// of values its options keep and marking the NodeClaim (NodeClaim.MinValuesRelaxed). As in
	// Karpenter, only a new NodeClaim is relaxed: a pod joins an open one only within the
	// minValues it already carries (relaxed or not).
	MinValuesBestEffort MinValuesPolicy = "BestEffort"
)

// PreferencePolicy is how the solver treats preferences (Karpenter's --preference-policy).
type PreferencePolicy string

const (
	// PreferenceRespect (the default, also for "") treats preferred node affinity, preferred pod
	// (anti-)affinity and ScheduleAnyway topology spreads as required at first and relaxes them
	// one at a time when a pod cannot be placed.
	PreferenceRespect PreferencePolicy = "Respect"
	// PreferenceIgnore leaves them out from the start. PreferNoSchedule taints are still kept off
	// until nothing else fits, as Karpenter still relaxes them under Ignore.
	PreferenceIgnore PreferencePolicy = "Ignore"
)

// DefaultSpread is the cluster's default topology spread constraints (kube-scheduler's
// PodTopologySpread defaultConstraints) and the objects their selectors are deduced from.
type DefaultSpread struct {
	// Constraints apply to every pod that declares no topologySpreadConstraints of its own. They
	// carry no labelSelector: each pod's is deduced as kube-scheduler deduces it (DefaultSelector),
	// and a pod for which nothing can be deduced gets none.
	Constraints []corev1.TopologySpreadConstraint
	// Services, ReplicationControllers, ReplicaSets and StatefulSets of the cluster (any
	// namespace): the Services selecting a pod and the pod's controller contribute its selector.
	Services               []*corev1.Service
	ReplicationControllers []*corev1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
}

// DefaultSelector returns the selector kube-scheduler's PodTopologySpread plugin gives pod's
// default constraints, or nil when none can be deduced (the pod then gets no default
// constraint). It merges the selectors of the Services in the pod's namespace that select it
// (label equality, a later Service winning a shared key), then adds the selector of the pod's
// controller when that is a ReplicationController (its labels override), a ReplicaSet or a
// StatefulSet (its requirements are ANDed). Controllers of any other kind contribute nothing.
func DefaultSelector(pod *corev1.Pod, ds *DefaultSpread) *metav1.LabelSelector {
	if ds == nil {
		return nil
	}
	matchLabels := map[string]string{}
	for _, svc := range ds.Services {
		// A nil selector selects nothing; an empty one every pod, contributing no label.
		if svc.Namespace != pod.Namespace || svc.Spec.Selector == nil {
			continue
		}
		if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			maps.Copy(matchLabels, svc.Spec.Selector)
		}
	}
	var exprs []metav1.LabelSelectorRequirement
	if owner := metav1.GetControllerOfNoCopy(pod); owner != nil {
		rcLabels, sel := controllerSelector(pod.Namespace, owner, ds)
		maps.Copy(matchLabels, rcLabels)
		if sel != nil {
			for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
				exprs = append(exprs, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{sel.MatchLabels[k]}})
			}
			exprs = append(exprs, sel.MatchExpressions...)
		}
	}
	if len(matchLabels) == 0 && len(exprs) == 0 {
		return nil // an empty selector would count every pod of the namespace
	}
	if len(matchLabels) == 0 {
		matchLabels = nil
	}
	return &metav1.LabelSelector{MatchLabels: matchLabels, MatchExpressions: exprs}
}

// controllerSelector returns what the pod's controller owner contributes to its default
// selector: a ReplicationController's labels, or a ReplicaSet's or StatefulSet's selector.
func controllerSelector(namespace string, owner *metav1.OwnerReference, ds *DefaultSpread) (map[string]string, *metav1.LabelSelector) {
	apps := owner.APIVersion == appsv1.SchemeGroupVersion.String()
	switch {
	case owner.Kind == "ReplicationController" && owner.APIVersion == "v1":
		if i := slices.IndexFunc(ds.ReplicationControllers, func(rc *corev1.ReplicationController) bool { return rc.Namespace == namespace && rc.Name == owner.Name }); i >= 0 {
			return ds.ReplicationControllers[i].Spec.Selector, nil
		}
	case owner.Kind == "ReplicaSet" && apps:
		if i := slices.IndexFunc(ds.ReplicaSets, func(rs *appsv1.ReplicaSet) bool { return rs.Namespace == namespace && rs.Name == owner.Name }); i >= 0 {
			return nil, ds.ReplicaSets[i].Spec.Selector
		}
	case owner.Kind == "StatefulSet" && apps:
		if i := slices.IndexFunc(ds.StatefulSets, func(ss *appsv1.StatefulSet) bool { return ss.Namespace == namespace && ss.Name == owner.Name }); i >= 0 {
			return nil, ds.StatefulSets[i].Spec.Selector
		}
	}
	return nil, nil
}

// SpreadConstraints returns the topology spread constraints pod is scheduled with: its own, or
// when it has none the defaults of ds with its deduced selector; each with its matchLabelKeys
// merged into the selector (see WithLabelKeys).
func SpreadConstraints(pod *corev1.Pod, ds *DefaultSpread) []corev1.TopologySpreadConstraint {
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		if ds == nil || len(ds.Constraints) == 0 {
			return nil
		}
		sel := DefaultSelector(pod, ds)
		if sel == nil {
			return nil
		}
		out := slices.Clone(ds.Constraints)
		for i := range out {
			out[i].LabelSelector = sel
			out[i].MatchLabelKeys = nil
		}
		return out
	}
	out := pod.Spec.TopologySpreadConstraints
	if slices.ContainsFunc(out, func(t corev1.TopologySpreadConstraint) bool { return len(t.MatchLabelKeys) > 0 }) {
		out = slices.Clone(out)
		for i := range out {
			out[i].LabelSelector = WithLabelKeys(out[i].LabelSelector, pod.Labels, out[i].MatchLabelKeys, nil)
		}
	}
	return out
}

// WithLabelKeys returns sel with, for each key of match the pod's labels carry, "key In (value)"
// and for each key of mismatch "key NotIn (value)" ANDed to it, as Kubernetes merges a topology
// spread's matchLabelKeys and a pod (anti-)affinity term's matchLabelKeys and mismatchLabelKeys;
// keys the pod lacks are ignored. A nil selector (selecting nothing) stays nil, and an expression
// already there (the API server merges them at pod creation) is not added twice. sel is not
// modified.
func WithLabelKeys(sel *metav1.LabelSelector, podLabels map[string]string, match, mismatch []string) *metav1.LabelSelector {
	if sel == nil || len(match) == 0 && len(mismatch) == 0 {
		return sel
	}
	out := sel.DeepCopy()
	add := func(keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			v, ok := podLabels[k]
			if !ok {
				continue
			}
			e := metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}}
			if !slices.ContainsFunc(out.MatchExpressions, func(o metav1.LabelSelectorRequirement) bool {
				return o.Key == e.Key && o.Operator == e.Operator && slices.Equal(o.Values, e.Values)
			}) {
				out.MatchExpressions = append(out.MatchExpressions, e)
			}
		}
	}
	add(match, metav1.LabelSelectorOpIn)
	add(mismatch, metav1.LabelSelectorOpNotIn)
	return out
}

// ValidateDefaultConstraints checks default topology spread constraints as kube-scheduler
// validates its PodTopologySpread args: maxSkew above 0, a topologyKey, whenUnsatisfiable
// DoNotSchedule or ScheduleAnyway, no labelSelector (it is deduced per pod), no matchLabelKeys
// (the deduced selector replaces the merged one, so they would do nothing), and no two with the
// same topologyKey and whenUnsatisfiable.
func ValidateDefaultConstraints(cs []corev1.TopologySpreadConstraint) error {
	for i, c := range cs {
		switch {
		case c.MaxSkew <= 0:
			return fmt.Errorf("defaultConstraints[%d].maxSkew is %d, must be greater than 0", i, c.MaxSkew)
		case c.TopologyKey == "":
			return fmt.Errorf("defaultConstraints[%d].topologyKey must be set", i)
		case c.WhenUnsatisfiable != corev1.DoNotSchedule && c.WhenUnsatisfiable != corev1.ScheduleAnyway:
			return fmt.Errorf("defaultConstraints[%d].whenUnsatisfiable is %q, must be %s or %s", i, c.WhenUnsatisfiable, corev1.DoNotSchedule, corev1.ScheduleAnyway)
		case c.LabelSelector != nil:
			return fmt.Errorf("defaultConstraints[%d].labelSelector must not be set: the selector is deduced for each pod", i)
		case len(c.MatchLabelKeys) > 0:
			return fmt.Errorf("defaultConstraints[%d].matchLabelKeys must not be set: it has no effect on default constraints", i)
		}
		for j := range i {
			if cs[j].TopologyKey == c.TopologyKey && cs[j].WhenUnsatisfiable == c.WhenUnsatisfiable {
				return fmt.Errorf("defaultConstraints[%d] repeats [%d] (topologyKey %s, whenUnsatisfiable %s)", i, j, c.TopologyKey, c.WhenUnsatisfiable)
			}
		}
	}
	return nil
}

// ownerMatters reports whether pod's class must also be told apart by its controller: a
// default spread applies to it, and its selector is deduced from the controller.
func (s *solver) ownerMatters(pod *corev1.Pod) bool {
	return s.in.DefaultSpread != nil && len(s.in.DefaultSpread.Constraints) > 0 && len(pod.Spec.TopologySpreadConstraints) == 0
}

// Settings are the operator's scheduling settings, shared by every Solve of the controller,
// `joiner simulate` and `joiner explain`: --min-values-policy, --preference-policy and the
// default spreads of --scheduler-config.
type Settings struct {
	MinValuesPolicy    MinValuesPolicy
	PreferencePolicy   PreferencePolicy
	DefaultConstraints []corev1.TopologySpreadConstraint
}

// Apply sets in's policies and, when there are default constraints, its DefaultSpread: them
// with the Services and controllers of workloads (nil: none; only the pods' Services and
// controllers matter).
func (st Settings) Apply(in *Input, workloads *DefaultSpread) {
	in.MinValuesPolicy, in.PreferencePolicy = st.MinValuesPolicy, st.PreferencePolicy
	if len(st.DefaultConstraints) == 0 {
		in.DefaultSpread = nil
		return
	}
	ds := &DefaultSpread{}
	if workloads != nil {
		*ds = *workloads
	}
	ds.Constraints = st.DefaultConstraints
	in.DefaultSpread = ds
}

// ParseMinValuesPolicy reads a --min-values-policy value (Karpenter's names; "" is Strict).
func ParseMinValuesPolicy(s string) (MinValuesPolicy, error) {
	switch MinValuesPolicy(s) {
	case "", MinValuesStrict:
		return MinValuesStrict, nil
	case MinValuesBestEffort:
		return MinValuesBestEffort, nil
	}
	return "", fmt.Errorf("min values policy %q is not Strict or BestEffort", s)
}

// ParsePreferencePolicy reads a --preference-policy value (Karpenter's names; "" is Respect).
func ParsePreferencePolicy(s string) (PreferencePolicy, error) {
	switch PreferencePolicy(s) {
	case "", PreferenceRespect:
		return PreferenceRespect, nil
	case PreferenceIgnore:
		return PreferenceIgnore, nil
	}
	return "", fmt.Errorf("preference policy %q is not Respect or Ignore", s)
}
