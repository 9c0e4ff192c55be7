package ec2

import (
	"fmt"
	"strconv"
	"time"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
	"github.com/joinerhq/joiner/pkg/catalog"
)

func (h *Handler) describeInstanceTypes(req request) (any, error) {
	limit, err := maxResults(req.form, 5, 100)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = 100
	}
	var out describeInstanceTypesResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		names := idSet(req.form, "InstanceType")
		for n := range names {
			if _, ok := w.Catalog.Type(n); !ok {
				return wire.NewError(400, "InvalidInstanceType", "The following supplied instance types do not exist: [%s]", n)
			}
		}
		var matched []instanceTypeXML
		for _, t := range w.Catalog.Types {
			if names != nil && !names[t.Name] {
				continue
			}
			if len(t.Offerings[r.Name]) == 0 {
				continue // not supported in this region
			}
			ok, err := matchFilters(req.form.Filters(), instanceTypeFields(t), nil)
			if err != nil {
				return err
			}
			if ok {
				matched = append(matched, instanceTypeInfo(t))
			}
		}
		shown, next, err := onePage(req, "DescribeInstanceTypes", limit, matched)
		if err != nil {
			return err
		}
		out = describeInstanceTypesResponse{XMLNS: ns, RequestID: req.call.RequestID, InstanceTypes: shown, NextToken: next}
		return nil
	})
	return out, err
}

func instanceTypeFields(t catalog.InstanceType) fields {
	f := fields{
		"instance-type":                         {t.Name},
		"current-generation":                    {boolString(t.CurrentGeneration)},
		"bare-metal":                            {boolString(t.BareMetal)},
		"burstable-performance-supported":       {boolString(t.Burstable)},
		"hypervisor":                            {t.Hypervisor},
		"processor-info.supported-architecture": {t.Architecture},
		"supported-virtualization-type":         {"hvm"},
		"supported-usage-class":                 {"on-demand", "spot"},
		"vcpu-info.default-vcpus":               {strconv.Itoa(int(t.VCPU))},
		"memory-info.size-in-mib":               {strconv.FormatInt(t.MemoryMiB, 10)},
		"instance-storage-supported":            {boolString(t.LocalStorage != nil)},
		"network-info.efa-supported":            {boolString(t.EFA)},
	}
	return f
}

func instanceTypeInfo(t catalog.InstanceType) instanceTypeXML {
	threads := int32(1)
	if t.Cores > 0 {
		threads = t.VCPU / t.Cores
	}
	x := instanceTypeXML{
		InstanceType: t.Name, CurrentGeneration: t.CurrentGeneration, FreeTierEligible: t.Name == "t2.micro" || t.Name == "t3.micro",
		SupportedUsageClasses: []string{"on-demand", "spot"}, SupportedRootDeviceTypes: []string{"ebs"},
		SupportedVirtualizationTypes: []string{"hvm"}, BareMetal: t.BareMetal, Hypervisor: t.Hypervisor,
		ProcessorInfo: processorXML{SupportedArchitectures: []string{t.Architecture}, ClockGHz: t.ClockGHz, Manufacturer: t.Manufacturer},
		VCPUInfo:      vcpuXML{DefaultVCPUs: t.VCPU, DefaultCores: t.Cores, DefaultThreadsPerCore: threads},
		MemoryInfo:    memoryXML{SizeInMiB: t.MemoryMiB},
		EBSInfo:       ebsXML{EBSOptimizedSupport: "default", EncryptionSupport: "supported", NVMeSupport: "required"},
		NetworkInfo: networkXML{
			NetworkPerformance: t.NetworkPerformance, MaximumNetworkInterfaces: t.MaxENIs, MaximumNetworkCards: 1,
			NetworkCards:              []networkCardXML{{NetworkCardIndex: 0, NetworkPerformance: t.NetworkPerformance, MaximumNetworkInterfaces: t.MaxENIs}},
			IPv4AddressesPerInterface: t.IPv4PerENI, IPv6AddressesPerInterface: t.IPv4PerENI, IPv6Supported: true,
			ENASupport: "required", EFASupported: t.EFA, EncryptionInTransitSupport: t.Hypervisor == catalog.HypervisorNitro || t.BareMetal,
		},
		BurstablePerformanceSupported: t.Burstable, HibernationSupported: !t.BareMetal && t.MemoryMiB <= 150*1024,
		DedicatedHostsSupported: !t.Burstable, AutoRecoverySupported: t.LocalStorage == nil,
		SupportedBootModes: []string{"legacy-bios", "uefi"},
	}
	if t.Hypervisor == catalog.HypervisorXen {
		x.EBSInfo.NVMeSupport = "unsupported"
		x.NetworkInfo.ENASupport = "supported"
		x.SupportedBootModes = []string{"legacy-bios"}
	}
	if t.Architecture == catalog.ArchARM64 {
		x.SupportedBootModes = []string{"uefi"}
	}
	if t.EFA {
		x.NetworkInfo.EFAInfo = &efaXML{MaximumEFAInterfaces: 1}
	}
	if s := t.LocalStorage; s != nil {
		x.InstanceStorageSupported = true
		nvme := "unsupported"
		if s.NVMe {
			nvme = "required"
		}
		x.InstanceStorageInfo = &storageXML{TotalSizeInGB: s.TotalGB(), Disks: []diskXML{{SizeInGB: s.SizeGB, Count: s.Disks, Type: s.Type}}, NVMeSupport: nvme}
	}
	if g := t.GPUs; g != nil {
		x.GPUInfo = &gpuInfoXML{
			GPUs:                []gpuXML{{Name: g.Name, Manufacturer: g.Manufacturer, Count: g.Count, MemoryInfo: memoryXML{SizeInMiB: g.MemoryMiB}}},
			TotalGPUMemoryInMiB: int64(g.Count) * g.MemoryMiB,
		}
	}
	return x
}

