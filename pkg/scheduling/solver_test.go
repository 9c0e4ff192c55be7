package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/check"
)

// solveChecked solves in and fails the test on any checker violation.
func solveChecked(t testing.TB, in *scheduling.Input) *scheduling.Plan {
	t.Helper()
	plan, err := scheduling.Solve(in)
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	if errs := check.Plan(in, plan); len(errs) > 0 {
		for _, e := range errs[:min(len(errs), 10)] {
			t.Errorf("check: %v", e)
		}
		t.FailNow()
	}
	return plan
}

// summary is what the table tests assert: per NodeClaim its pool and sorted pod names, plus
// existing-node placements and unschedulable pods with their reason codes.
type summary struct {
	Claims        []string
	Placed        []string
	Unschedulable []string
}

func summarize(p *scheduling.Plan) summary {
	var s summary
	for _, nc := range p.NodeClaims {
		var names []string
		for _, pod := range nc.Pods {
			names = append(names, pod.Name)
		}
		slices.Sort(names)
		s.Claims = append(s.Claims, nc.NodePool+":"+strings.Join(names, ","))
	}
	slices.Sort(s.Claims)
	for _, pl := range p.Placements {
		s.Placed = append(s.Placed, pl.Pod.Name+"@"+pl.Node)
	}
	slices.Sort(s.Placed)
	for _, u := range p.Unschedulable {
		var codes []string
		for _, r := range u.Reasons {
			codes = append(codes, r.NodePool+"="+string(r.Code))
		}
		s.Unschedulable = append(s.Unschedulable, u.Pod.Name+":"+strings.Join(codes, ","))
	}
	slices.Sort(s.Unschedulable)
	return s
}

func existingNode(name string, cpu, mem string, labels map[string]string, pods ...*corev1.Pod) *scheduling.Node {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110")}
	return &scheduling.Node{Name: name, Labels: labels, Allocatable: l, Capacity: l, Pods: pods}
}

