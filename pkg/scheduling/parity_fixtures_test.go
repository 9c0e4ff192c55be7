package scheduling_test

// The parity tests restate, in Joiner's own terms, the scheduling behaviours that upstream
// Karpenter's provisioning tests establish (docs/scheduling-parity.md maps each upstream case to
// the subtest here). Every case runs Solve and the independent checker, then asserts on the plan.

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// parCase is one upstream behaviour: an input (defaults: one NodePool "default" allowing both
// capacity types, parityTypes) and the assertions on its plan.
type parCase struct {
	name  string
	pools []*v1.NodePool
	types []*scheduling.InstanceType
	nodes []*scheduling.Node
	ds    []*corev1.Pod
	pods  []*corev1.Pod
	want  []parCheck
}

// parResult is a solved case.
type parResult struct {
	in   *scheduling.Input
	plan *scheduling.Plan
}

type parCheck func(t *testing.T, r parResult)

func runParity(t *testing.T, cases []parCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			in := &scheduling.Input{Pods: tc.pods, NodePools: tc.pools, InstanceTypes: tc.types, Nodes: tc.nodes, DaemonSetPods: tc.ds}
			if in.NodePools == nil {
				in.NodePools = []*v1.NodePool{anyPool("default")}
			}
			if in.InstanceTypes == nil {
				in.InstanceTypes = parityTypes()
			}
			r := parResult{in: in, plan: solveChecked(t, in)}
			if len(tc.want) == 0 {
				t.Fatal("case asserts nothing")
			}
			for _, w := range tc.want {
				w(t, r)
			}
		})
	}
}

// parityTypes: the generated linux families (1 to 12 vCPUs, amd64 and arm64, three zones, both
// capacity types), a windows type and a GPU type.
func parityTypes() []*scheduling.InstanceType {
	types := generatedTypes(120)
	win := customType("w5i.xlarge", "4", "16Gi", 0.5, map[string]string{corev1.LabelArchStable: v1.ArchitectureAmd64, corev1.LabelOSStable: "windows"})
	gpu := customType("g5i.2xlarge", "8", "32Gi", 1.2, map[string]string{corev1.LabelArchStable: v1.ArchitectureAmd64, corev1.LabelOSStable: "linux", awsv1.LabelInstanceGPUManufacturer: "nvidia"})
	gpu.Capacity[gpuResource] = resource.MustParse("2")
	gpu.Allocatable[gpuResource] = resource.MustParse("2")
	return append(types, win, gpu)
}

// customType is a type offered on demand and spot (at 40%) in every test zone.
func customType(name, cpu, mem string, price float64, labels map[string]string) *scheduling.InstanceType {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110")}
	it := &scheduling.InstanceType{Name: name, Labels: labels, Capacity: l, Allocatable: l.DeepCopy()}
	for _, z := range testZones {
		it.Offerings = append(it.Offerings,
			scheduling.Offering{Zone: z, CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true},
			scheduling.Offering{Zone: z, CapacityType: v1.CapacityTypeSpot, Price: price * 0.4, Available: true})
	}
	return it
}

// anyPool is a NodePool with no requirements beyond what its options add.
func anyPool(name string, opts ...func(*v1.NodePool)) *v1.NodePool {
	np := nodePool(name)
	np.Spec.Template.Spec.Requirements = nil
	for _, o := range opts {
		o(np)
	}
	return np
}

// poolReq adds a NodePool requirement; op is either API's operator type.
func poolReq[O ~string](key string, op O, values ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: v1.NodeSelectorOperator(op), Values: values})
	}
}

func poolMinValues[O ~string](key string, op O, minValues int, values ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: v1.NodeSelectorOperator(op), Values: values, MinValues: new(minValues)})
	}
}

func poolLabels(kv ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		if np.Spec.Template.Labels == nil {
			np.Spec.Template.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			np.Spec.Template.Labels[kv[i]] = kv[i+1]
		}
	}
}

