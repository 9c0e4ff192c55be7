package disruption_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

// TestHeldNodePoolIsNoReplacementTarget: a NodePool whose launches provisioning holds, because
// its nodes failed to join MaxLaunchesPerCause times for one cause with unchanged inputs, is
// offered no replacement: the node that only a cheaper node of that NodePool could replace is
// kept, and says there is no cheaper option. Without the hold the same node is replaced there.
func TestHeldNodePoolIsNoReplacementTarget(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held=%v", held), func(t *testing.T) {
			h := newController(t)
			h.cloud.InstanceTypes = []*cloudprovider.InstanceType{
				instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand),
				instanceType("c7i.small", 0.05, v1.CapacityTypeOnDemand),
			}
			source, target := fmt.Sprintf("hold-source-%v", held), fmt.Sprintf("hold-target-%v", held)
			// The candidate's own NodePool launches only its own type: the cheaper type is the
			// other NodePool's, which weighs more.
			newNodePool(t, source, func(np *v1.NodePool) {
				underutilizedPool(np)
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
					v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}})
			})
			np := newNodePool(t, target, func(np *v1.NodePool) {
				underutilizedPool(np)
				np.Spec.Weight = ptr.To[int32](10)
			})
			if held {
				holdLaunches(t, h, np)
			}
			nc, node := newNode(t, source, source, onDemand)
			newPod(t, source, node.Name, requesting("500m", source))

			res, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !held {
				if !strings.Contains(res.Decided, "replacing 1 node(s) with 1 (cheapest option c7i.small") {
					t.Fatalf("decided %q, want a replacement by c7i.small of nodepool %s; events %v", res.Decided, target, h.events.Events())
				}
				return
			}
			if res.Decided != "" {
				t.Fatalf("decided %q: a replacement on nodepool %s, whose nodes do not join", res.Decided, target)
			}
			want := "no cheaper option: the cheapest replacement, m7i.large on-demand, costs $0.1000/h"
			if e := h.events.Find(nc.Name, corev1.EventTypeNormal, disruption.ReasonDisruptionBlocked); !strings.Contains(e, want) {
				t.Errorf("event %q, want it to contain %q", e, want)
			}
		})
	}
}

// holdLaunches records on the NodePool MaxLaunchesPerCause join failures for one cause, with the
// inputs as they are now, as nodepool/status does when its nodes do not join.
func holdLaunches(t *testing.T, h *harness, np *v1.NodePool) {
	t.Helper()
	fp, err := joinfailure.Inputs(t.Context(), env.Client, h.cloud, np)
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	var f *joinfailure.Failure
	for i := range joinfailure.MaxLaunchesPerCause {
		raw, f = joinfailure.Record(f, fmt.Sprintf("%s-%d", np.Name, i), "NodeRoleNotAuthorized", "the kubelet is refused 401 Unauthorized; map the node role", fp, h.clock.Now())
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Annotations = map[string]string{v1.JoinFailureAnnotationKey: raw}
	if err := env.Client.Patch(t.Context(), np, patch); err != nil {
		t.Fatal(err)
	}
}

// TestNodeCostCountsInSavings: the operator's per-node cost counts in what a move saves, as
// provisioning weighs it: two nodes whose pods one larger node holds are replaced by it only
// because one node's cost goes away (the larger node's price alone exceeds the two's), and a
// replacement of one node by one cheaper type that saves 8% of the instance price is not taken
// when the per-node cost makes that under MinReplacementSavings of what the node costs.
func TestNodeCostCountsInSavings(t *testing.T) {
	xlarge := instanceType("m7i.xlarge", 0.21, v1.CapacityTypeOnDemand)
	xlarge.Capacity = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("40"),
	}
	for _, tt := range []struct {
		name     string
		types    []*cloudprovider.InstanceType
		nodes    []string // the pods' CPU, one node each
		nodeCost float64
		want     string // in the decision; "" for none
	}{
		{name: "merge-without-node-cost", types: []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand), xlarge},
			nodes: []string{"1500m", "1500m"}},
		{name: "merge-with-node-cost", types: []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand), xlarge},
			nodes: []string{"1500m", "1500m"}, nodeCost: 0.10,
			want: "replacing 2 node(s) with 1 (cheapest option m7i.xlarge on-demand at $0.3100/h), saving $0.0900/h"},
		{name: "replace-without-node-cost", types: []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand), instanceType("c7i.small", 0.092, v1.CapacityTypeOnDemand)},
			nodes: []string{"500m"}, want: "replacing 1 node(s) with 1 (cheapest option c7i.small on-demand at $0.0920/h)"},
		{name: "replace-with-node-cost", types: []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand), instanceType("c7i.small", 0.092, v1.CapacityTypeOnDemand)},
			nodes: []string{"500m"}, nodeCost: 0.10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, env.Client, cluster.New(env.Client, false), disruption.WithNodeCost(tt.nodeCost))
			h.cloud.InstanceTypes = tt.types
			pool := "nodecost-" + tt.name
			newNodePool(t, pool, func(np *v1.NodePool) {
				underutilizedPool(np)
				np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "100%"}}
			})
			for i, cpu := range tt.nodes {
				name := fmt.Sprintf("%s-%d", pool, i)
				_, node := newNode(t, pool, name, onDemand)
				ready(t, node)
				newPod(t, name, node.Name, requesting(cpu, name))
			}
			res, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && res.Decided != "" || !strings.Contains(res.Decided, tt.want) {
				t.Fatalf("decided %q, want %q; events %v", res.Decided, tt.want, h.events.Events())
			}
		})
	}
}
