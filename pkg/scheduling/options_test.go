package scheduling_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

func TestPriceOptions(t *testing.T) {
	types := []*scheduling.InstanceType{
		{Name: "a", Offerings: []scheduling.Offering{
			{Zone: "z1", CapacityType: "spot", Price: 0.01, Available: false},
			{Zone: "z1", CapacityType: "on-demand", Price: 0.10, Available: true},
			{Zone: "z2", CapacityType: "spot", Price: 0.02, Available: true},
		}},
		{Name: "b", Offerings: []scheduling.Offering{{Zone: "z1", CapacityType: "on-demand", Price: 0.05, Available: true}}},
		{Name: "c", Offerings: []scheduling.Offering{{Zone: "z2", CapacityType: "on-demand", Price: 0.01, Available: true}}},
	}
	nc := &scheduling.NodeClaim{
		Name:          "n",
		InstanceTypes: []string{"a", "b", "c", "gone"},
		Requirements: []v1.NodeSelectorRequirementWithMinValues{
			{Key: corev1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"z1"}},
		},
	}
	got, err := scheduling.PriceOptions(nc, types)
	if err != nil {
		t.Fatal(err)
	}
	want := []scheduling.Launch{
		{InstanceType: "b", Zone: "z1", CapacityType: "on-demand", Price: 0.05},
		{InstanceType: "a", Zone: "z1", CapacityType: "on-demand", Price: 0.10},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PriceOptions (-want +got):\n%s", diff)
	}
	if p, ok := scheduling.OfferingPrice(types, "a", "z1", "spot"); !ok || p != 0.01 {
		t.Errorf("OfferingPrice(a, z1, spot) = %v, %v; want 0.01, true (unavailable offerings still have a price)", p, ok)
	}
	if _, ok := scheduling.OfferingPrice(types, "gone", "z1", "spot"); ok {
		t.Error("OfferingPrice of an unknown type found a price")
	}
}
