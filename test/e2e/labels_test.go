package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// TestWellKnownNodeLabels: pods selecting a zone by its ID (topology.k8s.aws/zone-id) run, on
// nodes in that zone that carry the labels Karpenter puts on its nodes: the zone, its ID and the
// region, the NodePool and EC2NodeClass, the capacity type, the instance type and its
// karpenter.k8s.aws/instance-* facts.
func TestWellKnownNodeLabels(t *testing.T) {
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "labels")
	nodeClass := &awsv1.EC2NodeClass{}
	eventually(t, 2*time.Minute, "the EC2NodeClass default with subnets", func(ctx context.Context) (bool, string, error) {
		if err := stack.Client.Get(ctx, client.ObjectKey{Name: "default"}, nodeClass); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		return len(nodeClass.Status.Subnets) > 1, fmt.Sprintf("subnets %v", nodeClass.Status.Subnets), nil
	})
	subnet := nodeClass.Status.Subnets[len(nodeClass.Status.Subnets)-1]
	if subnet.ZoneID == "" {
		t.Fatalf("subnet %s has no zone ID", subnet.ID)
	}
	pool := nodePool("labels", 10, "100")
	if err := stack.Apply(ctx, pool); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the NodePool Ready", func(ctx context.Context) (bool, string, error) {
		return nodePoolsReady(ctx, stack.Client, "labels")
	})
	byZoneID := func(spec *corev1.PodSpec) {
		spec.NodeSelector = map[string]string{awsv1.LabelTopologyZoneID: subnet.ZoneID, v1.NodePoolLabelKey: "labels"}
	}
	if err := stack.Apply(ctx, deployment("labels", "by-zone-id", 2, "500m", "512Mi", byZoneID)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, "the pods Running", func(ctx context.Context) (bool, string, error) {
		_, running, _, err := podCounts(ctx, stack.Client, "labels")
		return running == 2, fmt.Sprintf("%d/2 Running", running), err
	})
	nodes := &corev1.NodeList{}
	if err := stack.Client.List(ctx, nodes, client.MatchingLabels{v1.NodePoolLabelKey: "labels"}); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) == 0 {
		t.Fatal("no node of NodePool labels")
	}
	for _, n := range nodes.Items {
		want := map[string]string{
			corev1.LabelTopologyZone:          subnet.Zone,
			awsv1.LabelTopologyZoneID:         subnet.ZoneID,
			corev1.LabelTopologyRegion:        localstack.DefaultRegion,
			awsv1.LabelNodeClass:              "default",
			v1.CapacityTypeLabelKey:           v1.CapacityTypeOnDemand,
			awsv1.LabelInstanceTenancy:        "default",
			corev1.LabelOSStable:              "linux",
			corev1.LabelInstanceTypeStable:    "",
			corev1.LabelArchStable:            "",
			awsv1.LabelInstanceFamily:         "",
			awsv1.LabelInstanceCPU:            "",
			awsv1.LabelInstanceMemory:         "",
			awsv1.LabelInstanceCapabilityFlex: "",
		}
		for k, v := range want {
			got, ok := n.Labels[k]
			if !ok || v != "" && got != v {
				t.Errorf("node %s: label %s = %q (set %v), want %q", n.Name, k, got, ok, v)
			}
		}
	}
}
