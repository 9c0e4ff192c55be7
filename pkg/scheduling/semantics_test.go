package scheduling_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// zonesOf maps pod name to the zone of its NodeClaim (or existing node).
func zonesOf(p *scheduling.Plan, nodes []*scheduling.Node) map[string]string {
	out := map[string]string{}
	for _, nc := range p.NodeClaims {
		for _, pod := range nc.Pods {
			out[pod.Name] = nc.Labels[corev1.LabelTopologyZone]
		}
	}
	for _, pl := range p.Placements {
		for _, n := range nodes {
			if n.Name == pl.Node {
				out[pl.Pod.Name] = n.Labels[corev1.LabelTopologyZone]
			}
		}
	}
	return out
}

func TestSolveMoreSemantics(t *testing.T) {
	types := generatedTypes(60)
	spreadPod := func(name string, opts ...podOpt) *corev1.Pod {
		return pod(name, "100m", "128Mi", append([]podOpt{withLabels("app", "s"), withSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)}, opts...)...)
	}
	minDomains := func(n int32) podOpt {
		return func(p *corev1.Pod) { p.Spec.TopologySpreadConstraints[0].MinDomains = &n }
	}
	orTerms := func(p *corev1.Pod) {
		ensureAffinity(p).NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: awsv1.LabelInstanceGeneration, Operator: corev1.NodeSelectorOpGt, Values: []string{"9"}}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{testZones[2]}}}},
		}}}
	}
	preferApart := func(p *corev1.Pod) {
		ensureAffinity(p).PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "p"}}}}}}
	}
	zoneA := map[string]string{corev1.LabelTopologyZone: testZones[0], corev1.LabelHostname: "existing-1"}
	taintedA := func() []*scheduling.Node {
		n := existingNode("existing-1", "1", "1Gi", zoneA, pod("bound", "100m", "128Mi", withLabels("app", "s")))
		n.Taints = []corev1.Taint{{Key: "private", Effect: corev1.TaintEffectNoSchedule}}
		return []*scheduling.Node{n}
	}
	honorTaints := func(p *corev1.Pod) {
		honor := corev1.NodeInclusionPolicyHonor
		p.Spec.TopologySpreadConstraints[0].NodeTaintsPolicy = &honor
	}
	tests := []struct {
		name  string
		nodes []*scheduling.Node
		pods  []*corev1.Pod
		want  map[string]string
		unsch int
	}{
		{
			name:  "minDomains above the zone count caps each zone at maxSkew",
			pods:  []*corev1.Pod{spreadPod("a", minDomains(5)), spreadPod("b", minDomains(5)), spreadPod("c", minDomains(5)), spreadPod("d", minDomains(5))},
			want:  map[string]string{"a": testZones[0], "b": testZones[1], "c": testZones[2]},
			unsch: 1,
		},
		{
			name: "a bound matching pod counts in the spread",
			nodes: []*scheduling.Node{existingNode("existing-1", "1", "1Gi", zoneA,
				pod("bound", "900m", "128Mi", withLabels("app", "s")))},
			pods: []*corev1.Pod{spreadPod("a"), spreadPod("b")},
			want: map[string]string{"a": testZones[1], "b": testZones[2]},
		},
		{
			name:  "nodeTaintsPolicy Ignore counts pods on a tainted node",
			nodes: taintedA(),
			pods:  []*corev1.Pod{spreadPod("a")},
			want:  map[string]string{"a": testZones[1]},
		},
		{
			name:  "nodeTaintsPolicy Honor skips a tainted node the pod does not tolerate",
			nodes: taintedA(),
			pods:  []*corev1.Pod{spreadPod("a", honorTaints)},
			want:  map[string]string{"a": testZones[0]},
		},
		{
			name: "node affinity terms are alternatives",
			pods: []*corev1.Pod{pod("a", "100m", "128Mi", orTerms)},
			want: map[string]string{"a": testZones[2]},
		},
		{
			name: "preferred zonal anti-affinity is honoured while it can be, then relaxed",
			pods: []*corev1.Pod{
				pod("p1", "100m", "128Mi", withLabels("app", "p"), preferApart), pod("p2", "100m", "128Mi", withLabels("app", "p"), preferApart),
				pod("p3", "100m", "128Mi", withLabels("app", "p"), preferApart), pod("p4", "100m", "128Mi", withLabels("app", "p"), preferApart),
			},
			want: map[string]string{"p1": testZones[0], "p2": testZones[1], "p3": testZones[2], "p4": testZones[0]},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &scheduling.Input{Pods: tt.pods, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types, Nodes: tt.nodes}
			plan := solveChecked(t, in)
			if diff := cmp.Diff(tt.want, zonesOf(plan, tt.nodes)); diff != "" {
				t.Errorf("zones (-want +got):\n%s", diff)
			}
			if len(plan.Unschedulable) != tt.unsch {
				t.Errorf("%d unschedulable, want %d", len(plan.Unschedulable), tt.unsch)
			}
		})
	}
}