func poolTaint(key, value string, effect corev1.TaintEffect) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = append(np.Spec.Template.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func poolStartupTaint(key string, effect corev1.TaintEffect) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.StartupTaints = append(np.Spec.Template.Spec.StartupTaints, corev1.Taint{Key: key, Effect: effect})
	}
}

func poolWeight(w int32) func(*v1.NodePool) { return func(np *v1.NodePool) { np.Spec.Weight = &w } }

func poolLimits(kv ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{}
		for i := 0; i+1 < len(kv); i += 2 {
			np.Spec.Limits[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
	}
}

func withNodeSelector(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

// withPreferred adds a preferred node affinity term of one expression.
func withPreferred(weight int32, key string, op corev1.NodeSelectorOperator, values ...string) podOpt {
	return func(p *corev1.Pod) {
		a := ensureAffinity(p)
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}})
	}
}

// withRequiredTerms replaces required node affinity by ORed terms, each of one expression.
func withRequiredTerms(terms ...corev1.NodeSelectorRequirement) podOpt {
	return func(p *corev1.Pod) {
		ns := &corev1.NodeSelector{}
		for _, e := range terms {
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{e}})
		}
		a := ensureAffinity(p)
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = ns
	}
}

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func withToleration(key, value string, effect corev1.TaintEffect) podOpt {
	return func(p *corev1.Pod) {
		op := corev1.TolerationOpEqual
		if value == "" {
			op = corev1.TolerationOpExists
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	}
}

func withHostPort(port int32, proto corev1.Protocol, ip string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: proto, HostIP: ip})
	}
}

func withRequest(name corev1.ResourceName, q string) podOpt {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests[name] = resource.MustParse(q) }
}

func withInit(cpu, mem string, sidecar bool) podOpt {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: fmt.Sprint("init-", len(p.Spec.InitContainers)), Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}
		if sidecar {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
}

// withSelectorSpread adds a topology spread whose selector is sel (nil for none).
func withSelectorSpread(key string, skew int32, when corev1.UnsatisfiableConstraintAction, sel *metav1.LabelSelector) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			TopologyKey: key, MaxSkew: skew, WhenUnsatisfiable: when, LabelSelector: sel})
	}
}

func matchApp(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

// withPodAffinityTo adds a required pod affinity (anti when anti) term selecting sel on key.
func withPodAffinityTo(key string, anti bool, sel *metav1.LabelSelector, namespaces ...string) podOpt {
	return func(p *corev1.Pod) {
		term := corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: sel, Namespaces: namespaces}
		a := ensureAffinity(p)
		if anti {
			if a.PodAntiAffinity == nil {
				a.PodAntiAffinity = &corev1.PodAntiAffinity{}
			}
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
			return
		}
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
	}
}

// withPreferredPodAffinityTo adds a preferred pod affinity (anti when anti) term.
func withPreferredPodAffinityTo(key string, anti bool, sel *metav1.LabelSelector) podOpt {
	return func(p *corev1.Pod) {
		term := corev1.WeightedPodAffinityTerm{Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: sel}}
		a := ensureAffinity(p)
		if anti {
			if a.PodAntiAffinity == nil {
				a.PodAntiAffinity = &corev1.PodAntiAffinity{}
			}
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, term)
			return
		}
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, term)
	}
}

func inNamespace(ns string) podOpt { return func(p *corev1.Pod) { p.Namespace = ns } }

// pods returns n pods named prefix-0.. built alike.
func pods(n int, prefix, cpu, mem string, opts ...podOpt) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = pod(fmt.Sprintf("%s-%d", prefix, i), cpu, mem, opts...)
	}
	return out
}

func podList(groups ...[]*corev1.Pod) []*corev1.Pod { return slices.Concat(groups...) }

func one(p *corev1.Pod) []*corev1.Pod { return []*corev1.Pod{p} }