func TestSolvePlacements(t *testing.T) {
	types := generatedTypes(60)
	zoneA := map[string]string{corev1.LabelTopologyZone: testZones[0], corev1.LabelHostname: "existing-1"}
	tainted := func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "cni", Effect: corev1.TaintEffectNoSchedule}}
	}
	agentTainted := func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = []corev1.Taint{
			{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute},
			{Key: "ebs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute},
		}
	}
	tolerate := func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	}
	hostPort := func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	}
	weight := func(w int32) func(*v1.NodePool) { return func(np *v1.NodePool) { np.Spec.Weight = &w } }
	limitCPU := func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("4")} }
	preferArm := func(p *corev1.Pod) {
		ensureAffinity(p).NodeAffinity = &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "example.com/nowhere", Operator: corev1.NodeSelectorOpIn, Values: []string{"x"}}}}}}}
	}
	tests := []struct {
		name  string
		pools []*v1.NodePool
		nodes []*scheduling.Node
		pods  []*corev1.Pod
		want  summary
	}{
		{
			name:  "plain pods share one node",
			pools: []*v1.NodePool{nodePool("default")},
			pods:  []*corev1.Pod{pod("a", "1", "1Gi"), pod("b", "1", "1Gi"), pod("c", "1", "1Gi")},
			want:  summary{Claims: []string{"default:a,b,c"}},
		},
		{
			name:  "taint keeps intolerant pods out, startup taints are ignored",
			pools: []*v1.NodePool{nodePool("gpu", tainted)},
			pods:  []*corev1.Pod{pod("a", "1", "1Gi"), pod("b", "1", "1Gi", tolerate)},
			want:  summary{Claims: []string{"gpu:b"}, Unschedulable: []string{"a:gpu=TaintNotTolerated"}},
		},
		{
			name:  "agent taints in the template are ignored like startup taints, the operator's are not",
			pools: []*v1.NodePool{nodePool("cilium", agentTainted), nodePool("gpu", tainted)},
			pods:  []*corev1.Pod{pod("a", "1", "1Gi"), pod("b", "1", "1Gi")},
			want:  summary{Claims: []string{"cilium:a,b"}},
		},
		{
			name:  "host ports conflict",
			pools: []*v1.NodePool{nodePool("default")},
			pods:  []*corev1.Pod{pod("a", "100m", "128Mi", hostPort), pod("b", "100m", "128Mi", hostPort)},
			want:  summary{Claims: []string{"default:a", "default:b"}},
		},
		{
			name:  "zonal spread uses every zone",
			pools: []*v1.NodePool{nodePool("default")},
			pods: []*corev1.Pod{
				pod("a", "100m", "128Mi", withLabels("app", "s"), withSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)),
				pod("b", "100m", "128Mi", withLabels("app", "s"), withSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)),
				pod("c", "100m", "128Mi", withLabels("app", "s"), withSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)),
			},
			want: summary{Claims: []string{"default:a", "default:b", "default:c"}},
		},
		{
			name:  "hostname anti-affinity spreads, zonal affinity gathers",
			pools: []*v1.NodePool{nodePool("default")},
			pods: []*corev1.Pod{
				pod("a", "100m", "128Mi", withLabels("app", "x"), withAntiAffinity(corev1.LabelHostname)),
				pod("b", "100m", "128Mi", withLabels("app", "x"), withAntiAffinity(corev1.LabelHostname)),
				pod("c", "1", "128Mi", withLabels("app", "y"), withAffinity(corev1.LabelTopologyZone)),
				pod("d", "1", "128Mi", withLabels("app", "y"), withAffinity(corev1.LabelTopologyZone)),
			},
			want: summary{Claims: []string{"default:a,c,d", "default:b"}},
		},
		{
			name:  "higher weight NodePool first",
			pools: []*v1.NodePool{nodePool("low", weight(1)), nodePool("high", weight(50))},
			pods:  []*corev1.Pod{pod("a", "1", "1Gi")},
			want:  summary{Claims: []string{"high:a"}},
		},
		{
			name:  "limits are never exceeded",
			pools: []*v1.NodePool{nodePool("small", limitCPU)},
			pods:  []*corev1.Pod{pod("a", "3", "1Gi", withLabels("app", "l"), withAntiAffinity(corev1.LabelHostname)), pod("b", "3", "1Gi", withLabels("app", "l"), withAntiAffinity(corev1.LabelHostname))},
			want:  summary{Claims: []string{"small:a"}, Unschedulable: []string{"b:small=LimitsExceeded"}},
		},
		{
			name:  "existing node first",
			pools: []*v1.NodePool{nodePool("default")},
			nodes: []*scheduling.Node{existingNode("existing-1", "2", "4Gi", zoneA)},
			pods:  []*corev1.Pod{pod("a", "1", "1Gi"), pod("b", "1500m", "1Gi")},
			want:  summary{Claims: []string{"default:a"}, Placed: []string{"b@existing-1"}},
		},
		{
			name:  "bound pod's anti-affinity keeps a newcomer off its node",
			pools: []*v1.NodePool{nodePool("default")},
			nodes: []*scheduling.Node{existingNode("existing-1", "8", "16Gi", zoneA,
				pod("bound", "100m", "128Mi", withLabels("app", "z"), withAntiAffinity(corev1.LabelHostname)))},
			pods: []*corev1.Pod{pod("a", "100m", "128Mi", withLabels("app", "z"))},
			want: summary{Claims: []string{"default:a"}},
		},
		{
			name:  "unsatisfiable preferred node affinity is relaxed",
			pools: []*v1.NodePool{nodePool("default")},
			pods:  []*corev1.Pod{pod("a", "1", "1Gi", preferArm)},
			want:  summary{Claims: []string{"default:a"}},
		},
		{
			name:  "Gt on generation and a NodePool spanning architectures",
			pools: []*v1.NodePool{nodePool("default")},
			pods: []*corev1.Pod{
				pod("new", "500m", "1Gi", withNodeAffinity(awsv1.LabelInstanceGeneration, corev1.NodeSelectorOpGt, "7")),
				pod("arm", "500m", "1Gi", withNodeAffinity(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64")),
				pod("none", "1", "1Gi", withNodeAffinity(awsv1.LabelInstanceGeneration, corev1.NodeSelectorOpGt, "9")),
			},
			want: summary{Claims: []string{"default:arm,new"}, Unschedulable: []string{"none:default=IncompatibleRequirements"}},
		},
		{
			name:  "too big for every type",
			pools: []*v1.NodePool{nodePool("default")},
			pods:  []*corev1.Pod{pod("huge", "1000", "1Gi")},
			want:  summary{Unschedulable: []string{"huge:default=NoInstanceTypeFits"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &scheduling.Input{Pods: tt.pods, NodePools: tt.pools, InstanceTypes: types, Nodes: tt.nodes}
			got := summarize(solveChecked(t, in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSolveNarrowsRequirementsAndPrices(t *testing.T) {
	in := &scheduling.Input{
		Pods:          []*corev1.Pod{pod("a", "1", "1Gi", withNodeAffinity(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64"))},
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: generatedTypes(120),
		DaemonSetPods: []*corev1.Pod{pod("ds", "500m", "512Mi")},
	}
	plan := solveChecked(t, in)
	if len(plan.NodeClaims) != 1 {
		t.Fatalf("got %d claims, want 1", len(plan.NodeClaims))
	}
	nc := plan.NodeClaims[0]
	if nc.Labels[corev1.LabelArchStable] != "arm64" {
		t.Errorf("claim labels %v, want arch arm64 pinned", nc.Labels)
	}
	cpu := nc.Requests[corev1.ResourceCPU]
	if cpu.MilliValue() != 1500 {
		t.Errorf("requests cpu %s, want 1500m (pod + daemonset)", cpu.String())
	}
	if len(nc.InstanceTypes) == 0 || len(nc.InstanceTypes) > scheduling.MaxInstanceTypes || nc.Launch.InstanceType != nc.InstanceTypes[0] {
		t.Errorf("instance types %v, launch %+v", nc.InstanceTypes, nc.Launch)
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	p := pod("a", "1", "1Gi")
	p.Spec.InitContainers = []corev1.Container{
		{Name: "side", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}},
		{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("10Mi")}}},
	}
	p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	got := scheduling.PodRequests(p)
	cpu, mem := got[corev1.ResourceCPU], got[corev1.ResourceMemory]
	if cpu.MilliValue() != 3600 || mem.Value() != 1<<30 {
		t.Errorf("PodRequests cpu=%s mem=%s, want 3600m (init 3 + sidecar 500m + overhead) and 1Gi", cpu.String(), mem.String())
	}
}

// TestSolveRandomWorkloads is the property test: random mixes, existing nodes, limits, taints
// and several NodePools must always yield plans the independent checker accepts.
func TestSolveRandomWorkloads(t *testing.T) {
	types := generatedTypes(80)
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			pods := mixedPods(50+rng.IntN(250), seed)
			for _, p := range pods {
				switch rng.IntN(8) {
				case 0:
					withNodeAffinity(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64")(p)
				case 1:
					withNodeAffinity(awsv1.LabelInstanceGeneration, corev1.NodeSelectorOpGt, "6")(p)
				case 2:
					p.Spec.Tolerations = []corev1.Toleration{{Key: "team", Operator: corev1.TolerationOpExists}}
				case 3:
					p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 9000, HostPort: 9000}}
				case 4:
					withSpread(corev1.LabelTopologyZone, 1, corev1.ScheduleAnyway)(p)
				case 5:
					ensureAffinity(p).NodeAffinity = &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
						Weight: 5, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}}}}}
				case 6:
					p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}
				}
			}
			pools := []*v1.NodePool{nodePool("default"), nodePool("team", func(np *v1.NodePool) {
				w := int32(10)
				np.Spec.Weight = &w
				np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
				np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse(fmt.Sprint(8 + rng.IntN(64)))}
			})}
			var nodes []*scheduling.Node
			for i := range rng.IntN(4) {
				bound := pod(fmt.Sprintf("bound-%d", i), "500m", "512Mi", withLabels("app", fmt.Sprintf("kind-%d", 1+rng.IntN(4))))
				if rng.IntN(2) == 0 {
					withAntiAffinity(corev1.LabelHostname)(bound)
				}
				nodes = append(nodes, existingNode(fmt.Sprintf("existing-%d", i), "4", "8Gi",
					map[string]string{corev1.LabelTopologyZone: testZones[i%3], corev1.LabelHostname: fmt.Sprintf("existing-%d", i), corev1.LabelArchStable: "amd64"}, bound))
			}
			solveChecked(t, &scheduling.Input{Pods: pods, NodePools: pools, InstanceTypes: types, Nodes: nodes,
				DaemonSetPods: []*corev1.Pod{pod("ds", "100m", "64Mi")}})
		})
	}
}