func TestSolveMinValues(t *testing.T) {
	pool := nodePool("default", func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
			Key: awsv1.LabelInstanceFamily, Operator: v1.NodeSelectorOpExists, MinValues: new(4)})
	})
	in := &scheduling.Input{Pods: []*corev1.Pod{pod("a", "1", "1Gi"), pod("b", "1", "1Gi")}, NodePools: []*v1.NodePool{pool}, InstanceTypes: generatedTypes(120)}
	plan := solveChecked(t, in)
	if len(plan.NodeClaims) == 0 {
		t.Fatalf("no NodeClaims: %+v", plan.Unschedulable)
	}
	for _, nc := range plan.NodeClaims {
		families := map[string]bool{}
		for _, name := range nc.InstanceTypes {
			for _, it := range in.InstanceTypes {
				if it.Name == name {
					families[it.Labels[awsv1.LabelInstanceFamily]] = true
				}
			}
		}
		if len(families) < 4 {
			t.Errorf("NodeClaim %s keeps %d families %v, minValues wants 4", nc.Name, len(families), nc.InstanceTypes)
		}
	}
}

func TestSolveLimitsCountInFlightCapacity(t *testing.T) {
	pool := nodePool("small", func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("6")} })
	inflight := existingNode("inflight-1", "4", "8Gi", map[string]string{corev1.LabelTopologyZone: testZones[0], corev1.LabelHostname: "inflight-1"},
		pod("bound", "3900m", "128Mi"))
	inflight.NodePool = "small"
	in := &scheduling.Input{
		Pods:          []*corev1.Pod{pod("a", "1500m", "1Gi"), pod("b", "1500m", "1Gi")},
		NodePools:     []*v1.NodePool{pool},
		InstanceTypes: generatedTypes(60),
		Nodes:         []*scheduling.Node{inflight},
	}
	plan := solveChecked(t, in)
	// 4 cpus are in flight, so only a 2-cpu type (1900m allocatable) fits under the limit of 6:
	// one pod on it, the other unschedulable for limits.
	got := summarize(plan)
	want := summary{Claims: []string{"small:a"}, Unschedulable: []string{"b:small=LimitsExceeded"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

// TestSolveAffinityToAnotherClass: pods that must share a node with "db" pods wait for them
// (a second pass) and then join their node.
func TestSolveAffinityToAnotherClass(t *testing.T) {
	withDBAffinity := func(p *corev1.Pod) {
		ensureAffinity(p).PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}
	}
	in := &scheduling.Input{
		// The cache pods are larger, so they are tried first, before any db pod exists.
		Pods:          []*corev1.Pod{pod("cache-0", "1", "1Gi", withLabels("app", "cache"), withDBAffinity), pod("cache-1", "1", "1Gi", withLabels("app", "cache"), withDBAffinity), pod("db-0", "100m", "128Mi", withLabels("app", "db"))},
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: generatedTypes(60),
	}
	got := summarize(solveChecked(t, in))
	if diff := cmp.Diff(summary{Claims: []string{"default:cache-0,cache-1,db-0"}}, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}
