package manifests

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/manifest"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// fuzzCatalogue is two small instance types in two zones.
func fuzzCatalogue() []*scheduling.InstanceType {
	rl := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("20")}
	}
	it := func(name, cpu, mem string, price float64) *scheduling.InstanceType {
		return &scheduling.InstanceType{Name: name, Labels: map[string]string{corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"}, Capacity: rl(cpu, mem), Allocatable: rl(cpu, mem),
			Offerings: []scheduling.Offering{{Zone: "a", CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true}, {Zone: "b", CapacityType: v1.CapacityTypeSpot, Price: price / 3, Available: true}}}
	}
	return []*scheduling.InstanceType{it("small", "2", "4Gi", 0.1), it("large", "8", "32Gi", 0.4)}
}

// FuzzSimulateInput reads arbitrary manifests as `joiner simulate` does: decoding, typing and
// building the solver's input never panic and every rejection is an error with a message; an
// input of a few pods also solves without a panic.
func FuzzSimulateInput(f *testing.F) {
	f.Add([]byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]}}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n"))
	f.Add([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {karpenter.sh/nodepool: default}}\nstatus: {allocatable: {cpu: \"2\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: n1, containers: [{name: c, image: x}]}\n"))
	f.Add([]byte("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {template: {spec: {containers: [{name: c, image: x, resources: {requests: {memory: 1Pi}}}]}}}\n"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: k, operator: Gt, values: [x]}]}]}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := manifest.DecodeBytes(data)
		if err != nil {
			return
		}
		in, err := Input(docs, fuzzCatalogue())
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(in.Pods) > 8 || len(in.NodePools) > 4 || len(in.Nodes) > 4 {
			return // keep each execution fast
		}
		if _, err := scheduling.Solve(in); err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
	})
}
