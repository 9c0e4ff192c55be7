package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

func TestAllows(t *testing.T) {
	tests := []struct {
		op      v1.NodeSelectorOperator
		want    []string
		values  []string
		present bool
		ok      bool
	}{
		{v1.NodeSelectorOpIn, []string{"a", "b"}, []string{"b"}, true, true},
		{v1.NodeSelectorOpIn, []string{"a"}, []string{"b"}, true, false},
		{v1.NodeSelectorOpIn, []string{"a"}, nil, false, false},
		{v1.NodeSelectorOpNotIn, []string{"a"}, []string{"a"}, true, false},
		{v1.NodeSelectorOpNotIn, []string{"a"}, []string{"a", "b"}, true, true},
		{v1.NodeSelectorOpNotIn, []string{"a"}, nil, false, true},
		{v1.NodeSelectorOpExists, nil, []string{"x"}, true, true},
		{v1.NodeSelectorOpExists, nil, nil, false, false},
		{v1.NodeSelectorOpDoesNotExist, nil, nil, false, true},
		{v1.NodeSelectorOpDoesNotExist, nil, []string{"1"}, true, false},
		{v1.NodeSelectorOpGt, []string{"4"}, []string{"8"}, true, true},
		{v1.NodeSelectorOpGt, []string{"4"}, []string{"4"}, true, false},
		{v1.NodeSelectorOpGte, []string{"4"}, []string{"4"}, true, true},
		{v1.NodeSelectorOpLt, []string{"4"}, []string{"2"}, true, true},
		{v1.NodeSelectorOpLte, []string{"4"}, []string{"5"}, true, false},
		{v1.NodeSelectorOpGt, []string{"x"}, []string{"5"}, true, false},
		{v1.NodeSelectorOpGt, []string{"4"}, nil, false, false},
	}
	for _, tt := range tests {
		if got := allows(string(tt.op), tt.want, tt.values, tt.present); got != tt.ok {
			t.Errorf("allows(%s %v, %v present=%v) = %v, want %v", tt.op, tt.want, tt.values, tt.present, got, tt.ok)
		}
	}
}

func TestNarrow(t *testing.T) {
	it := &cloudprovider.InstanceType{
		Name: "m5.large",
		Requirements: map[string][]string{
			corev1.LabelInstanceTypeStable: {"m5.large"}, corev1.LabelArchStable: {"amd64"},
			"karpenter.k8s.aws/instance-cpu": {"2"}, awsv1.LabelTopologyZoneID: {"usw2-az1", "usw2-az2"},
		},
		Offerings: []*cloudprovider.Offering{
			{Zone: "us-west-2a", ZoneID: "usw2-az1", CapacityType: "spot", Available: true},
			{Zone: "us-west-2a", ZoneID: "usw2-az1", CapacityType: "on-demand", Available: true},
			{Zone: "us-west-2b", ZoneID: "usw2-az2", CapacityType: "spot", Available: true},
		},
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")},
	}
	type offering struct{ Zone, CapacityType string }
	tests := []struct {
		name     string
		reqs     []v1.NodeSelectorRequirementWithMinValues
		requests corev1.ResourceList
		want     []offering // nil: ruled out
	}{
		{name: "no requirements", want: []offering{{"us-west-2a", "spot"}, {"us-west-2a", "on-demand"}, {"us-west-2b", "spot"}}},
		{name: "zone and capacity type narrow offerings",
			reqs: []v1.NodeSelectorRequirementWithMinValues{req(corev1.LabelTopologyZone, v1.NodeSelectorOpIn, "us-west-2a"), req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpNotIn, "on-demand")},
			want: []offering{{"us-west-2a", "spot"}}},
		{name: "zone ID narrows offerings",
			reqs: []v1.NodeSelectorRequirementWithMinValues{req(awsv1.LabelTopologyZoneID, v1.NodeSelectorOpIn, "usw2-az2")},
			want: []offering{{"us-west-2b", "spot"}}},
		{name: "zone ID NotIn",
			reqs: []v1.NodeSelectorRequirementWithMinValues{req(awsv1.LabelTopologyZoneID, v1.NodeSelectorOpNotIn, "usw2-az1")},
			want: []offering{{"us-west-2b", "spot"}}},
		{name: "zone ID of no offering", reqs: []v1.NodeSelectorRequirementWithMinValues{req(awsv1.LabelTopologyZoneID, v1.NodeSelectorOpIn, "usw2-az4")}},
		{name: "other instance type", reqs: []v1.NodeSelectorRequirementWithMinValues{req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "c5.large")}},
		{name: "other architecture", reqs: []v1.NodeSelectorRequirementWithMinValues{req(corev1.LabelArchStable, v1.NodeSelectorOpIn, "arm64")}},
		{name: "cpu bound", reqs: []v1.NodeSelectorRequirementWithMinValues{req("karpenter.k8s.aws/instance-cpu", v1.NodeSelectorOpGt, "2")}},
		{name: "GPU required and absent", reqs: []v1.NodeSelectorRequirementWithMinValues{req("karpenter.k8s.aws/instance-gpu-count", v1.NodeSelectorOpExists)}},
		{name: "no GPU required and absent", reqs: []v1.NodeSelectorRequirementWithMinValues{req("karpenter.k8s.aws/instance-gpu-count", v1.NodeSelectorOpDoesNotExist)},
			want: []offering{{"us-west-2a", "spot"}, {"us-west-2a", "on-demand"}, {"us-west-2b", "spot"}}},
		{name: "labels types do not carry are the NodePool's", reqs: []v1.NodeSelectorRequirementWithMinValues{req(v1.NodePoolLabelKey, v1.NodeSelectorOpIn, "general")},
			want: []offering{{"us-west-2a", "spot"}, {"us-west-2a", "on-demand"}, {"us-west-2b", "spot"}}},
		{name: "no offering left", reqs: []v1.NodeSelectorRequirementWithMinValues{req(corev1.LabelTopologyZone, v1.NodeSelectorOpIn, "us-west-2c")}},
		{name: "requests too large", requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}},
		{name: "requests fit", requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
			want: []offering{{"us-west-2a", "spot"}, {"us-west-2a", "on-demand"}, {"us-west-2b", "spot"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := narrow(it, tt.reqs, tt.requests)
			var got []offering
			if n != nil {
				got = []offering{}
				for _, o := range n.Offerings {
					got = append(got, offering{o.Zone, o.CapacityType})
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("offerings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSupportedNodeClassesCarryTheirKind holds the CloudProvider contract that controllers match
// nodeClassRef against: each returned object names its apiVersion and kind.
func TestSupportedNodeClassesCarryTheirKind(t *testing.T) {
	for _, obj := range (&CloudProvider{}).GetSupportedNodeClasses() {
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Group != awsv1.Group || gvk.Kind != "EC2NodeClass" {
			t.Errorf("supported node class %T has GroupVersionKind %v, want karpenter.k8s.aws EC2NodeClass", obj, gvk)
		}
	}
}
