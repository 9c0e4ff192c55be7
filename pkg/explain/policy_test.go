package explain_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/explain"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// TestPodSchedulingNotes: the report says how the scheduling settings and the pod's label keys
// shape its simulation, and a NodeClaim whose minValues were relaxed says so.
func TestPodSchedulingNotes(t *testing.T) {
	labelled := func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web", "rev": "2"} }
	preferring := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}}}}}}
	}
	spreadByRevision := func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MatchLabelKeys: []string{"rev"}}}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	zone := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule}}
	minValues := func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpExists, MinValues: new(5)}}
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		pool    func(*v1.NodePool)
		setup   func(in *scheduling.Input)
		want    string // in the scheduling notes, or the outcome
		notWant bool   // want must not appear
	}{
		{name: "preferences ignored", pod: pod("100m", preferring), setup: func(in *scheduling.Input) { in.PreferencePolicy = scheduling.PreferenceIgnore },
			want: "preference policy Ignore: left out preferred node affinity"},
		{name: "preferences respected", pod: pod("100m", preferring), want: "preference policy Ignore", notWant: true},
		{name: "default spread applies", pod: pod("100m", labelled), setup: func(in *scheduling.Input) {
			in.DefaultSpread = &scheduling.DefaultSpread{Constraints: zone, Services: []*corev1.Service{svc}}
		}, want: "default topology spread constraints (scheduler config) apply, selecting app=web: topology.kubernetes.io/zone maxSkew 1 DoNotSchedule"},
		{name: "default spread without a selector", pod: pod("100m"), setup: func(in *scheduling.Input) {
			in.DefaultSpread = &scheduling.DefaultSpread{Constraints: zone, Services: []*corev1.Service{svc}}
		}, want: "default topology spread constraints (scheduler config) do not apply"},
		{name: "matchLabelKeys", pod: pod("100m", labelled, spreadByRevision), want: "topology spread on kubernetes.io/hostname counts pods selected by app=web,rev in (2)"},
		{name: "minValues relaxed", pod: pod("100m"), pool: minValues, setup: func(in *scheduling.Input) { in.MinValuesPolicy = scheduling.MinValuesBestEffort },
			want: "minValues relaxed (--min-values-policy BestEffort)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []func(*v1.NodePool){}
			if tc.pool != nil {
				opts = append(opts, tc.pool)
			}
			np := nodePool("default", nil, opts...)
			in := &scheduling.Input{NodePools: []*v1.NodePool{np}, InstanceTypes: []*scheduling.InstanceType{
				instanceType("m.large", "amd64", "2", "8Gi", 0.1), instanceType("m6g.large", "arm64", "2", "8Gi", 0.08)}}
			if tc.setup != nil {
				tc.setup(in)
			}
			r, err := explain.Pod(in, in.NodePools, nil, tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			all := r.Outcome + "\n" + strings.Join(r.Scheduling, "\n")
			if strings.Contains(all, tc.want) == tc.notWant {
				t.Errorf("report (outcome and scheduling notes):\n%s\nwant %q present: %v", all, tc.want, !tc.notWant)
			}
		})
	}
}
