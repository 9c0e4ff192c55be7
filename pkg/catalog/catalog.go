package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"time"
)

//go:generate go run ./gen -out catalog.json

//go:embed catalog.json
var catalogJSON []byte

// Architectures as EC2 names them.
const (
	ArchX8664 = "x86_64"
	ArchARM64 = "arm64"
)

// Hypervisors as EC2 names them; bare-metal types have none ("").
const (
	HypervisorNitro = "nitro"
	HypervisorXen   = "xen"
)

// Catalog is the whole catalogue. Treat it as read-only: values returned by its methods share
// memory with it.
type Catalog struct {
	// Regions lists the regions the catalogue covers with their zones.
	Regions []Region `json:"regions"`
	// Types lists every instance type, sorted by name.
	Types []InstanceType `json:"types"`

	byName map[string]int
}

// Region is one AWS region and its availability zones.
type Region struct {
	Name string `json:"name"`
	// Location is the region's name in the Price List ("US East (N. Virginia)").
	Location string `json:"location"`
	Zones    []Zone `json:"zones"`
}

// Zone is an availability zone: its name (us-west-2a) and its stable id (usw2-az1).
type Zone struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// InstanceType holds the facts EC2 reports for one instance type, its offerings and prices.
type InstanceType struct {
	Name         string  `json:"name"`
	Family       string  `json:"family"`
	Architecture string  `json:"arch"`
	Manufacturer string  `json:"manufacturer"`
	ClockGHz     float64 `json:"clockGHz,omitempty"`
	VCPU         int32   `json:"vcpu"`
	// Cores is the default core count; VCPU/Cores threads per core.
	Cores      int32  `json:"cores"`
	MemoryMiB  int64  `json:"memoryMiB"`
	Hypervisor string `json:"hypervisor,omitempty"`
	BareMetal  bool   `json:"bareMetal,omitempty"`
	Burstable  bool   `json:"burstable,omitempty"`
	// CurrentGeneration is false for families AWS lists as previous generation.
	CurrentGeneration bool `json:"currentGeneration"`
	// MaxENIs and IPv4PerENI bound the pods the VPC CNI can place (ENIs*(IPs-1)+2).
	MaxENIs            int32         `json:"maxENIs"`
	IPv4PerENI         int32         `json:"ipv4PerENI"`
	NetworkPerformance string        `json:"network"`
	EFA                bool          `json:"efa,omitempty"`
	GPUs               *GPUs         `json:"gpus,omitempty"`
	LocalStorage       *LocalStorage `json:"storage,omitempty"`
	// Offerings maps a region to the zones (by name) where the type can be launched.
	Offerings map[string][]string `json:"offerings"`
	// OnDemandUSD maps a region to the on-demand hourly price (Linux, shared tenancy).
	OnDemandUSD map[string]float64 `json:"onDemand"`
	// SpotBaseUSD maps a zone name to the mean spot price around which SpotPrice moves.
	SpotBaseUSD map[string]float64 `json:"spotBase"`
}

// GPUs describes the accelerators of a type.
type GPUs struct {
	Name         string `json:"name"`
	Manufacturer string `json:"manufacturer"`
	Count        int32  `json:"count"`
	// MemoryMiB is the memory of one GPU.
	MemoryMiB int64 `json:"memoryMiB"`
}

// LocalStorage describes instance-store disks.
type LocalStorage struct {
	Disks int32 `json:"disks"`
	// SizeGB is the size of one disk.
	SizeGB int64 `json:"sizeGB"`
	// Type is "ssd" or "hdd".
	Type string `json:"type"`
	NVMe bool   `json:"nvme"`
}

// TotalGB is the instance-store capacity in GB.
func (s LocalStorage) TotalGB() int64 { return int64(s.Disks) * s.SizeGB }

// MaxPods is the pod capacity the VPC CNI gives the type without prefix delegation.
func (t InstanceType) MaxPods() int32 { return t.MaxENIs*(t.IPv4PerENI-1) + 2 }

// Load parses the embedded catalogue. Each call returns a fresh Catalog.
func Load() (*Catalog, error) {
	c := &Catalog{}
	if err := json.Unmarshal(catalogJSON, c); err != nil {
		return nil, fmt.Errorf("decoding the embedded catalogue, %w", err)
	}
	c.index()
	return c, nil
}

func (c *Catalog) index() {
	sort.Slice(c.Types, func(i, j int) bool { return c.Types[i].Name < c.Types[j].Name })
	c.byName = make(map[string]int, len(c.Types))
	for i, t := range c.Types {
		c.byName[t.Name] = i
	}
}

// Type returns the named instance type.
func (c *Catalog) Type(name string) (InstanceType, bool) {
	i, ok := c.byName[name]
	if !ok {
		return InstanceType{}, false
	}
	return c.Types[i], true
}

// Region returns the named region.
func (c *Catalog) Region(name string) (Region, bool) {
	for _, r := range c.Regions {
		if r.Name == name {
			return r, true
		}
	}
	return Region{}, false
}

// Offered reports whether the type can be launched in the zone of the region.
func (t InstanceType) Offered(region, zone string) bool {
	for _, z := range t.Offerings[region] {
		if z == zone {
			return true
		}
	}
	return false
}

// SpotPrice is the spot price of the type in the zone at time at. It moves hourly within ±15% of
// the type's base price in that zone, deterministically, so the same time always gives the same
// price. ok is false where the type is not offered.
func (t InstanceType) SpotPrice(zone string, at time.Time) (price float64, ok bool) {
	base, ok := t.SpotBaseUSD[zone]
	if !ok {
		return 0, false
	}
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s/%s/%d", t.Name, zone, at.Unix()/3600)
	swing := float64(h.Sum64()%3001)/10000 - 0.15 // [-0.15, +0.15]
	return math.Round(base*(1+swing)*1e4) / 1e4, true
}