// TestSolveTypesWithExtraResources: instance types that offer resources no pod asks for (GPUs,
// Neuron devices) are compared with the pods' requests without running past them. A regression
// test: the repacker indexed a pod's vector with a GPU type's longer one and panicked.
func TestSolveTypesWithExtraResources(t *testing.T) {
	types := generatedTypes(20)
	for i, it := range types {
		if i%3 == 0 {
			it.Allocatable = it.Allocatable.DeepCopy()
			it.Allocatable["nvidia.com/gpu"] = resource.MustParse("1")
			it.Capacity = it.Capacity.DeepCopy()
			it.Capacity["nvidia.com/gpu"] = resource.MustParse("1")
		}
	}
	var pods []*corev1.Pod
	for i := range 6 {
		pods = append(pods, pod(fmt.Sprintf("p%d", i), "500m", "512Mi"))
	}
	plan := solveChecked(t, &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types})
	if len(plan.Unschedulable) != 0 || len(plan.NodeClaims) == 0 {
		t.Errorf("plan = %d NodeClaims and %d unschedulable pods, want all six placed", len(plan.NodeClaims), len(plan.Unschedulable))
	}
}

// TestSolveLimitsCountTheOptionsLaunched: in a pool with limits, a new NodeClaim counts the
// largest of the options it carries (its MaxInstanceTypes cheapest), not of every type that fits,
// so a batch of small pods is not refused while most of the limit is unused. Before, each one-pod
// node counted a 192-CPU type and 60 such nodes could not fit under 600 CPUs.
func TestSolveLimitsCountTheOptionsLaunched(t *testing.T) {
	var pods []*corev1.Pod
	for i := range 60 {
		pods = append(pods, pod(fmt.Sprintf("p%d", i), "1", "1Gi", withLabels("app", "one-per-node"), withAntiAffinity(corev1.LabelHostname)))
	}
	limited := nodePool("limited", func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("600")} })
	plan := solveChecked(t, &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{limited}, InstanceTypes: generatedTypes(312)})
	if len(plan.Unschedulable) != 0 || len(plan.NodeClaims) != 60 {
		t.Fatalf("plan = %d NodeClaims, %d unschedulable; want 60 NodeClaims, none unschedulable", len(plan.NodeClaims), len(plan.Unschedulable))
	}
	for _, nc := range plan.NodeClaims {
		if len(nc.InstanceTypes) > scheduling.MaxInstanceTypes {
			t.Errorf("NodeClaim carries %d options, want at most %d", len(nc.InstanceTypes), scheduling.MaxInstanceTypes)
		}
	}
}
