package scheduling

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// keyWriter renders the scheduling-relevant parts of a pod into an equivalence-class key. It
// writes every field of the structs it walks (checked against k8s.io/api v0.37), with
// separators, so that different constraints never share a key; it is several times cheaper than
// the generated String methods, which matters at tens of thousands of pods.
type keyWriter struct{ b strings.Builder }

func (w *keyWriter) s(v string) { w.b.WriteString(v); w.b.WriteByte(0) }
func (w *keyWriter) i(v int64)  { w.b.WriteString(strconv.FormatInt(v, 10)); w.b.WriteByte(0) }
func (w *keyWriter) list(vs []string) {
	w.i(int64(len(vs)))
	for _, v := range vs {
		w.s(v)
	}
}
func (w *keyWriter) opt32(v *int32) {
	if v == nil {
		w.s("-")
		return
	}
	w.i(int64(*v))
}

func (w *keyWriter) strMap(m map[string]string) {
	w.i(int64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.s(k)
		w.s(m[k])
	}
}

func (w *keyWriter) selector(sel *metav1.LabelSelector) {
	if sel == nil {
		w.s("nil")
		return
	}
	w.strMap(sel.MatchLabels)
	w.i(int64(len(sel.MatchExpressions)))
	for _, e := range sel.MatchExpressions {
		w.s(e.Key)
		w.s(string(e.Operator))
		w.list(e.Values)
	}
}

func (w *keyWriter) nodeTerm(t *corev1.NodeSelectorTerm) {
	for _, exprs := range [][]corev1.NodeSelectorRequirement{t.MatchExpressions, t.MatchFields} {
		w.i(int64(len(exprs)))
		for _, e := range exprs {
			w.s(e.Key)
			w.s(string(e.Operator))
			w.list(e.Values)
		}
	}
}

func (w *keyWriter) podTerm(t *corev1.PodAffinityTerm) {
	w.selector(t.LabelSelector)
	w.list(t.Namespaces)
	w.s(t.TopologyKey)
	w.selector(t.NamespaceSelector)
	w.list(t.MatchLabelKeys)
	w.list(t.MismatchLabelKeys)
}

func (w *keyWriter) podAffinity(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
	w.i(int64(len(required)))
	for i := range required {
		w.podTerm(&required[i])
	}
	w.i(int64(len(preferred)))
	for i := range preferred {
		w.i(int64(preferred[i].Weight))
		w.podTerm(&preferred[i].PodAffinityTerm)
	}
}

func (w *keyWriter) affinity(a *corev1.Affinity) {
	if a == nil {
		w.s("noaffinity")
		return
	}
	if na := a.NodeAffinity; na != nil {
		w.s("node")
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			w.i(int64(len(r.NodeSelectorTerms)))
			for i := range r.NodeSelectorTerms {
				w.nodeTerm(&r.NodeSelectorTerms[i])
			}
		} else {
			w.s("-")
		}
		w.i(int64(len(na.PreferredDuringSchedulingIgnoredDuringExecution)))
		for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			p := &na.PreferredDuringSchedulingIgnoredDuringExecution[i]
			w.i(int64(p.Weight))
			w.nodeTerm(&p.Preference)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		w.s("pod")
		w.podAffinity(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		w.s("anti")
		w.podAffinity(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}

func (w *keyWriter) policy(p *corev1.NodeInclusionPolicy) {
	if p == nil {
		w.s("-")
		return
	}
	w.s(string(*p))
}

// classKey renders every field of the pod that scheduling reads; with owner also its
// controller, from which a default spread's selector is deduced (see ownerMatters).
func classKey(pod *corev1.Pod, req corev1.ResourceList, owner bool) string {
	var w keyWriter
	w.s(pod.Namespace)
	if owner {
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			w.s(ref.APIVersion)
			w.s(ref.Kind)
			w.s(ref.Name)
		} else {
			w.s("-")
		}
	}
	w.strMap(pod.Labels)
	w.i(int64(len(req)))
	for _, k := range slices.Sorted(maps.Keys(req)) {
		q := req[k]
		w.s(string(k))
		w.s(q.String())
	}
	w.strMap(pod.Spec.NodeSelector)
	w.affinity(pod.Spec.Affinity)
	w.i(int64(len(pod.Spec.Tolerations)))
	for _, t := range pod.Spec.Tolerations {
		w.s(t.Key)
		w.s(string(t.Operator))
		w.s(t.Value)
		w.s(string(t.Effect))
		if t.TolerationSeconds != nil {
			w.i(*t.TolerationSeconds)
		} else {
			w.s("-")
		}
	}
	w.i(int64(len(pod.Spec.TopologySpreadConstraints)))
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		w.i(int64(c.MaxSkew))
		w.s(c.TopologyKey)
		w.s(string(c.WhenUnsatisfiable))
		w.selector(c.LabelSelector)
		w.opt32(c.MinDomains)
		w.policy(c.NodeAffinityPolicy)
		w.policy(c.NodeTaintsPolicy)
		w.list(c.MatchLabelKeys)
	}
	for _, p := range podHostPorts(pod) {
		w.s(string(p.protocol))
		w.s(p.ip)
		w.i(int64(p.port))
	}
	return w.b.String()
}