func (h *Handler) describeInstanceTypeOfferings(req request) (any, error) {
	limit, err := maxResults(req.form, 5, 1000)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = 1000
	}
	locationType := req.form.String("LocationType")
	if locationType == "" {
		locationType = "region"
	}
	var out describeInstanceTypeOfferingsResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		var matched []offeringXML
		for _, t := range w.Catalog.Types {
			zones := t.Offerings[r.Name]
			if len(zones) == 0 {
				continue
			}
			var locations []string
			switch locationType {
			case "region":
				locations = []string{r.Name}
			case "availability-zone":
				locations = zones
			case "availability-zone-id":
				for _, zn := range zones {
					z, _ := r.Zone(zn)
					locations = append(locations, z.ID)
				}
			case "outpost":
				// A valid LocationType (the API reference's enum); the emulated regions have no
				// Outposts, so no offerings.
			default:
				return wire.InvalidParameterValue(fmt.Sprintf("Value (%s) for parameter locationType is invalid.", locationType))
			}
			for _, loc := range locations {
				ok, err := matchFilters(req.form.Filters(), fields{"instance-type": {t.Name}, "location": {loc}}, nil)
				if err != nil {
					return err
				}
				if ok {
					matched = append(matched, offeringXML{InstanceType: t.Name, LocationType: locationType, Location: loc})
				}
			}
		}
		shown, next, err := onePage(req, "DescribeInstanceTypeOfferings", limit, matched)
		if err != nil {
			return err
		}
		out = describeInstanceTypeOfferingsResponse{XMLNS: ns, RequestID: req.call.RequestID, Offerings: shown, NextToken: next}
		return nil
	})
	return out, err
}

func (h *Handler) describeAvailabilityZones(req request) (any, error) {
	var out describeAvailabilityZonesResponse
	err := h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		names, ids := idSet(req.form, "ZoneName"), idSet(req.form, "ZoneId")
		out = describeAvailabilityZonesResponse{XMLNS: ns, RequestID: req.call.RequestID}
		for _, z := range r.Zones {
			if (names != nil && !names[z.Name]) || (ids != nil && !ids[z.ID]) {
				continue
			}
			ok, err := matchFilters(req.form.Filters(), fields{
				"zone-name": {z.Name}, "zone-id": {z.ID}, "region-name": {r.Name}, "state": {"available"},
				"zone-type": {"availability-zone"}, "opt-in-status": {"opt-in-not-required"},
			}, nil)
			if err != nil {
				return err
			}
			if ok {
				out.Zones = append(out.Zones, zoneXML{
					ZoneName: z.Name, ZoneID: z.ID, ZoneState: "available", RegionName: r.Name, ZoneType: "availability-zone",
					OptInStatus: "opt-in-not-required", GroupName: r.Name, NetworkBorderGroup: r.Name,
				})
			}
		}
		return nil
	})
	return out, err
}

// spotHistoryStep is the spacing of the spot price history the emulator reports.
const spotHistoryStep = time.Hour

