package instancetype

import (
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

func TestNameParts(t *testing.T) {
	tests := []struct {
		name string
		want [4]string
	}{
		{name: "m7i.large", want: [4]string{"m", "m7i", "7", "large"}},
		{name: "c6gn.xlarge", want: [4]string{"c", "c6gn", "6", "xlarge"}},
		{name: "t4g.medium", want: [4]string{"t", "t4g", "4", "medium"}},
		{name: "inf2.xlarge", want: [4]string{"inf", "inf2", "2", "xlarge"}},
		{name: "m5.metal", want: [4]string{"m", "m5", "5", "metal"}},
		{name: "u-6tb1.metal", want: [4]string{"u-", "u-6tb1", "6", "metal"}},
		{name: "x2iedn.24xlarge", want: [4]string{"x", "x2iedn", "2", "24xlarge"}},
		{name: "mac", want: [4]string{"mac", "mac", "", ""}},
	}
	for _, tt := range tests {
		c, f, g, s := NameParts(tt.name)
		if diff := cmp.Diff(tt.want, [4]string{c, f, g, s}); diff != "" {
			t.Errorf("NameParts(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestRequirements(t *testing.T) {
	base := map[string][]string{
		"node.kubernetes.io/instance-type":           {"t4g.medium"},
		"kubernetes.io/os":                           {"linux"},
		"kubernetes.io/arch":                         {"arm64"},
		"karpenter.k8s.aws/instance-cpu":             {"2"},
		"karpenter.k8s.aws/instance-memory":          {"4096"},
		"karpenter.k8s.aws/instance-category":        {"t"},
		"karpenter.k8s.aws/instance-family":          {"t4g"},
		"karpenter.k8s.aws/instance-generation":      {"4"},
		"karpenter.k8s.aws/instance-size":            {"medium"},
		"karpenter.k8s.aws/instance-tenancy":         {"default"},
		"karpenter.k8s.aws/instance-capability-flex": {"false"},
		"topology.kubernetes.io/zone":                {"us-west-2a", "us-west-2b"},
		"karpenter.sh/capacity-type":                 {"on-demand", "spot"},
	}
	with := func(extra map[string][]string) map[string][]string {
		out := maps.Clone(base)
		maps.Copy(out, extra)
		return out
	}
	tests := []struct {
		name      string
		info      Info
		offerings []*cloudprovider.Offering
		want      map[string][]string
	}{
		{
			name: "zone IDs unknown",
			info: Info{Name: "t4g.medium", VCPUs: 2, MemoryMiB: 4096, Architecture: "arm64"},
			offerings: []*cloudprovider.Offering{
				{Zone: "us-west-2b", CapacityType: "spot", Available: true},
				{Zone: "us-west-2a", CapacityType: "on-demand", Available: true},
				{Zone: "us-west-2c", CapacityType: "spot", Available: false},
			},
			want: base,
		},
		{
			name: "zone IDs of the available offerings",
			info: Info{Name: "t4g.medium", VCPUs: 2, MemoryMiB: 4096, Architecture: "arm64"},
			offerings: []*cloudprovider.Offering{
				{Zone: "us-west-2b", ZoneID: "usw2-az2", CapacityType: "spot", Available: true},
				{Zone: "us-west-2a", ZoneID: "usw2-az1", CapacityType: "on-demand", Available: true},
				{Zone: "us-west-2c", ZoneID: "usw2-az3", CapacityType: "spot", Available: false},
			},
			want: with(map[string][]string{"topology.k8s.aws/zone-id": {"usw2-az1", "usw2-az2"}}),
		},
		{
			name: "a flex type",
			info: Info{Name: "c7i-flex.large", VCPUs: 2, MemoryMiB: 4096, Architecture: "x86_64"},
			offerings: []*cloudprovider.Offering{
				{Zone: "us-west-2b", CapacityType: "spot", Available: true},
				{Zone: "us-west-2a", CapacityType: "on-demand", Available: true},
			},
			want: with(map[string][]string{
				"node.kubernetes.io/instance-type":           {"c7i-flex.large"},
				"kubernetes.io/arch":                         {"amd64"},
				"karpenter.k8s.aws/instance-category":        {"c"},
				"karpenter.k8s.aws/instance-family":          {"c7i-flex"},
				"karpenter.k8s.aws/instance-generation":      {"7"},
				"karpenter.k8s.aws/instance-size":            {"large"},
				"karpenter.k8s.aws/instance-capability-flex": {"true"},
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Requirements(tt.info, tt.offerings)); diff != "" {
				t.Errorf("Requirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnavailableOfferings(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	u := NewUnavailableOfferings(clk)
	u.MarkUnavailable("m5.large", "us-west-2a", "spot")
	seq := u.SeqNum()
	tests := []struct {
		after             time.Duration
		it, zone, capType string
		want              bool
	}{
		{after: 0, it: "m5.large", zone: "us-west-2a", capType: "spot", want: true},
		{after: 0, it: "m5.large", zone: "us-west-2a", capType: "on-demand", want: false},
		{after: 0, it: "m5.large", zone: "us-west-2b", capType: "spot", want: false},
		{after: UnavailableTTL - time.Second, it: "m5.large", zone: "us-west-2a", capType: "spot", want: true},
		{after: UnavailableTTL, it: "m5.large", zone: "us-west-2a", capType: "spot", want: false},
	}
	start := clk.Now()
	for _, tt := range tests {
		clk.SetTime(start.Add(tt.after))
		if got := u.IsUnavailable(tt.it, tt.zone, tt.capType); got != tt.want {
			t.Errorf("after %v IsUnavailable(%s, %s, %s) = %v, want %v", tt.after, tt.it, tt.zone, tt.capType, got, tt.want)
		}
	}
	if u.SeqNum() == seq {
		t.Error("SeqNum did not change when the entry expired")
	}
}