// node is an existing node in zone z with hostname name, and its bound pods.
func zonedNode(name, zone, cpu, mem string, bound ...*corev1.Pod) *scheduling.Node {
	return existingNode(name, cpu, mem, map[string]string{corev1.LabelTopologyZone: zone, corev1.LabelHostname: name,
		v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, corev1.LabelArchStable: v1.ArchitectureAmd64, corev1.LabelOSStable: "linux"}, bound...)
}

// --- reading a plan ---

// where returns the node a pod went to: an existing node's name or a NodeClaim's, "" if none.
func (r parResult) where(podName string) string {
	for _, pl := range r.plan.Placements {
		if pl.Pod.Name == podName {
			return pl.Node
		}
	}
	for _, nc := range r.plan.NodeClaims {
		for _, p := range nc.Pods {
			if p.Name == podName {
				return nc.Name
			}
		}
	}
	return ""
}

func (r parResult) claimOf(podName string) *scheduling.NodeClaim {
	for i := range r.plan.NodeClaims {
		for _, p := range r.plan.NodeClaims[i].Pods {
			if p.Name == podName {
				return &r.plan.NodeClaims[i]
			}
		}
	}
	return nil
}

func (r parResult) instanceType(name string) *scheduling.InstanceType {
	for _, it := range r.in.InstanceTypes {
		if it.Name == name {
			return it
		}
	}
	return nil
}

// nodeLabels are the labels of the node a pod lands on: an existing node's, or those of the
// node its NodeClaim launches as (the cheapest option: Launch).
func (r parResult) nodeLabels(podName string) map[string]string {
	name := r.where(podName)
	for _, n := range r.in.Nodes {
		if n.Name == name {
			return n.Labels
		}
	}
	nc := r.claimOf(podName)
	if nc == nil {
		return nil
	}
	labels := maps.Clone(nc.Labels)
	if it := r.instanceType(nc.Launch.InstanceType); it != nil {
		maps.Copy(labels, it.Labels)
	}
	labels[corev1.LabelInstanceTypeStable] = nc.Launch.InstanceType
	labels[corev1.LabelTopologyZone] = nc.Launch.Zone
	labels[v1.CapacityTypeLabelKey] = nc.Launch.CapacityType
	labels[corev1.LabelHostname] = nc.Name
	return labels
}

func (r parResult) placed(podName string) bool { return r.where(podName) != "" }

// --- checks ---

func scheduled(names ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		for _, n := range names {
			if !r.placed(n) {
				t.Errorf("pod %s not scheduled; unschedulable: %v", n, summarize(r.plan).Unschedulable)
			}
		}
	}
}

func allScheduled() parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		if len(r.plan.Unschedulable) > 0 {
			t.Errorf("unschedulable: %v", summarize(r.plan).Unschedulable)
		}
	}
}

func notScheduled(names ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		for _, n := range names {
			if r.placed(n) {
				t.Errorf("pod %s scheduled on %s, want unschedulable", n, r.where(n))
			}
		}
	}
}

// unschedulableCount asserts how many pods are unschedulable.
func unschedulableCount(n int) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		if len(r.plan.Unschedulable) != n {
			t.Errorf("%d unschedulable %v, want %d", len(r.plan.Unschedulable), summarize(r.plan).Unschedulable, n)
		}
	}
}

// reason asserts the unschedulable pod has a reason with code for pool.
func reason(podName, pool string, code scheduling.ReasonCode) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		for _, u := range r.plan.Unschedulable {
			if u.Pod.Name != podName {
				continue
			}
			for _, rs := range u.Reasons {
				if rs.NodePool == pool && rs.Code == code {
					return
				}
			}
			t.Errorf("pod %s reasons %+v, want %s for %q", podName, u.Reasons, code, pool)
			return
		}
		t.Errorf("pod %s is not unschedulable", podName)
	}
}

func claims(n int) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		if len(r.plan.NodeClaims) != n {
			t.Errorf("%d NodeClaims %v, want %d", len(r.plan.NodeClaims), summarize(r.plan).Claims, n)
		}
	}
}

