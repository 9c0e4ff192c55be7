// Command gen writes the instance-type catalogue (catalog.json) from the facts below.
//
// The facts are written by hand from AWS's public instance-type documentation and price lists,
// rounded: sizes, vCPU and memory per size, processor, hypervisor, ENI and IPv4-per-ENI limits by
// size, GPUs, instance storage. Offerings and spot prices are derived deterministically (a hash of
// the type and zone) so that the catalogue has realistic gaps without being random per run.
//
//	go run ./pkg/catalog/gen -out pkg/catalog/catalog.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/joinerhq/joiner/pkg/catalog"
)

func main() {
	out := flag.String("out", "catalog.json", "file to write")
	flag.Parse()
	c := build()
	data, err := encode(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d instance types to %s\n", len(c.Types), *out)
}

// encode writes one instance type per line so that diffs of the checked-in file stay readable.
func encode(c *catalog.Catalog) ([]byte, error) {
	var b bytes.Buffer
	regions, err := json.Marshal(c.Regions)
	if err != nil {
		return nil, fmt.Errorf("encoding regions, %w", err)
	}
	fmt.Fprintf(&b, "{\"regions\":%s,\n\"types\":[\n", regions)
	for i, t := range c.Types {
		line, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encoding %s, %w", t.Name, err)
		}
		b.Write(line)
		if i < len(c.Types)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return b.Bytes(), nil
}

// regions are the regions the catalogue covers: every commercial region where the families
// below are launched, with their zones as a new account sees them (zones closed to new accounts,
// such as us-west-1a and ap-northeast-1b, are absent). Zone ids are fixed per account in AWS;
// these are one account's mapping.
var regions = []catalog.Region{
	{Name: "us-east-1", Location: "US East (N. Virginia)", Zones: []catalog.Zone{
		{Name: "us-east-1a", ID: "use1-az4"}, {Name: "us-east-1b", ID: "use1-az6"}, {Name: "us-east-1c", ID: "use1-az1"},
		{Name: "us-east-1d", ID: "use1-az2"}, {Name: "us-east-1e", ID: "use1-az3"}, {Name: "us-east-1f", ID: "use1-az5"},
	}},
	{Name: "us-east-2", Location: "US East (Ohio)", Zones: []catalog.Zone{
		{Name: "us-east-2a", ID: "use2-az1"}, {Name: "us-east-2b", ID: "use2-az2"}, {Name: "us-east-2c", ID: "use2-az3"},
	}},
	{Name: "us-west-1", Location: "US West (N. California)", Zones: []catalog.Zone{
		{Name: "us-west-1b", ID: "usw1-az3"}, {Name: "us-west-1c", ID: "usw1-az1"},
	}},
	{Name: "us-west-2", Location: "US West (Oregon)", Zones: []catalog.Zone{
		{Name: "us-west-2a", ID: "usw2-az2"}, {Name: "us-west-2b", ID: "usw2-az1"},
		{Name: "us-west-2c", ID: "usw2-az3"}, {Name: "us-west-2d", ID: "usw2-az4"},
	}},
	{Name: "ca-central-1", Location: "Canada (Central)", Zones: []catalog.Zone{
		{Name: "ca-central-1a", ID: "cac1-az1"}, {Name: "ca-central-1b", ID: "cac1-az2"}, {Name: "ca-central-1d", ID: "cac1-az4"},
	}},
	{Name: "eu-west-1", Location: "EU (Ireland)", Zones: []catalog.Zone{
		{Name: "eu-west-1a", ID: "euw1-az3"}, {Name: "eu-west-1b", ID: "euw1-az1"},
		{Name: "eu-west-1c", ID: "euw1-az2"},
	}},
	{Name: "eu-west-2", Location: "EU (London)", Zones: []catalog.Zone{
		{Name: "eu-west-2a", ID: "euw2-az2"}, {Name: "eu-west-2b", ID: "euw2-az3"}, {Name: "eu-west-2c", ID: "euw2-az1"},
	}},
	{Name: "eu-west-3", Location: "EU (Paris)", Zones: []catalog.Zone{
		{Name: "eu-west-3a", ID: "euw3-az1"}, {Name: "eu-west-3b", ID: "euw3-az2"}, {Name: "eu-west-3c", ID: "euw3-az3"},
	}},
	{Name: "eu-central-1", Location: "EU (Frankfurt)", Zones: []catalog.Zone{
		{Name: "eu-central-1a", ID: "euc1-az2"}, {Name: "eu-central-1b", ID: "euc1-az3"}, {Name: "eu-central-1c", ID: "euc1-az1"},
	}},
	{Name: "eu-north-1", Location: "EU (Stockholm)", Zones: []catalog.Zone{
		{Name: "eu-north-1a", ID: "eun1-az1"}, {Name: "eu-north-1b", ID: "eun1-az2"}, {Name: "eu-north-1c", ID: "eun1-az3"},
	}},
	{Name: "ap-south-1", Location: "Asia Pacific (Mumbai)", Zones: []catalog.Zone{
		{Name: "ap-south-1a", ID: "aps1-az1"}, {Name: "ap-south-1b", ID: "aps1-az3"}, {Name: "ap-south-1c", ID: "aps1-az2"},
	}},
	{Name: "ap-southeast-1", Location: "Asia Pacific (Singapore)", Zones: []catalog.Zone{
		{Name: "ap-southeast-1a", ID: "apse1-az1"}, {Name: "ap-southeast-1b", ID: "apse1-az2"}, {Name: "ap-southeast-1c", ID: "apse1-az3"},
	}},
	{Name: "ap-southeast-2", Location: "Asia Pacific (Sydney)", Zones: []catalog.Zone{
		{Name: "ap-southeast-2a", ID: "apse2-az1"}, {Name: "ap-southeast-2b", ID: "apse2-az3"}, {Name: "ap-southeast-2c", ID: "apse2-az2"},
	}},
	{Name: "ap-northeast-1", Location: "Asia Pacific (Tokyo)", Zones: []catalog.Zone{
		{Name: "ap-northeast-1a", ID: "apne1-az4"}, {Name: "ap-northeast-1c", ID: "apne1-az1"}, {Name: "ap-northeast-1d", ID: "apne1-az2"},
	}},
	{Name: "ap-northeast-2", Location: "Asia Pacific (Seoul)", Zones: []catalog.Zone{
		{Name: "ap-northeast-2a", ID: "apne2-az1"}, {Name: "ap-northeast-2b", ID: "apne2-az2"},
		{Name: "ap-northeast-2c", ID: "apne2-az3"}, {Name: "ap-northeast-2d", ID: "apne2-az4"},
	}},
	{Name: "sa-east-1", Location: "South America (Sao Paulo)", Zones: []catalog.Zone{
		{Name: "sa-east-1a", ID: "sae1-az1"}, {Name: "sa-east-1b", ID: "sae1-az2"}, {Name: "sa-east-1c", ID: "sae1-az3"},
	}},
}

// regionPriceFactor is each region's on-demand price relative to us-west-2 (m5.large's ratio,
// rounded), which the other types follow.
var regionPriceFactor = map[string]float64{
	"us-east-1": 1.0, "us-east-2": 1.0, "us-west-1": 1.167, "us-west-2": 1.0, "ca-central-1": 1.115,
	"eu-west-1": 1.11, "eu-west-2": 1.156, "eu-west-3": 1.167, "eu-central-1": 1.198, "eu-north-1": 1.063,
	"ap-south-1": 1.052, "ap-southeast-1": 1.25, "ap-southeast-2": 1.25, "ap-northeast-1": 1.292,
	"ap-northeast-2": 1.229, "sa-east-1": 1.594,
}

// regionBreadth scales, per region, the share of zones offering a family that is not offered
// everywhere: smaller regions get the newer and rarer families in fewer zones.
var regionBreadth = map[string]float64{
	"us-west-1": 0.8, "ca-central-1": 0.8, "eu-west-3": 0.8, "eu-north-1": 0.85, "ap-south-1": 0.85,
	"ap-northeast-2": 0.85, "sa-east-1": 0.7,
}

// launchedIn lists the regions of the families that AWS has not launched everywhere; the other
// families are in every region of the catalogue.
var launchedIn = map[string][]string{
	"8i":   {"us-east-1", "us-east-2", "us-west-2"},
	"8g":   {"us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "eu-north-1", "eu-west-2", "ap-southeast-1", "ap-southeast-2", "ap-northeast-1", "ap-south-1"},
	"8gd":  {"us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"},
	"g6e":  {"us-east-1", "us-east-2", "us-west-2", "eu-central-1", "eu-north-1", "ap-northeast-1"},
	"p5":   {"us-east-1", "us-east-2", "us-west-2", "eu-north-1", "ap-northeast-1", "ap-south-1"},
	"p4d":  {"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"},
	"g4ad": {"us-east-1", "us-east-2", "us-west-2", "ca-central-1", "eu-west-1", "eu-central-1", "ap-northeast-1", "ap-southeast-1"},
	"d3en": {"us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "eu-north-1", "ap-northeast-1"},
	"i4g":  {"us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-southeast-2", "ap-northeast-1"},
	"6in":  {"us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-northeast-1"},
	"7gd":  {"us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "eu-west-2", "ap-southeast-1", "ap-southeast-2", "ap-northeast-1", "ap-south-1"},
}

// legacyZones offer only the older families: zones full to capacity that AWS no longer extends
// with new hardware (use1-az3).
var legacyZones = map[string]bool{"us-east-1e": true}

// launched reports whether the family is available in the region at all.
func launched(family, region string) bool {
	for suffix, in := range launchedIn {
		key := family
		if len(family) > 1 && (family[0] == 'c' || family[0] == 'm' || family[0] == 'r') && family[1] >= '0' && family[1] <= '9' {
			key = family[1:] // c8i, m8i and r8i share one entry
		}
		if key == suffix {
			return slices.Contains(in, region)
		}
	}
	return true
}

// legacy reports whether a family is old enough to be offered in a legacy zone: the fifth
// generation of c, m and r (Intel), and t2, t3, i3, p3.
func legacy(family string) bool {
	switch family {
	case "t2", "t3", "i3", "p3":
		return true
	}
	return len(family) >= 2 && (family[0] == 'c' || family[0] == 'm' || family[0] == 'r') && family[1] == '5' && !strings.Contains(family, "a")
}

// size is one rung of a family's size ladder.
type size struct {
	name string
	vcpu int32
}

// Standard size ladders; a family picks the rungs it has.
var (
	sMedium = size{"medium", 1}
	sLarge  = size{"large", 2}
	sXL     = size{"xlarge", 4}
	s2XL    = size{"2xlarge", 8}
	s4XL    = size{"4xlarge", 16}
	s8XL    = size{"8xlarge", 32}
	s9XL    = size{"9xlarge", 36}
	s12XL   = size{"12xlarge", 48}
	s16XL   = size{"16xlarge", 64}
	s18XL   = size{"18xlarge", 72}
	s24XL   = size{"24xlarge", 96}
	s32XL   = size{"32xlarge", 128}
	s48XL   = size{"48xlarge", 192}
	s96XL   = size{"96xlarge", 384}
)

func metal(name string, vcpu int32) size { return size{name, vcpu} }

// enis returns the Nitro ENI and IPv4-per-ENI limits by vCPU count, which is how AWS sizes them
// for the c/m/r families (m5.large 3×10, m5.xlarge 4×15, m5.4xlarge 8×30, m5.16xlarge 15×50).
func enis(vcpu int32) (int32, int32) {
	switch {
	case vcpu <= 1:
		return 2, 4
	case vcpu <= 2:
		return 3, 10
	case vcpu <= 8:
		return 4, 15
	case vcpu <= 48:
		return 8, 30
	default:
		return 15, 50
	}
}

// family holds the facts shared by every size of a general-purpose family.
type family struct {
	name         string
	arch         string
	manufacturer string
	clock        float64
	memPerVCPU   float64 // GiB
	sizes        []size
	// pricePerVCPU is the on-demand USD per vCPU-hour in us-west-2.
	pricePerVCPU float64
	// nvmePerVCPU is the instance-store GB per vCPU for "d" variants.
	nvmePerVCPU int64
	network     string // performance of the largest non-metal size
	smt         bool   // two threads per core
	prevGen     bool
	efa         bool
	// availability is the share of zones (0..1) that offer a given size of the family.
	availability float64
}

var (
	gen5Intel = []size{sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL, metal("metal", 96)}
	c5Intel   = []size{sLarge, sXL, s2XL, s4XL, s9XL, s12XL, s18XL, s24XL, metal("metal", 96)}
	gen5AMD   = []size{sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL}
	graviton2 = []size{sMedium, sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, metal("metal", 64)}
	gen6Intel = []size{sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL, s32XL, metal("metal", 128)}
	gen6AMD   = []size{sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL, s32XL, s48XL, metal("metal", 192)}
	gen7Intel = []size{sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL, s48XL, metal("metal-24xl", 96), metal("metal-48xl", 192)}
	flex      = []size{sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL}
	gen7AMD   = []size{sMedium, sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL, s32XL, s48XL, metal("metal-48xl", 192)}
	graviton4 = []size{sMedium, sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL, s48XL, metal("metal-24xl", 96), metal("metal-48xl", 192)}
	gen8Intel = []size{sLarge, sXL, s2XL, s4XL, s8XL, s12XL, s16XL, s24XL, s32XL, s48XL, s96XL, metal("metal-48xl", 192), metal("metal-96xl", 384)}
)

func generalFamilies() []family {
	var fs []family
	add := func(prefix string, mem float64, price float64, f family) {
		f.name = prefix + f.name
		f.memPerVCPU = mem
		f.pricePerVCPU *= price
		fs = append(fs, f)
	}
	for _, cls := range []struct {
		prefix string
		mem    float64
		price  float64 // USD per vCPU-hour of the gen-5 Intel base
	}{{"c", 2, 0.0425}, {"m", 4, 0.048}, {"r", 8, 0.063}} {
		p, m, x := cls.prefix, cls.mem, cls.price
		intel5 := gen5Intel
		if p == "c" {
			intel5 = c5Intel
		}
		add(p, m, x, family{name: "5", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.1, sizes: intel5, pricePerVCPU: 1, network: "25 Gigabit", smt: true, availability: 1})
		add(p, m, x, family{name: "5d", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.1, sizes: intel5, pricePerVCPU: 1.13, nvmePerVCPU: 50, network: "25 Gigabit", smt: true, availability: 0.9})
		add(p, m, x, family{name: "5n", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.1, sizes: intel5, pricePerVCPU: 1.25, network: "100 Gigabit", smt: true, efa: true, availability: 0.75})
		add(p, m, x, family{name: "5a", arch: catalog.ArchX8664, manufacturer: "AMD", clock: 2.5, sizes: gen5AMD, pricePerVCPU: 0.9, network: "20 Gigabit", smt: true, availability: 0.9})
		add(p, m, x, family{name: "5ad", arch: catalog.ArchX8664, manufacturer: "AMD", clock: 2.5, sizes: gen5AMD, pricePerVCPU: 1.02, nvmePerVCPU: 75, network: "20 Gigabit", smt: true, availability: 0.7})
		add(p, m, x, family{name: "6g", arch: catalog.ArchARM64, manufacturer: "AWS", clock: 2.5, sizes: graviton2, pricePerVCPU: 0.8, network: "25 Gigabit", availability: 1})
		add(p, m, x, family{name: "6gd", arch: catalog.ArchARM64, manufacturer: "AWS", clock: 2.5, sizes: graviton2, pricePerVCPU: 0.91, nvmePerVCPU: 59, network: "25 Gigabit", availability: 0.8})
		add(p, m, x, family{name: "6i", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.5, sizes: gen6Intel, pricePerVCPU: 1, network: "50 Gigabit", smt: true, efa: true, availability: 1})
		add(p, m, x, family{name: "6id", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.5, sizes: gen6Intel, pricePerVCPU: 1.2, nvmePerVCPU: 59, network: "50 Gigabit", smt: true, efa: true, availability: 0.85})
		add(p, m, x, family{name: "6in", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.5, sizes: gen6Intel, pricePerVCPU: 1.34, network: "200 Gigabit", smt: true, efa: true, availability: 0.7})
		add(p, m, x, family{name: "6a", arch: catalog.ArchX8664, manufacturer: "AMD", clock: 3.6, sizes: gen6AMD, pricePerVCPU: 0.9, network: "50 Gigabit", smt: true, efa: true, availability: 1})
		add(p, m, x, family{name: "7g", arch: catalog.ArchARM64, manufacturer: "AWS", clock: 2.6, sizes: graviton2, pricePerVCPU: 0.85, network: "30 Gigabit", efa: true, availability: 1})
		add(p, m, x, family{name: "7gd", arch: catalog.ArchARM64, manufacturer: "AWS", clock: 2.6, sizes: graviton2, pricePerVCPU: 1.08, nvmePerVCPU: 59, network: "30 Gigabit", efa: true, availability: 0.75})
		add(p, m, x, family{name: "7i", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.2, sizes: gen7Intel, pricePerVCPU: 1.05, network: "50 Gigabit", smt: true, efa: true, availability: 1})
		if p != "r" { // there is no r7i-flex
			add(p, m, x, family{name: "7i-flex", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.2, sizes: flex, pricePerVCPU: 1.0, network: "Up to 25 Gigabit", smt: true, availability: 0.9})
		}
		add(p, m, x, family{name: "7a", arch: catalog.ArchX8664, manufacturer: "AMD", clock: 3.7, sizes: gen7AMD, pricePerVCPU: 1.2, network: "50 Gigabit", efa: true, availability: 0.9})
		add(p, m, x, family{name: "8g", arch: catalog.ArchARM64, manufacturer: "AWS", clock: 2.8, sizes: graviton4, pricePerVCPU: 0.94, network: "50 Gigabit", efa: true, availability: 0.8})
		add(p, m, x, family{name: "8gd", arch: catalog.ArchARM64, manufacturer: "AWS", clock: 2.8, sizes: graviton4, pricePerVCPU: 1.1, nvmePerVCPU: 59, network: "50 Gigabit", efa: true, availability: 0.6})
		add(p, m, x, family{name: "8i", arch: catalog.ArchX8664, manufacturer: "Intel", clock: 3.9, sizes: gen8Intel, pricePerVCPU: 1.1, network: "100 Gigabit", smt: true, efa: true, availability: 0.6})
	}
	// Simplification: c5n shares c5's ladder (AWS stops c5n at 18xlarge).
	return fs
}

// entry is an instance type being built and the share of zones that offer it.
type entry struct {
	t     catalog.InstanceType
	share float64
}

func build() *catalog.Catalog {
	var entries []entry
	for _, f := range generalFamilies() {
		for _, s := range f.sizes {
			entries = append(entries, general(f, s))
		}
	}
	entries = append(entries, burstable()...)
	entries = append(entries, storage()...)
	entries = append(entries, gpu()...)
	types := make([]catalog.InstanceType, 0, len(entries))
	for _, e := range entries {
		place(&e.t, e.share)
		types = append(types, e.t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i].Name < types[j].Name })
	return &catalog.Catalog{Regions: regions, Types: types}
}

func general(f family, s size) entry {
	isMetal := strings.HasPrefix(s.name, "metal")
	t := catalog.InstanceType{
		Name: f.name + "." + s.name, Family: f.name, Architecture: f.arch, Manufacturer: f.manufacturer,
		ClockGHz: f.clock, VCPU: s.vcpu, Cores: s.vcpu, MemoryMiB: int64(math.Round(float64(s.vcpu) * f.memPerVCPU * 1024)),
		Hypervisor: catalog.HypervisorNitro, BareMetal: isMetal, CurrentGeneration: !f.prevGen,
		NetworkPerformance: network(f.network, s.vcpu),
		EFA:                f.efa && (s.vcpu >= 96 || isMetal),
	}
	if f.smt && s.vcpu > 1 {
		t.Cores = s.vcpu / 2
	}
	if isMetal {
		t.Hypervisor = ""
	}
	t.MaxENIs, t.IPv4PerENI = enis(s.vcpu)
	if f.nvmePerVCPU > 0 {
		t.LocalStorage = nvme(f.nvmePerVCPU*int64(s.vcpu), s.vcpu)
	}
	t.OnDemandUSD = prices(f.pricePerVCPU * float64(s.vcpu))
	t.SpotBaseUSD = map[string]float64{}
	return entry{t: t, share: f.availability}
}

// network is what a size of a family reports: the family's full speed at 64 vCPU and above,
// "Up to N" below, as AWS lists it.
func network(full string, vcpu int32) string {
	if vcpu >= 64 || strings.HasPrefix(full, "Up to") {
		return full
	}
	switch {
	case vcpu <= 16:
		return "Up to " + full
	default:
		return half(full)
	}
}

func half(full string) string {
	var n int
	if _, err := fmt.Sscanf(full, "%d Gigabit", &n); err != nil {
		return full
	}
	return fmt.Sprintf("%d Gigabit", n/2)
}

// nvme splits a total instance-store size into disks the way AWS does: one disk up to 16 vCPU,
// then two, four and eight.
func nvme(totalGB int64, vcpu int32) *catalog.LocalStorage {
	disks := int32(1)
	switch {
	case vcpu >= 128:
		disks = 8
	case vcpu >= 64:
		disks = 4
	case vcpu >= 32:
		disks = 2
	}
	return &catalog.LocalStorage{Disks: disks, SizeGB: totalGB / int64(disks), Type: "ssd", NVMe: true}
}

func prices(usWest2 float64) map[string]float64 {
	out := map[string]float64{}
	for r, f := range regionPriceFactor {
		out[r] = math.Round(usWest2*f*1e4) / 1e4
	}
	return out
}

// burstable is t2 (Xen, previous generation), t3 (Intel), t3a (AMD) and t4g (Graviton2).
func burstable() []entry {
	type rung struct {
		name     string
		vcpu     int32
		memMiB   int64
		enis     int32
		ips      int32
		t3Price  float64 // us-west-2 t3 price
		t2vcpu   int32
		t2enis   int32
		t2ips    int32
		t2Exists bool
	}
	rungs := []rung{
		{"nano", 2, 512, 2, 2, 0.0052, 1, 2, 2, true},
		{"micro", 2, 1024, 2, 2, 0.0104, 1, 2, 2, true},
		{"small", 2, 2048, 3, 4, 0.0208, 1, 3, 4, true},
		{"medium", 2, 4096, 3, 6, 0.0416, 2, 3, 6, true},
		{"large", 2, 8192, 3, 12, 0.0832, 2, 3, 12, true},
		{"xlarge", 4, 16384, 4, 15, 0.1664, 4, 3, 15, true},
		{"2xlarge", 8, 32768, 4, 15, 0.3328, 8, 3, 15, true},
	}
	var out []entry
	for _, r := range rungs {
		for _, fam := range []struct {
			name, arch, maker string
			clock, price      float64
		}{{"t3", catalog.ArchX8664, "Intel", 3.1, 1}, {"t3a", catalog.ArchX8664, "AMD", 2.5, 0.9}, {"t4g", catalog.ArchARM64, "AWS", 2.5, 0.8}} {
			cores := r.vcpu / 2
			if fam.name == "t4g" {
				cores = r.vcpu
			}
			out = append(out, entry{share: 1, t: catalog.InstanceType{
				Name: fam.name + "." + r.name, Family: fam.name, Architecture: fam.arch, Manufacturer: fam.maker,
				ClockGHz: fam.clock, VCPU: r.vcpu, Cores: cores, MemoryMiB: r.memMiB, Hypervisor: catalog.HypervisorNitro,
				Burstable: true, CurrentGeneration: true, MaxENIs: r.enis, IPv4PerENI: r.ips,
				NetworkPerformance: "Up to 5 Gigabit", OnDemandUSD: prices(r.t3Price * fam.price),
				SpotBaseUSD: map[string]float64{},
			}})
		}
		out = append(out, entry{share: 1, t: catalog.InstanceType{
			Name: "t2." + r.name, Family: "t2", Architecture: catalog.ArchX8664, Manufacturer: "Intel", ClockGHz: 2.3,
			VCPU: r.t2vcpu, Cores: r.t2vcpu, MemoryMiB: r.memMiB, Hypervisor: catalog.HypervisorXen, Burstable: true,
			CurrentGeneration: true, MaxENIs: r.t2enis, IPv4PerENI: r.t2ips, NetworkPerformance: "Low to Moderate",
			OnDemandUSD: prices(r.t3Price * 1.1), SpotBaseUSD: map[string]float64{},
		}})
	}
	return out
}

// fixed is a type whose facts do not follow a per-vCPU rule: storage- and GPU-optimised sizes.
type fixed struct {
	name       string
	vcpu       int32
	memGiB     float64
	disks      int32
	diskGB     int64
	gpus       int32
	enis, ips  int32
	price      float64
	hypervisor string
}

func storage() []entry {
	var out []entry
	add := func(fam, arch, maker string, clock float64, diskType string, avail float64, sizes []fixed) {
		for _, s := range sizes {
			e := fixedType(fam, arch, maker, clock, avail, s)
			e.t.LocalStorage = &catalog.LocalStorage{Disks: s.disks, SizeGB: s.diskGB, Type: diskType, NVMe: true}
			out = append(out, e)
		}
	}
	add("i3", catalog.ArchX8664, "Intel", 2.3, "ssd", 1, []fixed{
		{"large", 2, 15.25, 1, 475, 0, 3, 10, 0.156, "xen"}, {"xlarge", 4, 30.5, 1, 950, 0, 4, 15, 0.312, "xen"},
		{"2xlarge", 8, 61, 1, 1900, 0, 4, 15, 0.624, "xen"}, {"4xlarge", 16, 122, 2, 1900, 0, 8, 30, 1.248, "xen"},
		{"8xlarge", 32, 244, 4, 1900, 0, 8, 30, 2.496, "xen"}, {"16xlarge", 64, 488, 8, 1900, 0, 15, 50, 4.992, "xen"},
		{"metal", 72, 512, 8, 1900, 0, 15, 50, 4.992, ""},
	})
	add("i3en", catalog.ArchX8664, "Intel", 3.1, "ssd", 0.8, []fixed{
		{"large", 2, 16, 1, 1250, 0, 3, 10, 0.226, "nitro"}, {"xlarge", 4, 32, 1, 2500, 0, 4, 15, 0.452, "nitro"},
		{"2xlarge", 8, 64, 2, 2500, 0, 4, 15, 0.904, "nitro"}, {"3xlarge", 12, 96, 1, 7500, 0, 4, 15, 1.356, "nitro"},
		{"6xlarge", 24, 192, 2, 7500, 0, 8, 30, 2.712, "nitro"}, {"12xlarge", 48, 384, 4, 7500, 0, 8, 30, 5.424, "nitro"},
		{"24xlarge", 96, 768, 8, 7500, 0, 15, 50, 10.848, "nitro"}, {"metal", 96, 768, 8, 7500, 0, 15, 50, 10.848, ""},
	})
	add("i4i", catalog.ArchX8664, "Intel", 3.5, "ssd", 0.9, []fixed{
		{"large", 2, 16, 1, 468, 0, 3, 10, 0.172, "nitro"}, {"xlarge", 4, 32, 1, 937, 0, 4, 15, 0.343, "nitro"},
		{"2xlarge", 8, 64, 1, 1875, 0, 4, 15, 0.686, "nitro"}, {"4xlarge", 16, 128, 1, 3750, 0, 8, 30, 1.373, "nitro"},
		{"8xlarge", 32, 256, 2, 3750, 0, 8, 30, 2.746, "nitro"}, {"12xlarge", 48, 384, 3, 3750, 0, 8, 30, 4.118, "nitro"},
		{"16xlarge", 64, 512, 4, 3750, 0, 15, 50, 5.491, "nitro"}, {"24xlarge", 96, 768, 6, 3750, 0, 15, 50, 8.237, "nitro"},
		{"32xlarge", 128, 1024, 8, 3750, 0, 15, 50, 10.982, "nitro"}, {"metal", 128, 1024, 8, 3750, 0, 15, 50, 10.982, ""},
	})
	add("i4g", catalog.ArchARM64, "AWS", 2.5, "ssd", 0.7, []fixed{
		{"large", 2, 16, 1, 468, 0, 3, 10, 0.154, "nitro"}, {"xlarge", 4, 32, 1, 937, 0, 4, 15, 0.309, "nitro"},
		{"2xlarge", 8, 64, 1, 1875, 0, 4, 15, 0.617, "nitro"}, {"4xlarge", 16, 128, 1, 3750, 0, 8, 30, 1.235, "nitro"},
		{"8xlarge", 32, 256, 2, 3750, 0, 8, 30, 2.47, "nitro"}, {"16xlarge", 64, 512, 4, 3750, 0, 15, 50, 4.94, "nitro"},
	})
	add("d3", catalog.ArchX8664, "Intel", 3.1, "hdd", 0.7, []fixed{
		{"xlarge", 4, 32, 3, 2000, 0, 4, 15, 0.499, "nitro"}, {"2xlarge", 8, 64, 6, 2000, 0, 4, 15, 0.999, "nitro"},
		{"4xlarge", 16, 128, 12, 2000, 0, 4, 15, 1.998, "nitro"}, {"8xlarge", 32, 256, 24, 2000, 0, 4, 15, 3.995, "nitro"},
	})
	add("d3en", catalog.ArchX8664, "Intel", 3.1, "hdd", 0.5, []fixed{
		{"xlarge", 4, 16, 2, 13980, 0, 4, 15, 0.526, "nitro"}, {"2xlarge", 8, 32, 4, 13980, 0, 4, 15, 1.051, "nitro"},
		{"4xlarge", 16, 64, 8, 13980, 0, 4, 15, 2.103, "nitro"}, {"6xlarge", 24, 96, 12, 13980, 0, 4, 15, 3.154, "nitro"},
		{"8xlarge", 32, 128, 16, 13980, 0, 4, 15, 4.205, "nitro"}, {"12xlarge", 48, 192, 24, 13980, 0, 4, 15, 6.308, "nitro"},
	})
	return out
}

func gpu() []entry {
	var out []entry
	add := func(fam, arch, maker string, clock float64, g catalog.GPUs, avail float64, sizes []fixed) {
		for _, s := range sizes {
			e := fixedType(fam, arch, maker, clock, avail, s)
			gs := g
			gs.Count = s.gpus
			e.t.GPUs = &gs
			if s.disks > 0 {
				e.t.LocalStorage = &catalog.LocalStorage{Disks: s.disks, SizeGB: s.diskGB, Type: "ssd", NVMe: true}
			}
			out = append(out, e)
		}
	}
	t4 := catalog.GPUs{Name: "T4", Manufacturer: "NVIDIA", MemoryMiB: 16384}
	add("g4dn", catalog.ArchX8664, "Intel", 2.5, t4, 0.9, []fixed{
		{"xlarge", 4, 16, 1, 125, 1, 3, 10, 0.526, "nitro"}, {"2xlarge", 8, 32, 1, 225, 1, 3, 10, 0.752, "nitro"},
		{"4xlarge", 16, 64, 1, 225, 1, 3, 10, 1.204, "nitro"}, {"8xlarge", 32, 128, 1, 900, 1, 4, 15, 2.176, "nitro"},
		{"12xlarge", 48, 192, 1, 900, 4, 8, 30, 3.912, "nitro"}, {"16xlarge", 64, 256, 1, 900, 1, 4, 15, 4.352, "nitro"},
		{"metal", 96, 384, 2, 900, 8, 15, 50, 7.824, ""},
	})
	add("g4ad", catalog.ArchX8664, "AMD", 3.0, catalog.GPUs{Name: "Radeon Pro V520", Manufacturer: "AMD", MemoryMiB: 8192}, 0.5, []fixed{
		{"xlarge", 4, 16, 1, 150, 1, 2, 4, 0.379, "nitro"}, {"2xlarge", 8, 32, 1, 300, 1, 2, 4, 0.541, "nitro"},
		{"4xlarge", 16, 64, 1, 600, 1, 3, 10, 0.867, "nitro"}, {"8xlarge", 32, 128, 1, 1200, 2, 4, 15, 1.734, "nitro"},
		{"16xlarge", 64, 256, 1, 2400, 4, 8, 30, 3.468, "nitro"},
	})
	a10g := catalog.GPUs{Name: "A10G", Manufacturer: "NVIDIA", MemoryMiB: 24576}
	add("g5", catalog.ArchX8664, "AMD", 3.3, a10g, 0.75, []fixed{
		{"xlarge", 4, 16, 1, 250, 1, 4, 15, 1.006, "nitro"}, {"2xlarge", 8, 32, 1, 450, 1, 4, 15, 1.212, "nitro"},
		{"4xlarge", 16, 64, 1, 600, 1, 8, 30, 1.624, "nitro"}, {"8xlarge", 32, 128, 1, 900, 1, 8, 30, 2.448, "nitro"},
		{"12xlarge", 48, 192, 1, 3800, 4, 15, 50, 5.672, "nitro"}, {"16xlarge", 64, 256, 1, 1900, 1, 8, 30, 4.096, "nitro"},
		{"24xlarge", 96, 384, 1, 3800, 4, 15, 50, 8.144, "nitro"}, {"48xlarge", 192, 768, 2, 3800, 8, 7, 50, 16.288, "nitro"},
	})
	add("g5g", catalog.ArchARM64, "AWS", 2.5, catalog.GPUs{Name: "T4g", Manufacturer: "NVIDIA", MemoryMiB: 16384}, 0.5, []fixed{
		{"xlarge", 4, 8, 0, 0, 1, 4, 15, 0.42, "nitro"}, {"2xlarge", 8, 16, 0, 0, 1, 4, 15, 0.556, "nitro"},
		{"4xlarge", 16, 32, 0, 0, 1, 8, 30, 0.828, "nitro"}, {"8xlarge", 32, 64, 0, 0, 1, 8, 30, 1.372, "nitro"},
		{"16xlarge", 64, 128, 0, 0, 2, 15, 50, 2.744, "nitro"}, {"metal", 64, 128, 0, 0, 2, 15, 50, 2.744, ""},
	})
	l4 := catalog.GPUs{Name: "L4", Manufacturer: "NVIDIA", MemoryMiB: 24576}
	add("g6", catalog.ArchX8664, "AMD", 3.95, l4, 0.7, []fixed{
		{"xlarge", 4, 16, 1, 250, 1, 4, 15, 0.805, "nitro"}, {"2xlarge", 8, 32, 1, 450, 1, 4, 15, 0.978, "nitro"},
		{"4xlarge", 16, 64, 1, 600, 1, 8, 30, 1.323, "nitro"}, {"8xlarge", 32, 128, 2, 450, 1, 8, 30, 2.014, "nitro"},
		{"12xlarge", 48, 192, 4, 940, 4, 8, 30, 4.602, "nitro"}, {"16xlarge", 64, 256, 2, 940, 1, 15, 50, 3.397, "nitro"},
		{"24xlarge", 96, 384, 4, 940, 4, 15, 50, 6.675, "nitro"}, {"48xlarge", 192, 768, 8, 940, 8, 15, 50, 13.35, "nitro"},
	})
	l40s := catalog.GPUs{Name: "L40S", Manufacturer: "NVIDIA", MemoryMiB: 45776}
	add("g6e", catalog.ArchX8664, "AMD", 3.95, l40s, 0.45, []fixed{
		{"xlarge", 4, 32, 1, 250, 1, 4, 15, 1.861, "nitro"}, {"2xlarge", 8, 64, 1, 450, 1, 4, 15, 2.242, "nitro"},
		{"4xlarge", 16, 128, 1, 600, 1, 8, 30, 3.004, "nitro"}, {"8xlarge", 32, 256, 1, 900, 1, 8, 30, 4.529, "nitro"},
		{"12xlarge", 48, 384, 2, 1900, 4, 10, 30, 10.493, "nitro"}, {"16xlarge", 64, 512, 1, 1900, 1, 15, 50, 7.577, "nitro"},
		{"24xlarge", 96, 768, 2, 1900, 4, 15, 50, 15.066, "nitro"}, {"48xlarge", 192, 1536, 4, 1900, 8, 15, 50, 30.131, "nitro"},
	})
	add("p3", catalog.ArchX8664, "Intel", 2.3, catalog.GPUs{Name: "V100", Manufacturer: "NVIDIA", MemoryMiB: 16384}, 0.5, []fixed{
		{"2xlarge", 8, 61, 0, 0, 1, 4, 15, 3.06, "xen"}, {"8xlarge", 32, 244, 0, 0, 4, 8, 30, 12.24, "xen"},
		{"16xlarge", 64, 488, 0, 0, 8, 8, 30, 24.48, "xen"},
	})
	add("p4d", catalog.ArchX8664, "Intel", 3.0, catalog.GPUs{Name: "A100", Manufacturer: "NVIDIA", MemoryMiB: 40960}, 0.3, []fixed{
		{"24xlarge", 96, 1152, 8, 1000, 8, 60, 50, 32.773, "nitro"},
	})
	add("p5", catalog.ArchX8664, "AMD", 3.6, catalog.GPUs{Name: "H100", Manufacturer: "NVIDIA", MemoryMiB: 81920}, 0.3, []fixed{
		{"48xlarge", 192, 2048, 8, 3800, 8, 32, 50, 98.32, "nitro"},
	})
	return out
}

func fixedType(fam, arch, maker string, clock float64, avail float64, s fixed) entry {
	cores := s.vcpu / 2
	if arch == catalog.ArchARM64 {
		cores = s.vcpu
	}
	return entry{share: avail, t: catalog.InstanceType{
		Name: fam + "." + s.name, Family: fam, Architecture: arch, Manufacturer: maker, ClockGHz: clock,
		VCPU: s.vcpu, Cores: cores, MemoryMiB: int64(math.Round(s.memGiB * 1024)), Hypervisor: s.hypervisor,
		BareMetal: strings.HasPrefix(s.name, "metal"), CurrentGeneration: fam != "p3",
		MaxENIs: s.enis, IPv4PerENI: s.ips, NetworkPerformance: network("25 Gigabit", s.vcpu),
		OnDemandUSD: prices(s.price), SpotBaseUSD: map[string]float64{},
	}}
}

// place turns the share of zones offering a type into concrete zones and spot base prices. A zone offers
// the type when the family is launched in its region (launchedIn), the zone is not a legacy zone
// closed to the family (legacyZones), and a hash of (type, zone) falls under the share, narrowed
// in the smaller regions (regionBreadth); the first zone of us-west-2 always offers every
// family's smaller sizes so that every family is launchable somewhere. Metal and the very
// largest sizes are rarer, as in AWS.
func place(t *catalog.InstanceType, share float64) {
	if t.BareMetal || t.VCPU >= 192 {
		share *= 0.6
	}
	t.Offerings = map[string][]string{}
	discount := 0.55 + 0.2*unit(t.Name, "discount") // spot is 55–75% below on-demand
	for _, r := range regions {
		if !launched(t.Family, r.Name) {
			continue // not launched in this region
		}
		regionShare := share
		if b, ok := regionBreadth[r.Name]; ok && share < 1 {
			regionShare *= b
		}
		for i, z := range r.Zones {
			if legacyZones[z.Name] && !legacy(t.Family) {
				continue
			}
			u := unit(t.Name, z.Name)
			if u < regionShare || (i == 0 && r.Name == "us-west-2" && t.VCPU <= 16) {
				offer(t, r.Name, z.Name, discount)
			}
		}
	}
	// Every type is launchable in one of the two regions the catalogue first covered, which the
	// local stack and the tests use: a type that the draw left out of both gets one zone in
	// us-west-2 (so adding regions changed nothing there).
	if len(t.Offerings["us-west-2"])+len(t.Offerings["eu-west-1"]) == 0 {
		offer(t, "us-west-2", "us-west-2b", discount)
	}
}

func offer(t *catalog.InstanceType, region, zone string, discount float64) {
	t.Offerings[region] = append(t.Offerings[region], zone)
	zoneSwing := 0.9 + 0.2*unit(t.Name, "spot/"+zone)
	t.SpotBaseUSD[zone] = math.Round(t.OnDemandUSD[region]*(1-discount)*zoneSwing*1e4) / 1e4
}

// unit maps a key to [0, 1) deterministically.
func unit(parts ...string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.Join(parts, "/")))
	return float64(h.Sum64()%1_000_000) / 1_000_000
}
