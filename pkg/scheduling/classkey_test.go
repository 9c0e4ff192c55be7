package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClassKeySeparatesConstraints(t *testing.T) {
	base := func() *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "x"}}}
		p.Spec.Containers = []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}}}
		return p
	}
	key := func(p *corev1.Pod) string { return classKey(p, PodRequests(p), false) }
	same := base()
	same.Name = "b"
	if key(base()) != key(same) {
		t.Errorf("pods differing only in name must share a class")
	}
	mutations := map[string]func(p *corev1.Pod){
		"label":     func(p *corev1.Pod) { p.Labels["app"] = "y" },
		"namespace": func(p *corev1.Pod) { p.Namespace = "other" },
		"request": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		},
		"toleration": func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		},
		"anti key": func(p *corev1.Pod) {
			p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey = corev1.LabelTopologyZone
		},
		"anti to preferred": func(p *corev1.Pod) {
			a := p.Spec.Affinity.PodAntiAffinity
			a.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: a.RequiredDuringSchedulingIgnoredDuringExecution[0]}}
			a.RequiredDuringSchedulingIgnoredDuringExecution = nil
		},
		"spread": func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: corev1.LabelTopologyZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule}}
		},
		"node selector": func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"a": "b"} },
		"host port":     func(p *corev1.Pod) { p.Spec.Containers[0].Ports = []corev1.ContainerPort{{HostPort: 80}} },
	}
	for name, mutate := range mutations {
		p := base()
		mutate(p)
		if key(p) == key(base()) {
			t.Errorf("%s: a changed pod kept the class key", name)
		}
	}
}
