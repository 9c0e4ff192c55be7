package scheduling_test

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

var testZones = []string{"test-zone-a", "test-zone-b", "test-zone-c"}

// generatedTypes returns n instance types: families with 2, 4 and 8 GiB per vCPU, sizes from
// 1 to 192 vCPUs, amd64 and arm64, generations 5 to 8, on-demand and spot in three zones, priced
// per vCPU and GiB.
func generatedTypes(n int) []*scheduling.InstanceType {
	var out []*scheduling.InstanceType
	cpus := []int{1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192}
	for i := 0; len(out) < n; i++ {
		ratio := []int{2, 4, 8}[i%3]
		arch := []string{v1.ArchitectureAmd64, v1.ArchitectureArm64}[(i/3)%2]
		gen := 5 + (i/6)%4
		cpu := cpus[(i/24)%len(cpus)]
		variant := i / (24 * len(cpus))
		fam := fmt.Sprintf("%c%d%s%d", "cmr"[i%3], gen, map[string]string{"amd64": "i", "arm64": "g"}[arch], variant)
		name := fmt.Sprintf("%s.%dx", fam, cpu)
		mem := int64(cpu*ratio) << 30
		price := float64(cpu)*0.02 + float64(cpu*ratio)*0.005
		if arch == v1.ArchitectureArm64 {
			price *= 0.8
		}
		price *= 1 + float64(gen-5)*0.01 + float64(variant)*0.003
		it := &scheduling.InstanceType{
			Name: name,
			Labels: map[string]string{
				corev1.LabelArchStable:        arch,
				corev1.LabelOSStable:          "linux",
				awsv1.LabelInstanceFamily:     fam,
				awsv1.LabelInstanceGeneration: fmt.Sprint(gen),
				awsv1.LabelInstanceCPU:        fmt.Sprint(cpu),
				awsv1.LabelInstanceCategory:   string("cmr"[i%3]),
			},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: *resource.NewQuantity(int64(cpu), resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
				corev1.ResourcePods: *resource.NewQuantity(110, resource.DecimalSI),
			},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: *resource.NewMilliQuantity(int64(cpu)*1000-100, resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(mem-mem/16, resource.BinarySI),
				corev1.ResourcePods: *resource.NewQuantity(110, resource.DecimalSI),
			},
		}
		for _, z := range testZones {
			it.Offerings = append(it.Offerings,
				scheduling.Offering{Zone: z, CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true},
				scheduling.Offering{Zone: z, CapacityType: v1.CapacityTypeSpot, Price: price * 0.4, Available: true})
		}
		out = append(out, it)
	}
	return out
}

func nodePool(name string, opts ...func(*v1.NodePool)) *v1.NodePool {
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Kind: "EC2NodeClass", Group: "karpenter.k8s.aws", Name: "default"}
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.CapacityTypeLabelKey, Operator: v1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
	}
	for _, o := range opts {
		o(np)
	}
	return np
}

type podOpt func(*corev1.Pod)

func pod(name, cpu, mem string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{}}}
	p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func selfSelector(p *corev1.Pod) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}
}

func withSpread(key string, skew int32, when corev1.UnsatisfiableConstraintAction) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			TopologyKey: key, MaxSkew: skew, WhenUnsatisfiable: when, LabelSelector: selfSelector(p)})
	}
}

func ensureAffinity(p *corev1.Pod) *corev1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	return p.Spec.Affinity
}

func withAffinity(key string) podOpt {
	return func(p *corev1.Pod) {
		a := ensureAffinity(p)
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: selfSelector(p)})
	}
}

func withAntiAffinity(key string) podOpt {
	return func(p *corev1.Pod) {
		a := ensureAffinity(p)
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: selfSelector(p)})
	}
}

func withNodeAffinity(key string, op corev1.NodeSelectorOperator, values ...string) podOpt {
	return func(p *corev1.Pod) {
		a := ensureAffinity(p)
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}}
		}
		t := &a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0]
		t.MatchExpressions = append(t.MatchExpressions, corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values})
	}
}

// mixedPods is the benchmark mix: one fifth each of plain pods, zonal topology spread, hostname
// topology spread, zonal pod affinity and hostname pod anti-affinity, with sizes drawn from a
// fixed set. As in Karpenter's benchmark, the pods of each constrained kind share one label set,
// so the anti-affinity fifth needs one node per pod; plain pods come in groups of ten.
func mixedPods(n int, seed uint64) []*corev1.Pod {
	rng := rand.New(rand.NewPCG(seed, 1))
	cpus := []string{"100m", "250m", "500m", "1", "2"}
	mems := []string{"128Mi", "512Mi", "1Gi", "2Gi", "4Gi"}
	pods := make([]*corev1.Pod, 0, n)
	for i := 0; i < n; i++ {
		group := i / 10
		kind := group % 5
		app := fmt.Sprintf("app-%d", group)
		if kind > 0 {
			app = fmt.Sprintf("kind-%d", kind)
		}
		size := (group / 5) % len(cpus)
		if rng.IntN(4) == 0 {
			size = rng.IntN(len(cpus))
		}
		opts := []podOpt{withLabels("app", app)}
		switch kind {
		case 1:
			opts = append(opts, withSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule))
		case 2:
			opts = append(opts, withSpread(corev1.LabelHostname, 1, corev1.DoNotSchedule))
		case 3:
			opts = append(opts, withAffinity(corev1.LabelTopologyZone))
		case 4:
			opts = append(opts, withAntiAffinity(corev1.LabelHostname))
		}
		pods = append(pods, pod(fmt.Sprintf("p-%d", i), cpus[size], mems[size], opts...))
	}
	return pods
}
