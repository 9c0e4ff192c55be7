package disruption

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// BenchmarkDecideSettled1000 is one full decision over 1,000 on-demand 4-CPU nodes with 10 pods
// each (10,000 pods) that fill them: no node can go, so every method runs to its end (multi-node
// binary search, then single-node over every candidate).
//
//	go test -run '^$' -bench BenchmarkDecide -benchtime 5x ./pkg/controllers/disruption/
func BenchmarkDecideSettled1000(b *testing.B) { benchmarkDecide(b, 1000, "390m", false) }

// BenchmarkDecideConsolidatable1000 is the same cluster a quarter full: multi-node consolidation
// finds its longest prefix.
func BenchmarkDecideConsolidatable1000(b *testing.B) { benchmarkDecide(b, 1000, "100m", true) }

func benchmarkDecide(b *testing.B, n int, cpu string, wantCommand bool) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1.NodePoolSpec{
		Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: v1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}},
		}},
		Disruption: v1.Disruption{ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized, ConsolidateAfter: v1.MustParseNillableDuration("0s"),
			Budgets: []v1.Budget{{Nodes: "10%"}}},
	}}
	var its []*scheduling.InstanceType
	for _, size := range []int{1, 2, 4, 8, 16, 32, 64} {
		for _, fam := range []string{"c", "m", "r"} {
			mem := map[string]int{"c": 2, "m": 4, "r": 8}[fam] * size
			price := float64(size)*0.04 + float64(mem)*0.005
			its = append(its, &scheduling.InstanceType{
				Name: fmt.Sprintf("%s7i.%dx", fam, size), Labels: map[string]string{corev1.LabelArchStable: "amd64"},
				Capacity: resources(fmt.Sprint(size), fmt.Sprintf("%dGi", mem)), Allocatable: resources(fmt.Sprint(size), fmt.Sprintf("%dGi", mem)),
				Offerings: []scheduling.Offering{{Zone: "z1", CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true}},
			})
		}
	}
	cond := func(t string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}
	}
	snap := &provisioning.Snapshot{Input: scheduling.Input{NodePools: []*v1.NodePool{np}, InstanceTypes: its}, NodePools: map[string]*v1.NodePool{"default": np}}
	var nodes []*cluster.StateNode
	for i := range n {
		name := fmt.Sprintf("node-%04d", i)
		labels := map[string]string{v1.NodePoolLabelKey: "default", v1.NodeInitializedLabelKey: "true", corev1.LabelInstanceTypeStable: "m7i.4x",
			corev1.LabelTopologyZone: "z1", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, corev1.LabelHostname: name, corev1.LabelArchStable: "amd64"}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NodeStatus{
			Allocatable: resources("4", "16Gi"), Capacity: resources("4", "16Gi"),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: v1.NodeClaimStatus{
			NodeName: name, Conditions: []metav1.Condition{cond(v1.ConditionTypeInitialized), cond(v1.ConditionTypeConsolidatable)},
		}}
		sn := &cluster.StateNode{Node: node, NodeClaim: nc}
		for j := range 10 {
			sn.Pods = append(sn.Pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, j), Namespace: "default", UID: types.UID(fmt.Sprintf("%s-%d", name, j)),
					Labels: map[string]string{"app": fmt.Sprint(j)}},
				Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
					Requests: resources(cpu, "1Gi")}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning},
			})
		}
		nodes = append(nodes, sn)
		snap.Input.Nodes = append(snap.Input.Nodes, &scheduling.Node{Name: name, NodePool: "default", Labels: labels,
			Allocatable: node.Status.Allocatable, Capacity: node.Status.Capacity, Pods: sn.Pods})
	}
	b.ReportAllocs()
	var d *decision
	cpu0 := cpuTime(b)
	for b.Loop() {
		ps := &pass{now: now, nodes: nodes, byName: map[string]*cluster.StateNode{}, snapshot: snap, busy: map[string]bool{}}
		ps.classify([]*v1.NodePool{np}, nil, func(*cluster.StateNode, string) {})
		var err error
		if d, err = ps.decide(); err != nil {
			b.Fatal(err)
		}
	}
	// CPU seconds per decision, of this process only: a figure the other programs sharing the
	// machine distort less than ns/op.
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	if got := d.cmd != nil; got != wantCommand {
		b.Fatalf("decided %v, want a command: %v", d.cmd, wantCommand)
	}
	if d.cmd != nil {
		b.ReportMetric(float64(len(d.cmd.candidates)), "candidates")
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func resources(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110")}
}
