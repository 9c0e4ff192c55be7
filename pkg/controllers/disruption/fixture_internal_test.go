package disruption

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/schedulinginput"
)

// fixture is a cluster built in memory for deciding without an API server: one on-demand
// WhenEmptyOrUnderutilized NodePool "default" (consolidateAfter 0s) in zone z1, whose instance
// types are c7i, m7i and r7i of 1 to 64 CPUs (2, 4 and 8 GiB per CPU; $0.04 per CPU and $0.005
// per GiB an hour), and initialized, consolidatable, Ready nodes of those types.
type fixture struct {
	now      time.Time
	nodePool *v1.NodePool
	snapshot *schedulinginput.Snapshot
	nodes    []*cluster.StateNode
}

func newFixture(budget string) *fixture {
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1.NodePoolSpec{
		Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: v1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}},
		}},
		Disruption: v1.Disruption{ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized, ConsolidateAfter: v1.MustParseNillableDuration("0s"),
			Budgets: []v1.Budget{{Nodes: budget}}},
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
	return &fixture{
		now:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		nodePool: np,
		snapshot: &schedulinginput.Snapshot{Input: scheduling.Input{NodePools: []*v1.NodePool{np}, InstanceTypes: its}, NodePools: map[string]*v1.NodePool{"default": np}},
	}
}

// node adds a node of the instance type (as "m7i.4x") named name, holding the pods.
func (f *fixture) node(name, instanceType string, pods ...*corev1.Pod) *cluster.StateNode {
	size, _ := strconv.Atoi(strings.TrimSuffix(instanceType[strings.Index(instanceType, ".")+1:], "x"))
	mem := map[byte]int{'c': 2, 'm': 4, 'r': 8}[instanceType[0]] * size
	labels := map[string]string{v1.NodePoolLabelKey: "default", v1.NodeInitializedLabelKey: "true", corev1.LabelInstanceTypeStable: instanceType,
		corev1.LabelTopologyZone: "z1", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, corev1.LabelHostname: name, corev1.LabelArchStable: "amd64"}
	alloc := resources(fmt.Sprint(size), fmt.Sprintf("%dGi", mem))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NodeStatus{
		Allocatable: alloc, Capacity: alloc,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}}
	cond := func(t string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(f.now.Add(-time.Hour))}
	}
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: v1.NodeClaimStatus{
		NodeName: name, Conditions: []metav1.Condition{cond(v1.ConditionTypeInitialized), cond(v1.ConditionTypeConsolidatable)},
	}}
	for _, pod := range pods {
		pod.Spec.NodeName = name
	}
	sn := &cluster.StateNode{Node: node, NodeClaim: nc, Pods: pods}
	f.nodes = append(f.nodes, sn)
	f.snapshot.Input.Nodes = append(f.snapshot.Input.Nodes, &scheduling.Node{Name: name, NodePool: "default", Labels: labels,
		Allocatable: alloc, Capacity: alloc, Pods: pods})
	return sn
}

// pod is a running pod named name requesting cpu and memory.
func pod(name, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: resources(cpu, memory)}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// pass is a disruption pass over the fixture, with nothing busy.
func (f *fixture) pass() *pass {
	ps := &pass{now: f.now, nodes: f.nodes, byName: map[string]*cluster.StateNode{}, snapshot: f.snapshot, busy: map[string]bool{}}
	ps.classify([]*v1.NodePool{f.nodePool}, nil, func(*cluster.StateNode, string) {})
	return ps
}

func resources(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110")}
}
