package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// withExtra returns customType with extra allocatable (and capacity) resources.
func withExtra(it *scheduling.InstanceType, kv ...string) *scheduling.InstanceType {
	for i := 0; i+1 < len(kv); i += 2 {
		it.Capacity[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		it.Allocatable[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return it
}

func amd64Linux() map[string]string {
	return map[string]string{corev1.LabelArchStable: v1.ArchitectureAmd64, corev1.LabelOSStable: "linux"}
}

// TestParityInstanceTypes: which instance types a pod's constraints admit (upstream "Instance
// Type Compatibility" and its "Provider Specific Labels").
func TestParityInstanceTypes(t *testing.T) {
	twoGPUs := []*scheduling.InstanceType{
		withExtra(customType("gpu-a", "4", "16Gi", 1, amd64Linux()), "example.com/gpu-a", "25"),
		withExtra(customType("gpu-b", "4", "16Gi", 1, amd64Linux()), "example.com/gpu-b", "25"),
		customType("plain", "4", "16Gi", 0.2, amd64Linux()),
	}
	runParity(t, []parCase{
		{name: "more than any instance type has is not scheduled",
			pods: one(pod("p", "1", "2Ti")), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonNoFit)}},
		{name: "pods of different architectures get different nodes",
			pods: []*corev1.Pod{pod("amd", "1", "1Gi", withNodeSelector(corev1.LabelArchStable, v1.ArchitectureAmd64)), pod("arm", "1", "1Gi", withNodeSelector(corev1.LabelArchStable, v1.ArchitectureArm64))},
			want: []parCheck{differentNodes("amd", "arm"), label(corev1.LabelArchStable, is(v1.ArchitectureAmd64), "amd"), label(corev1.LabelArchStable, is(v1.ArchitectureArm64), "arm")}},
		{name: "node affinity on instance type excludes the others",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelInstanceTypeStable, opIn, "m6i0.2x", "m6g0.2x"))),
			want: []parCheck{everyOption("one of the two", func(it *scheduling.InstanceType) bool { return it.Name == "m6i0.2x" || it.Name == "m6g0.2x" }, "p")}},
		{name: "node affinity on operating system excludes the others",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelOSStable, opIn, "windows"))),
			want: []parCheck{everyOption("windows", typeLabel(corev1.LabelOSStable, "windows"), "p")}},
		{name: "NodePool architecture excludes the others", pools: []*v1.NodePool{anyPool("default", poolReq(corev1.LabelArchStable, opIn, v1.ArchitectureArm64))},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{everyOption("arm64", typeLabel(corev1.LabelArchStable, v1.ArchitectureArm64), "p")}},
		{name: "pods of different operating systems get different nodes",
			pods: []*corev1.Pod{pod("lin", "1", "1Gi", withNodeSelector(corev1.LabelOSStable, "linux")), pod("win", "1", "1Gi", withNodeSelector(corev1.LabelOSStable, "windows"))},
			want: []parCheck{differentNodes("lin", "win"), label(corev1.LabelOSStable, is("windows"), "win"), label(corev1.LabelOSStable, is("linux"), "lin")}},
		{name: "pods selecting different instance types get different nodes",
			pods: []*corev1.Pod{pod("a", "1", "1Gi", withNodeSelector(corev1.LabelInstanceTypeStable, "m6i0.2x")), pod("b", "1", "1Gi", withNodeSelector(corev1.LabelInstanceTypeStable, "m6g0.2x"))},
			want: []parCheck{differentNodes("a", "b"), label(corev1.LabelInstanceTypeStable, is("m6i0.2x"), "a"), label(corev1.LabelInstanceTypeStable, is("m6g0.2x"), "b")}},
		{name: "pods selecting different zones get different nodes",
			pods: []*corev1.Pod{pod("a", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneA)), pod("b", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneB))},
			want: []parCheck{differentNodes("a", "b"), label(corev1.LabelTopologyZone, is(zoneA), "a"), label(corev1.LabelTopologyZone, is(zoneB), "b")}},
		{name: "resources no single type offers together go to different nodes", types: twoGPUs,
			pods: []*corev1.Pod{pod("a", "100m", "128Mi", withRequest("example.com/gpu-a", "1")), pod("b", "100m", "128Mi", withRequest("example.com/gpu-b", "1"))},
			want: []parCheck{differentNodes("a", "b"), label(corev1.LabelInstanceTypeStable, is("gpu-a"), "a"), label(corev1.LabelInstanceTypeStable, is("gpu-b"), "b")}},
		{name: "a pod needing resources no single type offers is not scheduled", types: twoGPUs,
			pods: one(pod("p", "100m", "128Mi", withRequest("example.com/gpu-a", "1"), withRequest("example.com/gpu-b", "1"))),
			want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonNoFit)}},
		{name: "provider label selectors filter instance types",
			pods: []*corev1.Pod{pod("big", "1", "1Gi", withNodeSelector(awsv1.LabelInstanceCPU, "12")), pod("small", "500m", "512Mi", withNodeSelector(awsv1.LabelInstanceCPU, "1"))},
			want: []parCheck{label(awsv1.LabelInstanceCPU, is("12"), "big"), label(awsv1.LabelInstanceCPU, is("1"), "small"), differentNodes("big", "small")}},
		{name: "incompatible provider labels are not scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeSelector(awsv1.LabelInstanceCPU, "12", awsv1.LabelInstanceCategory, "nope"))), want: []parCheck{notScheduled("p")}},
		{name: "optional provider labels select the types that have them",
			pods: one(pod("p", "1", "1Gi", withNodeSelector(awsv1.LabelInstanceGPUManufacturer, "nvidia"))), want: []parCheck{label(corev1.LabelInstanceTypeStable, is("g5i.2xlarge"), "p")}},
		{name: "DoesNotExist on an optional provider label avoids the types that have it",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(awsv1.LabelInstanceGPUManufacturer, opDoesNotExist))),
			want: []parCheck{everyOption("without a GPU", func(it *scheduling.InstanceType) bool {
				_, ok := it.Labels[awsv1.LabelInstanceGPUManufacturer]
				return !ok
			}, "p")}},
		{name: "a pool without offerings for the selected type does not schedule",
			pools: []*v1.NodePool{anyPool("default", poolReq(corev1.LabelInstanceTypeStable, opIn, "does-not-exist"))},
			pods:  one(pod("p", "1", "1Gi")), want: []parCheck{notScheduled("p")}},
		{name: "pool requirements that conflict with every type leave all pods pending",
			pools: []*v1.NodePool{anyPool("default", poolReq(corev1.LabelArchStable, opIn, v1.ArchitectureArm64), poolReq(corev1.LabelOSStable, opIn, "windows"))},
			pods:  []*corev1.Pod{pod("a", "1", "1Gi"), pod("b", "1", "1Gi")}, want: []parCheck{notScheduled("a", "b"), unschedulableCount(2)}},
		{name: "a pool zone no type is offered in schedules nothing",
			pools: []*v1.NodePool{anyPool("default", poolReq(corev1.LabelTopologyZone, opIn, "test-zone-z"))},
			pods:  one(pod("p", "1", "1Gi")), want: []parCheck{notScheduled("p")}},
	})
}

