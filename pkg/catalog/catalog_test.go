package catalog_test

import (
	"testing"
	"time"

	"github.com/joinerhq/joiner/pkg/catalog"
)

func TestLoad(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Types) < 500 {
		t.Errorf("catalogue has %d types, want at least 500", len(c.Types))
	}
	for _, it := range c.Types {
		if it.VCPU <= 0 || it.MemoryMiB <= 0 || it.MaxENIs <= 0 || it.IPv4PerENI <= 0 {
			t.Errorf("%s: missing facts: %+v", it.Name, it)
		}
		if it.BareMetal != (it.Hypervisor == "") {
			t.Errorf("%s: bare metal %v but hypervisor %q", it.Name, it.BareMetal, it.Hypervisor)
		}
		if len(it.Offerings) == 0 {
			t.Errorf("%s: offered nowhere", it.Name)
		}
	}
}

func TestFacts(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		vcpu      int32
		memoryMiB int64
		arch      string
		maxPods   int32
		gpus      int32
		localGB   int64
	}{
		{name: "m5.large", vcpu: 2, memoryMiB: 8192, arch: catalog.ArchX8664, maxPods: 29},
		{name: "t2.small", vcpu: 1, memoryMiB: 2048, arch: catalog.ArchX8664, maxPods: 11},
		{name: "t2.medium", vcpu: 2, memoryMiB: 4096, arch: catalog.ArchX8664, maxPods: 17},
		{name: "t4g.medium", vcpu: 2, memoryMiB: 4096, arch: catalog.ArchARM64, maxPods: 17},
		{name: "c6g.xlarge", vcpu: 4, memoryMiB: 8192, arch: catalog.ArchARM64, maxPods: 58},
		{name: "r6i.16xlarge", vcpu: 64, memoryMiB: 524288, arch: catalog.ArchX8664, maxPods: 737},
		{name: "g5.12xlarge", vcpu: 48, memoryMiB: 196608, arch: catalog.ArchX8664, maxPods: 737, gpus: 4, localGB: 3800},
		{name: "i3.large", vcpu: 2, memoryMiB: 15616, arch: catalog.ArchX8664, maxPods: 29, localGB: 475},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, ok := c.Type(tt.name)
			if !ok {
				t.Fatalf("%s not in the catalogue", tt.name)
			}
			if it.VCPU != tt.vcpu || it.MemoryMiB != tt.memoryMiB || it.Architecture != tt.arch || it.MaxPods() != tt.maxPods {
				t.Errorf("got vcpu %d mem %d arch %s maxPods %d", it.VCPU, it.MemoryMiB, it.Architecture, it.MaxPods())
			}
			var gpus int32
			if it.GPUs != nil {
				gpus = it.GPUs.Count
			}
			var local int64
			if it.LocalStorage != nil {
				local = it.LocalStorage.TotalGB()
			}
			if gpus != tt.gpus || local != tt.localGB {
				t.Errorf("got %d GPUs and %d GB local storage, want %d and %d", gpus, local, tt.gpus, tt.localGB)
			}
		})
	}
}

func TestSpotPriceMovesDeterministically(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	it, _ := c.Type("m5.large")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := map[float64]bool{}
	for h := range 24 {
		at := t0.Add(time.Duration(h) * time.Hour)
		p1, ok := it.SpotPrice("us-west-2a", at)
		p2, _ := it.SpotPrice("us-west-2a", at.Add(time.Minute))
		if !ok || p1 != p2 || p1 <= 0 || p1 >= it.OnDemandUSD["us-west-2"] {
			t.Fatalf("hour %d: spot %v then %v (ok %v), on-demand %v", h, p1, p2, ok, it.OnDemandUSD["us-west-2"])
		}
		seen[p1] = true
	}
	if len(seen) < 10 {
		t.Errorf("spot price took only %d values in a day", len(seen))
	}
	if _, ok := it.SpotPrice("us-east-9z", t0); ok {
		t.Error("spot price in an unknown zone")
	}
}

func TestRegions(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		region, location string
		zones            map[string]string // zone name -> zone id
	}{
		{"us-east-1", "US East (N. Virginia)", map[string]string{"us-east-1a": "use1-az4", "us-east-1e": "use1-az3", "us-east-1f": "use1-az5"}},
		{"us-east-2", "US East (Ohio)", map[string]string{"us-east-2a": "use2-az1", "us-east-2b": "use2-az2", "us-east-2c": "use2-az3"}},
		{"us-west-2", "US West (Oregon)", map[string]string{"us-west-2a": "usw2-az2", "us-west-2d": "usw2-az4"}},
		{"eu-west-1", "EU (Ireland)", map[string]string{"eu-west-1a": "euw1-az3", "eu-west-1c": "euw1-az2"}},
		{"eu-central-1", "EU (Frankfurt)", map[string]string{"eu-central-1a": "euc1-az2", "eu-central-1c": "euc1-az1"}},
		{"ap-southeast-1", "Asia Pacific (Singapore)", map[string]string{"ap-southeast-1a": "apse1-az1", "ap-southeast-1c": "apse1-az3"}},
	}
	for _, tt := range tests {
		t.Run(tt.region, func(t *testing.T) {
			r, ok := c.Region(tt.region)
			if !ok {
				t.Fatalf("%s is not in the catalogue", tt.region)
			}
			if r.Location != tt.location {
				t.Errorf("location %q, want %q", r.Location, tt.location)
			}
			ids := map[string]string{}
			for _, z := range r.Zones {
				ids[z.Name] = z.ID
			}
			for name, id := range tt.zones {
				if ids[name] != id {
					t.Errorf("zone %s has id %q, want %q", name, ids[name], id)
				}
			}
			// Every region offers the common types in every zone but a legacy one, and lacks
			// some type in some zone: the gaps a launch must route around.
			m5, _ := c.Type("m5.large")
			if got := len(m5.Offerings[tt.region]); got != len(r.Zones) {
				t.Errorf("m5.large in %d of %d zones", got, len(r.Zones))
			}
			gaps := 0
			for _, it := range c.Types {
				if n := len(it.Offerings[tt.region]); n > 0 && n < len(r.Zones) {
					gaps++
				}
				if _, ok := it.OnDemandUSD[tt.region]; !ok {
					t.Fatalf("%s has no on-demand price in %s", it.Name, tt.region)
				}
			}
			if gaps < 50 {
				t.Errorf("only %d types are offered in some zones of %s but not all", gaps, tt.region)
			}
		})
	}
	// Families AWS has not launched everywhere, and the legacy zone of us-east-1.
	m8i, _ := c.Type("m8i.large")
	if len(m8i.Offerings["eu-central-1"]) > 0 || len(m8i.Offerings["us-east-1"]) == 0 {
		t.Errorf("m8i.large offerings: %v", m8i.Offerings)
	}
	c7i, _ := c.Type("c7i.large")
	if c7i.Offered("us-east-1", "us-east-1e") {
		t.Error("c7i.large is offered in the legacy zone us-east-1e")
	}
	c5, _ := c.Type("c5.large")
	if !c5.Offered("us-east-1", "us-east-1e") {
		t.Error("c5.large is not offered in us-east-1e")
	}
}

// BenchmarkLoad measures parsing the embedded catalogue, which every new emulator world does.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := catalog.Load(); err != nil {
			b.Fatal(err)
		}
	}
}
