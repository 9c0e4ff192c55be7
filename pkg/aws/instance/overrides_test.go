package instance

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

func instanceType(name, arch string, offerings ...*cloudprovider.Offering) *cloudprovider.InstanceType {
	return &cloudprovider.InstanceType{Name: name, Requirements: map[string][]string{corev1.LabelArchStable: {arch}}, Offerings: offerings}
}

func offering(zone, capacityType string, price float64, available bool) *cloudprovider.Offering {
	return &cloudprovider.Offering{Zone: zone, CapacityType: capacityType, Price: price, Available: available}
}

func TestOverrides(t *testing.T) {
	subnets := []Subnet{
		{ID: "subnet-a1", Zone: "us-west-2a", AvailableIPs: 10},
		{ID: "subnet-a2", Zone: "us-west-2a", AvailableIPs: 200},
		{ID: "subnet-b1", Zone: "us-west-2b", AvailableIPs: 50},
	}
	both := map[string]string{v1.ArchitectureAmd64: "joiner-amd64", v1.ArchitectureArm64: "joiner-arm64"}
	mixed := []*cloudprovider.InstanceType{
		instanceType("t4g.medium", v1.ArchitectureArm64, offering("us-west-2a", "on-demand", 0.0336, true), offering("us-west-2c", "on-demand", 0.0336, true)),
		instanceType("t3.medium", v1.ArchitectureAmd64, offering("us-west-2b", "on-demand", 0.0416, true), offering("us-west-2a", "on-demand", 0.0416, false)),
		instanceType("t3.small", v1.ArchitectureAmd64, offering("us-west-2a", "spot", 0.006, true)),
	}
	tests := []struct {
		name      string
		types     []*cloudprovider.InstanceType
		capType   string
		templates map[string]string
		want      []Override
		wantErr   string
	}{
		{
			name:  "S5: each architecture gets its own launch template; no subnet, unavailable and other capacity types left out",
			types: mixed, capType: "on-demand", templates: both,
			want: []Override{
				{InstanceType: "t4g.medium", Zone: "us-west-2a", SubnetID: "subnet-a2", LaunchTemplate: "joiner-arm64", Price: 0.0336},
				{InstanceType: "t3.medium", Zone: "us-west-2b", SubnetID: "subnet-b1", LaunchTemplate: "joiner-amd64", Price: 0.0416},
			},
		},
		{
			name:  "S5: without an arm64 AMI, arm64 types are never requested",
			types: mixed, capType: "on-demand", templates: map[string]string{v1.ArchitectureAmd64: "joiner-amd64"},
			want: []Override{{InstanceType: "t3.medium", Zone: "us-west-2b", SubnetID: "subnet-b1", LaunchTemplate: "joiner-amd64", Price: 0.0416}},
		},
		{
			name:  "no AMI of the right architecture at all",
			types: mixed[:1], capType: "on-demand", templates: map[string]string{v1.ArchitectureAmd64: "joiner-amd64"},
			wantErr: "insufficient capacity, building fleet overrides, no AMI matches the architecture of instance types [t4g.medium]",
		},
		{
			name:  "no offering of the capacity type",
			types: mixed[:2], capType: "spot", templates: both,
			wantErr: "insufficient capacity, building fleet overrides, no available spot offering",
		},
		{
			name:  "offerings only in zones without subnets",
			types: []*cloudprovider.InstanceType{instanceType("m5.large", v1.ArchitectureAmd64, offering("us-west-2c", "on-demand", 0.096, true))}, capType: "on-demand", templates: both,
			wantErr: "insufficient capacity, building fleet overrides, no subnet in the zones of the available offerings",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Overrides(tt.types, tt.capType, subnets, tt.templates)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !cloudprovider.IsInsufficientCapacityError(err) {
					t.Fatalf("err = %v, want InsufficientCapacityError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Overrides: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("overrides (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOverridesCappedToCheapest(t *testing.T) {
	var types []*cloudprovider.InstanceType
	for i := range 40 {
		types = append(types, instanceType(fmt.Sprintf("m%d.large", i), v1.ArchitectureAmd64,
			offering("us-west-2a", "spot", float64(100-i), true), offering("us-west-2b", "spot", float64(100-i)+0.5, true)))
	}
	got, err := Overrides(types, "spot", []Subnet{{ID: "a", Zone: "us-west-2a"}, {ID: "b", Zone: "us-west-2b"}}, map[string]string{v1.ArchitectureAmd64: "lt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxOverrides {
		t.Fatalf("got %d overrides, want %d", len(got), MaxOverrides)
	}
	if got[0].Price != 61 || got[len(got)-1].Price != 90.5 {
		t.Errorf("kept prices %v..%v, want the 60 cheapest, 61..90.5", got[0].Price, got[len(got)-1].Price)
	}
}

func TestCapacityType(t *testing.T) {
	types := []*cloudprovider.InstanceType{
		instanceType("a", v1.ArchitectureAmd64, offering("z", "spot", 1, false), offering("z", "on-demand", 2, true)),
		instanceType("b", v1.ArchitectureAmd64, offering("z", "reserved", 0, true)),
	}
	tests := []struct {
		allowed []string
		want    string
	}{
		{allowed: []string{"spot", "on-demand", "reserved"}, want: "reserved"},
		{allowed: []string{"spot", "on-demand"}, want: "on-demand"},
		{allowed: []string{"spot"}, want: ""},
	}
	for _, tt := range tests {
		if got := CapacityType(tt.allowed, types); got != tt.want {
			t.Errorf("CapacityType(%v) = %q, want %q", tt.allowed, got, tt.want)
		}
	}
}