// TestParityBinpacking: how pods are packed onto new nodes (upstream "Binpacking").
func TestParityBinpacking(t *testing.T) {
	sized := []*scheduling.InstanceType{
		customType("small", "2", "4Gi", 0.1, amd64Linux()),
		customType("medium", "4", "8Gi", 0.2, amd64Linux()),
		customType("large", "8", "16Gi", 0.4, amd64Linux()),
	}
	fewPods := []*scheduling.InstanceType{customType("tiny-pods", "8", "16Gi", 0.1, amd64Linux())}
	fewPods[0].Allocatable[corev1.ResourcePods] = resource.MustParse("3")
	priced := []*scheduling.InstanceType{
		customType("medium", "2", "2Gi", 3, amd64Linux()),
		customType("small", "1", "1Gi", 2, amd64Linux()),
		customType("large", "4", "4Gi", 1, amd64Linux()),
	}
	overhead := func(p *corev1.Pod) {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	}
	runParity(t, []parCase{
		{name: "a small pod gets the smallest instance", types: sized,
			pods: one(pod("p", "100m", "128Mi")), want: []parCheck{label(corev1.LabelInstanceTypeStable, is("small"), "p")}},
		{name: "a small pod gets the cheapest type of all",
			pods: one(pod("p", "100m", "128Mi")), want: []parCheck{custom(func(t *testing.T, r parResult) {
				nc := r.claimOf("p")
				for _, it := range r.in.InstanceTypes {
					for _, o := range it.Offerings {
						if o.Available && o.Price < nc.Launch.Price {
							t.Errorf("launch %+v, but %s in %s/%s costs %v", nc.Launch, it.Name, o.Zone, o.CapacityType, o.Price)
						}
					}
				}
			})}},
		{name: "pod overhead (runtime class) is counted", types: sized,
			pods: one(pod("p", "1500m", "128Mi", overhead)), want: []parCheck{label(corev1.LabelInstanceTypeStable, is("medium"), "p")}},
		{name: "several small pods share the smallest type that holds them", types: sized,
			pods: pods(5, "p", "100m", "128Mi"), want: []parCheck{claims(1), label(corev1.LabelInstanceTypeStable, is("small"), "p-0")}},
		{name: "a full node leads to a new one", types: sized,
			pods: pods(3, "p", "7", "1Gi"), want: []parCheck{claims(3), differentNodes("p-0", "p-1", "p-2")}},
		{name: "small and large pods pack together", types: sized,
			pods: podList(pods(4, "big", "3500m", "1Gi"), pods(4, "small", "400m", "256Mi")),
			want: []parCheck{claims(2), label(corev1.LabelInstanceTypeStable, is("large"), "big-0", "big-2", "small-0")}},
		{name: "a large and a small pod get different types when they cannot share", types: sized,
			pods: []*corev1.Pod{pod("big", "7500m", "1Gi"), pod("small", "1", "128Mi")},
			want: []parCheck{label(corev1.LabelInstanceTypeStable, is("large"), "big"), label(corev1.LabelInstanceTypeStable, is("small"), "small")}},
		{name: "a zero request of a resource no type has is fine",
			pods: one(pod("p", "1", "1Gi", withRequest("foo.com/weird-resources", "0"))), want: []parCheck{scheduled("p")}},
		{name: "a pod beyond every type's memory is not scheduled",
			pods: one(pod("p", "100m", "2Ti")), want: []parCheck{notScheduled("p")}},
		{name: "the pods allocatable caps a node", types: fewPods,
			pods: pods(5, "p", "100m", "128Mi"), want: []parCheck{claims(2), allScheduled()}},
		{name: "init container requests are counted", types: sized,
			pods: one(pod("p", "100m", "128Mi", withInit("3", "1Gi", false))), want: []parCheck{label(corev1.LabelInstanceTypeStable, is("medium"), "p")}},
		{name: "an init container larger than every type is not scheduled", types: sized,
			pods: one(pod("p", "100m", "128Mi", withInit("10", "1Gi", false))), want: []parCheck{notScheduled("p")}},
		{name: "every type that fits is an option, the cheapest launched", types: priced,
			pods: one(pod("p", "100m", "128Mi")), want: []parCheck{label(corev1.LabelInstanceTypeStable, is("large"), "p"), custom(func(t *testing.T, r parResult) {
				if got := len(r.claimOf("p").InstanceTypes); got != 3 {
					t.Errorf("%d options %v, want all 3", got, r.claimOf("p").InstanceTypes)
				}
			})}},
	})
}