// spotHistoryPage is how many prices a DescribeSpotPriceHistory page holds without MaxResults.
const spotHistoryPage = 1000

// describeSpotPriceHistory lists spot prices, paged by MaxResults, for which the API reference
// states no range: EC2 answers a MaxResults of 2000 (upstream Karpenter's) with pages of up to
// that many prices, and so does the emulator.
func (h *Handler) describeSpotPriceHistory(req request) (any, error) {
	limit, err := pageSize(req.form)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = spotHistoryPage
	}
	var out describeSpotPriceHistoryResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		end, start, err := spotWindow(req.form, w.Now)
		if err != nil {
			return err
		}
		// Every filter name is checked up front: spotPoints matches per price and stops at the
		// first filter a price fails.
		if err := checkFilterNames(req.form.Filters(), spotFields()); err != nil {
			return err
		}
		types := idSet(req.form, "InstanceType")
		products := idSet(req.form, "ProductDescription")
		zoneWanted := req.form.String("AvailabilityZone")
		var matched []spotPriceXML
		for _, t := range w.Catalog.Types {
			if types != nil && !types[t.Name] {
				continue
			}
			for _, zn := range t.Offerings[r.Name] {
				if zoneWanted != "" && zn != zoneWanted {
					continue
				}
				z, _ := r.Zone(zn)
				for _, product := range []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"} {
					if products != nil && !products[product] {
						continue
					}
					matched = append(matched, spotPoints(t, z, product, start, end, req.form.Filters())...)
				}
			}
		}
		shown, next, err := onePage(req, "DescribeSpotPriceHistory", limit, matched)
		if err != nil {
			return err
		}
		out = describeSpotPriceHistoryResponse{XMLNS: ns, RequestID: req.call.RequestID, Prices: shown, NextToken: next}
		return nil
	})
	return out, err
}

// spotWindow returns the [start, end] of the requested history; without StartTime only the
// current price is reported, as EC2 does.
func spotWindow(form wire.Form, now time.Time) (end, start time.Time, err error) {
	end = now
	if s := form.String("EndTime"); s != "" {
		if end, err = time.Parse(time.RFC3339, s); err != nil {
			return end, start, wire.InvalidParameterValue("Invalid value for EndTime: " + s)
		}
	}
	start = end
	if s := form.String("StartTime"); s != "" {
		if start, err = time.Parse(time.RFC3339, s); err != nil {
			return end, start, wire.InvalidParameterValue("Invalid value for StartTime: " + s)
		}
	}
	return end, start, nil
}

// spotPoints lists the hourly price changes of one pool within [start, end], newest first.
func spotPoints(t catalog.InstanceType, z catalog.Zone, product string, start, end time.Time, filters []wire.Filter) []spotPriceXML {
	var out []spotPriceXML
	for at := end.Truncate(spotHistoryStep); ; at = at.Add(-spotHistoryStep) {
		price, _ := t.SpotPrice(z.Name, at)
		p := spotPriceXML{
			InstanceType: t.Name, ProductDescription: product, SpotPrice: strconv.FormatFloat(price, 'f', 6, 64),
			Timestamp: at.UTC().Format(time.RFC3339), AvailabilityZone: z.Name, AvailabilityZoneID: z.ID,
		}
		ok, _ := matchFilters(filters, fields{
			"instance-type": {t.Name}, "availability-zone": {z.Name}, "availability-zone-id": {z.ID}, "product-description": {product},
			"spot-price": {p.SpotPrice}, "timestamp": {p.Timestamp},
		}, nil)
		if ok {
			out = append(out, p)
		}
		if !at.After(start) {
			return out
		}
	}
}

// spotFields names the filters DescribeSpotPriceHistory documents.
func spotFields() fields {
	return fields{"instance-type": nil, "availability-zone": nil, "availability-zone-id": nil, "product-description": nil,
		"spot-price": nil, "timestamp": nil}
}

// checkFilterNames refuses a filter that is neither a tag filter nor one of known's names, as
// matchFilters would for a resource it reaches; for actions whose loop may reach none.
func checkFilterNames(filters []wire.Filter, known fields) error {
	for _, f := range filters {
		if _, isTag := tagFilter(f, nil); isTag {
			continue
		}
		if _, ok := known[f.Name]; !ok {
			return wire.InvalidParameterValue(fmt.Sprintf("The filter '%s' is invalid", f.Name))
		}
	}
	return nil
}
