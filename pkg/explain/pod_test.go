package explain_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/explain"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

func instanceType(name, arch, cpu, mem string, price float64) *scheduling.InstanceType {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("29")}
	return &scheduling.InstanceType{
		Name: name, Labels: map[string]string{corev1.LabelArchStable: arch, corev1.LabelOSStable: "linux"},
		Capacity: rl, Allocatable: rl,
		Offerings: []scheduling.Offering{
			{Zone: "us-west-2a", CapacityType: "on-demand", Price: price, Available: true},
			{Zone: "us-west-2b", CapacityType: "spot", Price: price / 3, Available: true},
		},
	}
}

func nodePool(name string, labels map[string]string, opts ...func(*v1.NodePool)) *v1.NodePool {
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Labels = labels
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	for _, o := range opts {
		o(np)
	}
	return np
}

func requirement(key string, op v1.NodeSelectorOperator, values ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values})
	}
}

func taints(ts ...corev1.Taint) func(*v1.NodePool) {
	return func(np *v1.NodePool) { np.Spec.Template.Spec.Taints = ts }
}

func pod(cpu string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}
	p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func selector(kv ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func affinity(key string, values ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}}}}}}}
	}
}

// verdicts renders each NodePool's outcome as "name: fits" or "name: Kind,Kind".
func verdicts(r *explain.PodReport) []string {
	var out []string
	for _, np := range r.NodePools {
		if np.Fits {
			out = append(out, np.Name+": fits")
			continue
		}
		var kinds []string
		for _, p := range np.Problems {
			kinds = append(kinds, p.Kind)
		}
		out = append(out, np.Name+": "+strings.Join(kinds, ","))
	}
	return out
}