func sameNode(names ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		first := r.where(names[0])
		for _, n := range names {
			if w := r.where(n); w == "" || w != first {
				t.Errorf("pod %s on %q, want with %s on %q", n, w, names[0], first)
			}
		}
	}
}

func differentNodes(names ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		seen := map[string]string{}
		for _, n := range names {
			w := r.where(n)
			if w == "" {
				t.Errorf("pod %s not scheduled", n)
				continue
			}
			if o, ok := seen[w]; ok {
				t.Errorf("pods %s and %s share node %s", o, n, w)
			}
			seen[w] = n
		}
	}
}

func onNode(podName, nodeName string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		if w := r.where(podName); w != nodeName {
			t.Errorf("pod %s on %q, want %q", podName, w, nodeName)
		}
	}
}

func onNewNode(names ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		for _, n := range names {
			if r.claimOf(n) == nil {
				t.Errorf("pod %s on %q, want a new NodeClaim", n, r.where(n))
			}
		}
	}
}

// label asserts the node of each pod carries key with one of values.
func label(key string, values []string, podNames ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		for _, n := range podNames {
			l := r.nodeLabels(n)
			if l == nil {
				t.Errorf("pod %s not scheduled", n)
				continue
			}
			if v, ok := l[key]; !ok || !slices.Contains(values, v) {
				t.Errorf("pod %s: node label %s=%q (set %v), want one of %v", n, key, v, ok, values)
			}
		}
	}
}

func is(values ...string) []string { return values }

// noLabel asserts the node of each pod does not carry key.
func noLabel(key string, podNames ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		for _, n := range podNames {
			if v, ok := r.nodeLabels(n)[key]; ok {
				t.Errorf("pod %s: node has %s=%q, want none", n, key, v)
			}
		}
	}
}

// everyOption asserts that every instance-type option of each pod's NodeClaim satisfies ok.
func everyOption(what string, ok func(it *scheduling.InstanceType) bool, podNames ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		for _, n := range podNames {
			nc := r.claimOf(n)
			if nc == nil {
				t.Errorf("pod %s has no NodeClaim", n)
				continue
			}
			for _, name := range nc.InstanceTypes {
				if it := r.instanceType(name); it == nil || !ok(it) {
					t.Errorf("pod %s: option %s is not %s", n, name, what)
				}
			}
		}
	}
}

func typeLabel(key string, values ...string) func(*scheduling.InstanceType) bool {
	return func(it *scheduling.InstanceType) bool { return slices.Contains(values, it.Labels[key]) }
}

// custom wraps an ad-hoc assertion.
func custom(f func(t *testing.T, r parResult)) parCheck { return f }

// skew asserts the counts per domain of key (sorted; domain names aside) of every pod labelled
// app=app: those already bound to nodes and those the plan places, like upstream's ExpectSkew.
func skew(key, app string, want ...int) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		per := map[string]int{}
		for _, n := range r.in.Nodes {
			for _, p := range n.Pods {
				if v, ok := n.Labels[key]; ok && p.Labels["app"] == app && p.Namespace == "default" {
					per[v]++
				}
			}
		}
		for _, p := range r.in.Pods {
			if p.Labels["app"] != app || p.Namespace != "default" || !r.placed(p.Name) {
				continue
			}
			if v, ok := r.nodeLabels(p.Name)[key]; ok {
				per[v]++
			}
		}
		got := slices.Sorted(maps.Values(per))
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("pods of app %s per %s: %v, want counts %v", app, key, per, want)
		}
	}
}

// maxPerDomain asserts no domain of key holds more than max pods of app.
func maxPerDomain(key, app string, limit int) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		per := map[string]int{}
		for _, p := range r.in.Pods {
			if p.Labels["app"] == app && r.placed(p.Name) {
				per[r.nodeLabels(p.Name)[key]]++
			}
		}
		for d, n := range per {
			if n > limit {
				t.Errorf("%d pods of app %s in %s=%s, want at most %d (%v)", n, app, key, d, limit, per)
			}
		}
	}
}

func resource5() resource.Quantity { return resource.MustParse("5") }
