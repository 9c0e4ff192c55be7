package state

import (
	"slices"
	"testing"
)

// TestNextPrivateIP: addresses come from the subnet's own CIDR, skip what AWS reserves, are
// never handed out twice while held, run out, and come back when released.
func TestNextPrivateIP(t *testing.T) {
	a := &Subnet{CIDR: "10.32.0.0/20", AvailableIPs: 4091}
	b := &Subnet{CIDR: "10.32.16.0/20", AvailableIPs: 4091}
	if got := a.NextPrivateIP(); got != "10.32.0.4" {
		t.Errorf("first address of 10.32.0.0/20 = %s, want 10.32.0.4 (.0-.3 are reserved)", got)
	}
	if got := b.NextPrivateIP(); got != "10.32.16.4" {
		t.Errorf("first address of 10.32.16.0/20 = %s, want 10.32.16.4: subnets of one VPC must not share addresses", got)
	}
	if a.AvailableIPs != 4090 {
		t.Errorf("AvailableIPs = %d after one address, want 4090", a.AvailableIPs)
	}

	small := &Subnet{CIDR: "10.0.0.0/28", AvailableIPs: 11}
	seen := map[string]bool{}
	for range 11 {
		ip := small.NextPrivateIP()
		if ip == "" || seen[ip] || ip == "10.0.0.15" {
			t.Fatalf("NextPrivateIP() = %q after %v: want a new address other than the broadcast", ip, seen)
		}
		seen[ip] = true
	}
	if ip := small.NextPrivateIP(); ip != "" || small.AvailableIPs != 0 {
		t.Fatalf("NextPrivateIP() of a full /28 = %q with %d available, want none", ip, small.AvailableIPs)
	}
	small.ReleasePrivateIP("10.0.0.9")
	if ip := small.NextPrivateIP(); ip != "10.0.0.9" {
		t.Errorf("NextPrivateIP() after releasing 10.0.0.9 = %q, want it back", ip)
	}
}

func TestSeedCarvesDefaultSubnetsFromTheVPC(t *testing.T) {
	for _, tt := range []struct {
		vpc  string
		n    int
		want []string
	}{
		{"10.20.0.0/16", 3, []string{"10.20.0.0/20", "10.20.16.0/20", "10.20.32.0/20"}},
		{"192.168.4.0/24", 4, []string{"192.168.4.0/26", "192.168.4.64/26", "192.168.4.128/26", "192.168.4.192/26"}},
		{"10.0.0.0/28", 2, nil},
	} {
		var got []string
		for _, p := range zoneSubnets(tt.vpc, tt.n) {
			got = append(got, p.String())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("zoneSubnets(%s, %d) = %v, want %v", tt.vpc, tt.n, got, tt.want)
		}
	}
}