func TestPod(t *testing.T) {
	types := []*scheduling.InstanceType{
		instanceType("m7i.large", "amd64", "2", "8Gi", 0.1008),
		instanceType("m7i.xlarge", "amd64", "4", "16Gi", 0.2016),
		instanceType("t4g.medium", "arm64", "2", "4Gi", 0.0336),
	}
	defaultPool := nodePool("default", map[string]string{"nodegroup": "karpenter"}, requirement(corev1.LabelArchStable, v1.NodeSelectorOpIn, "amd64"))
	armPool := nodePool("cicd-armapps", map[string]string{"pod-type": "armapp"}, requirement(corev1.LabelArchStable, v1.NodeSelectorOpIn, "arm64"))
	dedicated := corev1.Taint{Key: "dedicated", Value: "ci", Effect: corev1.TaintEffectNoSchedule}
	cilium := corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}
	limited := nodePool("limited", nil, func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("4")} })
	nodeLimited := nodePool("node-limited", nil, func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{scheduling.ResourceNodes: resource.MustParse("1")} })
	fullNode := &scheduling.Node{Name: "limited-1", NodePool: "limited", Labels: map[string]string{"other": "x"},
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}, Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}
	for _, tc := range []struct {
		name     string
		pools    []*v1.NodePool
		excluded []*v1.NodePool
		nodes    []*scheduling.Node
		pod      *corev1.Pod
		want     []string
		outcome  string
		text     []string
	}{
		{
			name:    "a label value no NodePool offers names each NodePool's values",
			pools:   []*v1.NodePool{defaultPool, armPool},
			pod:     pod("1", selector("pod-type", "gpu")),
			want:    []string{"cicd-armapps: LabelNotOffered", "default: LabelNotOffered"},
			outcome: "unschedulable",
			text: []string{"NodePool cicd-armapps: does not fit", "the pod requires pod-type In [gpu]; the NodePool offers pod-type=armapp",
				"NodePool default: does not fit", "the NodePool gives its nodes no label pod-type"},
		},
		{
			name: "the pool whose template label matches fits, with arm types only", pools: []*v1.NodePool{defaultPool, armPool},
			pod:     pod("1", selector("pod-type", "armapp")),
			want:    []string{"cicd-armapps: fits", "default: LabelNotOffered"},
			outcome: "would launch a NodeClaim of NodePool cicd-armapps: t4g.medium in us-west-2b (spot)",
			text:    []string{"t4g.medium $0.0112/h (us-west-2b, spot)", "label pod-type: pod requires pod-type In [armapp]; offered: armapp [ok]"},
		},
		{
			name: "nodeAffinity is the same constraint as nodeSelector", pools: []*v1.NodePool{defaultPool, armPool},
			pod:  pod("1", affinity(corev1.LabelArchStable, "arm64")),
			want: []string{"cicd-armapps: fits", "default: LabelNotOffered"},
			text: []string{"the pod requires kubernetes.io/arch In [arm64]; the NodePool offers kubernetes.io/arch=amd64"},
		},
		{
			name:  "taints: the operator's hold, agent taints do not",
			pools: []*v1.NodePool{nodePool("ci", nil, taints(dedicated)), nodePool("cilium", nil, taints(cilium))},
			pod:   pod("1"),
			want:  []string{"ci: TaintNotTolerated", "cilium: fits"},
			text: []string{"does not tolerate the NodePool's taint dedicated=ci:NoSchedule",
				"! AgentTaintNotDeclared: Agent taint node.cilium.io/agent-not-ready=true:NoExecute (Cilium)", "      - key: node.cilium.io/agent-not-ready"},
		},
		{
			name: "nodes that do not join are a warning, not a misfit",
			pools: []*v1.NodePool{nodePool("default", nil, func(np *v1.NodePool) {
				np.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeNodeRegistrationHealthy, Status: metav1.ConditionFalse, Reason: "NodeRoleNotAuthorized", Message: "map the node role"}}
			})},
			pod:  pod("1"),
			want: []string{"default: fits"},
			text: []string{"! NodesNotJoining: the NodePool's nodes fail to join: NodeRoleNotAuthorized: map the node role"},
		},
		{
			name:  "what the analysis does not model, the simulation reports",
			pools: []*v1.NodePool{defaultPool},
			pod: pod("1", func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: corev1.LabelHostname}}}}
			}),
			want:    []string{"default: TopologyOrAffinity"},
			outcome: "unschedulable",
			text:    []string{"the scheduling simulation: "},
		},
		{
			name: "too big for every type", pools: []*v1.NodePool{defaultPool},
			pod:  pod("16"),
			want: []string{"default: NoInstanceTypeFits"},
		},
		{
			name: "limits reached", pools: []*v1.NodePool{limited}, nodes: []*scheduling.Node{fullNode},
			pod:  pod("1"),
			want: []string{"limited: LimitExceeded"},
			text: []string{"cpu limit 4: 4 in use by 1 nodes, and the smallest fitting instance type adds 2"},
		},
		{
			name: "a nodes limit reached", pools: []*v1.NodePool{nodeLimited},
			nodes: []*scheduling.Node{{Name: "node-limited-1", NodePool: "node-limited", Labels: map[string]string{"other": "x"},
				Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}, Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}},
			pod:  pod("1"),
			want: []string{"node-limited: LimitExceeded"},
			text: []string{"nodes limit 1: 1 in use by 1 nodes, and the smallest fitting instance type adds 1"},
		},
		{
			name: "a NodePool that cannot launch still has its labels checked", pools: []*v1.NodePool{defaultPool}, excluded: []*v1.NodePool{armPool},
			pod:  pod("1", selector("pod-type", "armapp")),
			want: []string{"cicd-armapps: NodePoolUnavailable", "default: LabelNotOffered"},
			text: []string{"NodeClassNotReady", "offered: armapp [ok]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &scheduling.Input{NodePools: tc.pools, InstanceTypes: types, Nodes: tc.nodes}
			all := slices.Concat(tc.pools, tc.excluded)
			var excluded []scheduling.Reason
			for _, np := range tc.excluded {
				excluded = append(excluded, scheduling.Reason{NodePool: np.Name, Code: "NodeClassNotReady", Message: "EC2NodeClass default is not ready"})
			}
			r, err := explain.Pod(in, all, excluded, tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, s := range append(tc.text, tc.outcome) {
				if !strings.Contains(b.String(), s) {
					t.Errorf("report does not contain %q:\n%s", s, b.String())
				}
			}
			if t.Failed() || testing.Verbose() {
				fmt.Println(b.String())
			}
		})
	}
}