// TestParityPodResources: requests of init containers, sidecars and GPUs (upstream provisioning
// suite).
func TestParityPodResources(t *testing.T) {
	sized := []*scheduling.InstanceType{
		customType("small", "2", "4Gi", 0.1, amd64Linux()),
		customType("medium", "4", "8Gi", 0.2, amd64Linux()),
		customType("large", "8", "16Gi", 0.4, amd64Linux()),
	}
	runParity(t, []parCase{
		{name: "pods are provisioned", pods: one(pod("p", "1", "1Gi")), want: []parCheck{scheduled("p"), claims(1)}},
		{name: "many pods are provisioned", pods: pods(10, "p", "1", "1Gi"), want: []parCheck{allScheduled()}},
		{name: "pods with supported node selectors are provisioned",
			pods: []*corev1.Pod{pod("a", "1", "1Gi", withNodeSelector(v1.NodePoolLabelKey, "default")), pod("b", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneB)),
				pod("c", "1", "1Gi", withNodeSelector(corev1.LabelArchStable, v1.ArchitectureArm64))},
			want: []parCheck{allScheduled()}},
		{name: "pods with supported node affinities are provisioned",
			pods: []*corev1.Pod{pod("a", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, zoneA)), pod("b", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opNotIn, zoneA))},
			want: []parCheck{allScheduled(), label(corev1.LabelTopologyZone, is(zoneA), "a"), label(corev1.LabelTopologyZone, is(zoneB, zoneC), "b")}},
		{name: "accelerator requests get an accelerator type",
			pods: one(pod("p", "1", "1Gi", withRequest(gpuResource, "1"))), want: []parCheck{label(corev1.LabelInstanceTypeStable, is("g5i.2xlarge"), "p")}},
		{name: "accelerators run out per node",
			pods: pods(3, "p", "1", "1Gi", withRequest(gpuResource, "1")), want: []parCheck{claims(2), allScheduled()}},
		{name: "init container first, then a sidecar: the larger of the two phases", types: sized,
			pods: one(pod("p", "1", "128Mi", withInit("3", "128Mi", false), withInit("500m", "128Mi", true))),
			want: []parCheck{label(corev1.LabelInstanceTypeStable, is("medium"), "p"), requests("p", "3")}},
		{name: "sidecar first, smaller init container: containers plus sidecar", types: sized,
			pods: one(pod("p", "2", "128Mi", withInit("1", "128Mi", true), withInit("500m", "128Mi", false))),
			want: []parCheck{requests("p", "3")}},
		{name: "sidecar first, bigger init container: init plus sidecar", types: sized,
			pods: one(pod("p", "1", "128Mi", withInit("1", "128Mi", true), withInit("5", "128Mi", false))),
			want: []parCheck{requests("p", "6"), label(corev1.LabelInstanceTypeStable, is("large"), "p")}},
		{name: "max of containers and init containers", types: sized,
			pods: one(pod("p", "1", "1Gi", withInit("2", "128Mi", false))), want: []parCheck{requests("p", "2")}},
		{name: "combined max too large for any node is not scheduled", types: sized,
			pods: one(pod("p", "10", "1Gi", withInit("1", "128Mi", false))), want: []parCheck{notScheduled("p")}},
		{name: "pod-level requests replace the containers'", types: sized,
			pods: one(pod("p", "100m", "128Mi", withPodLevel("3", "1Gi"))), want: []parCheck{requests("p", "3"), label(corev1.LabelInstanceTypeStable, is("medium"), "p")}},
		{name: "pod-level requests leave resources they do not name to the containers", types: sized,
			pods: one(pod("p", "3", "128Mi", withPodLevel("", "1Gi"))), want: []parCheck{requests("p", "3"), label(corev1.LabelInstanceTypeStable, is("medium"), "p")}},
		{name: "no requests at all is schedulable",
			pods: one(func() *corev1.Pod {
				p := pod("p", "1", "1Gi")
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
				return p
			}()), want: []parCheck{scheduled("p")}},
	})
}

// withPodLevel sets pod-level requests (spec.resources); "" leaves a resource out.
func withPodLevel(cpu, mem string) podOpt {
	return func(p *corev1.Pod) {
		req := corev1.ResourceList{}
		if cpu != "" {
			req[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			req[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: req}
	}
}

// requests asserts the CPU the pod's NodeClaim requests (pods alone, no daemonsets in the case).
func requests(podName, cpu string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		nc := r.claimOf(podName)
		if nc == nil {
			t.Errorf("pod %s has no NodeClaim", podName)
			return
		}
		got := nc.Requests[corev1.ResourceCPU]
		if want := resource.MustParse(cpu); got.Cmp(want) != 0 {
			t.Errorf("NodeClaim of %s requests cpu %s, want %s", podName, got.String(), cpu)
		}
	}
}
