package instancetype

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// DescribeRefreshInterval is how long EC2's descriptions of instance types and their zones are
// reused before they are read again.
const DescribeRefreshInterval = time.Hour

// DefaultEphemeralStorage is the root volume size when the node class does not set one.
var defaultEphemeralStorage = resource.MustParse("20Gi")

// ResourceNvidiaGPU is the extended resource of NVIDIA GPUs.
const ResourceNvidiaGPU corev1.ResourceName = "nvidia.com/gpu"

// EC2API is what the provider calls; *ec2.Client satisfies it.
type EC2API interface {
	DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error)
	DescribeInstanceTypeOfferings(ctx context.Context, in *ec2.DescribeInstanceTypeOfferingsInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstanceTypeOfferingsOutput, error)
}

// Prices are the hourly prices of the region (see pricing.Provider). SeqNum changes whenever a
// price may have changed, so that what was computed from them can be reused until then.
type Prices interface {
	hourlyPrices
	SeqNum() uint64
}

// hourlyPrices are the prices build reads.
type hourlyPrices interface {
	OnDemand(instanceType string) (float64, bool)
	Spot(instanceType, zone string) (float64, bool)
}

// Provider turns EC2's descriptions of instance types, their zones and prices into
// cloudprovider.InstanceTypes under a node class's settings. It is safe for concurrent use.
type Provider struct {
	ec2         EC2API
	prices      Prices
	unavailable *UnavailableOfferings
	clock       clock.PassiveClock
	vmOverhead  float64

	mu        sync.Mutex
	described []Described
	zones     map[string][]string // instance type → zones offering it
	readAt    time.Time

	// listMu serialises List's builds, so that the launches of a scale-up that ask at once
	// wait for one build instead of each making its own; it guards built.
	listMu sync.Mutex
	// built are List's results by the node class settings they were built under (listKey).
	built map[string]*builtTypes
}

// builtTypes is one List result and the versions of its inputs: it is served while none changed.
type builtTypes struct {
	readAt           time.Time
	prices, offering uint64
	types            []*cloudprovider.InstanceType
}

// Described is one instance type as EC2 describes it: the Info capacity depends on, and the
// labels a node of the type carries beyond those Requirements derives from Info.
type Described struct {
	Info
	// Labels are the karpenter.k8s.aws/instance-* labels of hardware facts (manufacturer,
	// hypervisor, GPUs...).
	Labels map[string]string
	// NvidiaGPUs is the number of NVIDIA GPUs, the nvidia.com/gpu capacity.
	NvidiaGPUs int64
}

// NewProvider returns a provider reading EC2 through ec2API. vmMemoryOverheadPercent 0 means
// DefaultVMMemoryOverheadPercent.
func NewProvider(ec2API EC2API, prices Prices, unavailable *UnavailableOfferings, clk clock.PassiveClock, vmMemoryOverheadPercent float64) *Provider {
	if vmMemoryOverheadPercent == 0 {
		vmMemoryOverheadPercent = DefaultVMMemoryOverheadPercent
	}
	return &Provider{ec2: ec2API, prices: prices, unavailable: unavailable, clock: clk, vmOverhead: vmMemoryOverheadPercent}
}

// List returns every amd64 and arm64 instance type offered in the zones of the node class's
// resolved subnets (every zone when none are resolved yet), with spot and on-demand offerings
// priced (on-demand falling back to pricing.Estimate, spot to the on-demand price) and marked
// unavailable while UnavailableOfferings says so, and capacity and overhead under the node
// class's AMI family, kubelet settings and root volume.
//
// The result is shared: callers must not change the instance types or their offerings (copy
// one to narrow it). It is built again only when the node class's settings, EC2's descriptions,
// the prices or the unavailable offerings changed since: building all of a region's types for
// every launch was most of the controller's memory and CPU in a scale-up (hundreds of launches,
// fifty at once).
func (p *Provider) List(ctx context.Context, nodeClass *awsv1.EC2NodeClass) ([]*cloudprovider.InstanceType, error) {
	described, zones, readAt, err := p.describe(ctx)
	if err != nil {
		return nil, err
	}
	key, err := listKey(nodeClass, p.vmOverhead)
	if err != nil {
		return nil, err
	}
	p.listMu.Lock()
	defer p.listMu.Unlock()
	prices, offering := p.prices.SeqNum(), uint64(0)
	if p.unavailable != nil {
		offering = p.unavailable.SeqNum()
	}
	if b, ok := p.built[key]; ok && b.readAt.Equal(readAt) && b.prices == prices && b.offering == offering {
		return b.types, nil
	}
	types, err := build(described, zones, p.prices, p.unavailable, nodeClass, p.vmOverhead)
	if err != nil {
		return nil, err
	}
	if p.built == nil {
		p.built = map[string]*builtTypes{}
	}
	// Results of older versions are never served again: drop them, so that only one per node
	// class's settings stays.
	maps.DeleteFunc(p.built, func(_ string, b *builtTypes) bool {
		return !b.readAt.Equal(readAt) || b.prices != prices || b.offering != offering
	})
	p.built[key] = &builtTypes{readAt: readAt, prices: prices, offering: offering, types: types}
	return types, nil
}

// listKey is what of a node class build reads, as a string: the AMI family, the kubelet
// settings, the root volume size, the instance store policy, the subnets' zones and their IDs,
// and the VM memory overhead.
func listKey(nodeClass *awsv1.EC2NodeClass, vmOverhead float64) (string, error) {
	zones := make([]string, 0, len(nodeClass.Status.Subnets))
	for _, s := range nodeClass.Status.Subnets {
		zones = append(zones, s.Zone+"="+s.ZoneID)
	}
	slices.Sort(zones)
	size := rootVolumeSize(nodeClass)
	raw, err := json.Marshal(struct {
		Family, EphemeralStorage string
		InstanceStorePolicy      *awsv1.InstanceStorePolicy
		Kubelet                  *awsv1.KubeletConfiguration
		Zones                    []string
		VMOverhead               float64
	}{userdata.FamilyOf(nodeClass), size.String(), nodeClass.Spec.InstanceStorePolicy, nodeClass.Spec.Kubelet, slices.Compact(zones), vmOverhead})
	if err != nil {
		return "", fmt.Errorf("listing instance types of EC2NodeClass %s, %w", nodeClass.Name, err)
	}
	return string(raw), nil
}

// build makes the instance types of described, offered in zones, priced by prices, under the
// node class's settings (List's contract). unavailable may be nil: every offering is available.
func build(described []Described, zones map[string][]string, prices hourlyPrices, unavailable *UnavailableOfferings, nodeClass *awsv1.EC2NodeClass, vmOverhead float64) ([]*cloudprovider.InstanceType, error) {
	settings := Settings{
		Family: userdata.FamilyOf(nodeClass), Kubelet: nodeClass.Spec.Kubelet,
		VMMemoryOverheadPercent: vmOverhead, EphemeralStorage: rootVolumeSize(nodeClass),
	}
	if p := nodeClass.Spec.InstanceStorePolicy; p != nil {
		settings.InstanceStorePolicy = *p
	}
	subnetZones := map[string]bool{}
	zoneIDs := map[string]string{}
	for _, s := range nodeClass.Status.Subnets {
		subnetZones[s.Zone] = true
		if s.ZoneID != "" {
			zoneIDs[s.Zone] = s.ZoneID
		}
	}
	out := make([]*cloudprovider.InstanceType, 0, len(described))
	for _, d := range described {
		var offerings []*cloudprovider.Offering
		onDemand, ok := prices.OnDemand(d.Name)
		if !ok {
			onDemand = pricing.Estimate(d.VCPUs, d.MemoryMiB)
		}
		for _, zone := range zones[d.Name] {
			if len(subnetZones) > 0 && !subnetZones[zone] {
				continue
			}
			spot, ok := prices.Spot(d.Name, zone)
			if !ok {
				spot = onDemand
			}
			for _, o := range []struct {
				capacityType string
				price        float64
			}{{v1.CapacityTypeSpot, spot}, {v1.CapacityTypeOnDemand, onDemand}} {
				offerings = append(offerings, &cloudprovider.Offering{
					Zone: zone, ZoneID: zoneIDs[zone], CapacityType: o.capacityType, Price: o.price,
					Available: unavailable == nil || !unavailable.IsUnavailable(d.Name, zone, o.capacityType),
				})
			}
		}
		if len(offerings) == 0 {
			continue
		}
		overhead, err := Overhead(d.Info, settings)
		if err != nil {
			return nil, fmt.Errorf("listing instance types of EC2NodeClass %s, %w", nodeClass.Name, err)
		}
		capacity := Capacity(d.Info, settings)
		if d.NvidiaGPUs > 0 {
			capacity[ResourceNvidiaGPU] = *resource.NewQuantity(d.NvidiaGPUs, resource.DecimalSI)
		}
		reqs := Requirements(d.Info, offerings)
		for k, v := range d.Labels {
			reqs[k] = []string{v}
		}
		out = append(out, &cloudprovider.InstanceType{Name: d.Name, Requirements: reqs, Offerings: offerings, Capacity: capacity, Overhead: overhead})
	}
	return out, nil
}

// Get returns the description of one instance type, read as List reads them.
func (p *Provider) Get(ctx context.Context, name string) (Described, bool, error) {
	described, _, _, err := p.describe(ctx)
	if err != nil {
		return Described{}, false, err
	}
	i := slices.IndexFunc(described, func(d Described) bool { return d.Name == name })
	if i < 0 {
		return Described{}, false, nil
	}
	return described[i], true, nil
}

// describe returns the cached descriptions and when they were read, reading them again when
// DescribeRefreshInterval has passed. A failed read with a cache keeps serving the cache.
func (p *Provider) describe(ctx context.Context) ([]Described, map[string][]string, time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	if p.described != nil && now.Sub(p.readAt) < DescribeRefreshInterval {
		return p.described, p.zones, p.readAt, nil
	}
	described, err := p.readTypes(ctx)
	if err == nil {
		var zones map[string][]string
		if zones, err = p.readZones(ctx); err == nil {
			p.described, p.zones, p.readAt = described, zones, now
		}
	}
	if err != nil && p.described == nil {
		return nil, nil, time.Time{}, err
	}
	return p.described, p.zones, p.readAt, nil
}

func (p *Provider) readTypes(ctx context.Context) ([]Described, error) {
	in := &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{
		{Name: aws.String("supported-virtualization-type"), Values: []string{"hvm"}},
		{Name: aws.String("processor-info.supported-architecture"), Values: []string{"x86_64", "arm64"}},
	}}
	var out []Described
	pages := ec2.NewDescribeInstanceTypesPaginator(p.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance types, %w", err)
		}
		for _, it := range page.InstanceTypes {
			if d, ok := Describe(it); ok {
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, func(a, b Described) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (p *Provider) readZones(ctx context.Context) (map[string][]string, error) {
	in := &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone}
	zones := map[string][]string{}
	pages := ec2.NewDescribeInstanceTypeOfferingsPaginator(p.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance type offerings, %w", err)
		}
		for _, o := range page.InstanceTypeOfferings {
			name := string(o.InstanceType)
			zones[name] = append(zones[name], aws.ToString(o.Location))
		}
	}
	for name := range zones {
		slices.Sort(zones[name])
	}
	return zones, nil
}

// Describe reads one DescribeInstanceTypes entry. It reports false for types Joiner does not
// launch (neither x86_64 nor arm64).
func Describe(it ec2types.InstanceTypeInfo) (Described, bool) {
	d := Described{Labels: map[string]string{}}
	d.Name = string(it.InstanceType)
	if it.ProcessorInfo != nil {
		for _, a := range it.ProcessorInfo.SupportedArchitectures {
			if Architecture(string(a)) != "" {
				d.Architecture = string(a)
				break
			}
		}
		if m := aws.ToString(it.ProcessorInfo.Manufacturer); m != "" {
			d.Labels[awsv1.LabelInstanceCPUManufacturer] = strings.ToLower(m)
		}
		if ghz := aws.ToFloat64(it.ProcessorInfo.SustainedClockSpeedInGhz); ghz > 0 {
			d.Labels[awsv1.LabelInstanceCPUSustainedClockSpeedMhz] = strconv.FormatInt(int64(ghz*1000+0.5), 10)
		}
	}
	if d.Architecture == "" {
		return Described{}, false
	}
	if it.VCpuInfo != nil {
		d.VCPUs = int64(aws.ToInt32(it.VCpuInfo.DefaultVCpus))
	}
	if it.MemoryInfo != nil {
		d.MemoryMiB = aws.ToInt64(it.MemoryInfo.SizeInMiB)
	}
	describeNetwork(&d, it.NetworkInfo)
	if h := string(it.Hypervisor); h != "" {
		d.Labels[awsv1.LabelInstanceHypervisor] = h
	}
	if s := it.InstanceStorageInfo; s != nil {
		d.InstanceStoreGB = aws.ToInt64(s.TotalSizeInGB)
	}
	if s := it.InstanceStorageInfo; s != nil && s.NvmeSupport != ec2types.EphemeralNvmeSupportUnsupported && aws.ToInt64(s.TotalSizeInGB) > 0 {
		d.Labels[awsv1.LabelInstanceLocalNVME] = strconv.FormatInt(aws.ToInt64(s.TotalSizeInGB), 10)
	}
	describeGPUs(&d, it.GpuInfo)
	describeAccelerators(&d, it)
	if e := it.EbsInfo; e != nil && e.EbsOptimizedInfo != nil && e.EbsOptimizedInfo.MaximumBandwidthInMbps != nil {
		d.Labels[awsv1.LabelInstanceEBSBandwidth] = strconv.FormatInt(int64(*e.EbsOptimizedInfo.MaximumBandwidthInMbps), 10)
	}
	return d, true
}

// describeGPUs adds the GPU labels and NVIDIA GPU count of the first GPU kind.
func describeGPUs(d *Described, g *ec2types.GpuInfo) {
	if g == nil || len(g.Gpus) == 0 {
		return
	}
	gpu := g.Gpus[0]
	manufacturer := strings.ToLower(aws.ToString(gpu.Manufacturer))
	d.Labels[awsv1.LabelInstanceGPUName] = strings.ToLower(aws.ToString(gpu.Name))
	d.Labels[awsv1.LabelInstanceGPUManufacturer] = manufacturer
	d.Labels[awsv1.LabelInstanceGPUCount] = strconv.FormatInt(int64(aws.ToInt32(gpu.Count)), 10)
	if gpu.MemoryInfo != nil {
		d.Labels[awsv1.LabelInstanceGPUMemory] = strconv.FormatInt(int64(aws.ToInt32(gpu.MemoryInfo.SizeInMiB)), 10)
	}
	if manufacturer == "nvidia" {
		d.NvidiaGPUs = int64(aws.ToInt32(gpu.Count))
	}
}

// describeNetwork reads the ENI limits of the default network card, its baseline bandwidth and
// whether traffic is encrypted in transit.
func describeNetwork(d *Described, n *ec2types.NetworkInfo) {
	if n == nil {
		return
	}
	d.MaxENIs = int64(aws.ToInt32(n.MaximumNetworkInterfaces))
	for _, card := range n.NetworkCards {
		if aws.ToInt32(card.NetworkCardIndex) != 0 {
			continue
		}
		if card.MaximumNetworkInterfaces != nil {
			d.MaxENIs = int64(*card.MaximumNetworkInterfaces)
		}
		if card.BaselineBandwidthInGbps != nil {
			d.Labels[awsv1.LabelInstanceNetworkBandwidth] = strconv.FormatInt(int64(*card.BaselineBandwidthInGbps*1000+0.5), 10)
		}
	}
	d.IPv4PerENI = int64(aws.ToInt32(n.Ipv4AddressesPerInterface))
	if n.EncryptionInTransitSupported != nil {
		d.Labels[awsv1.LabelInstanceEncryptionInTransitSupported] = strconv.FormatBool(*n.EncryptionInTransitSupported)
	}
}

// describeAccelerators adds the accelerator labels of AWS Neuron devices (Inferentia, Trainium)
// or, on older types, inference accelerators.
func describeAccelerators(d *Described, it ec2types.InstanceTypeInfo) {
	if n := it.NeuronInfo; n != nil && len(n.NeuronDevices) > 0 {
		dev := n.NeuronDevices[0]
		d.Labels[awsv1.LabelInstanceAcceleratorName] = strings.ToLower(aws.ToString(dev.Name))
		d.Labels[awsv1.LabelInstanceAcceleratorManufacturer] = "aws"
		d.Labels[awsv1.LabelInstanceAcceleratorCount] = strconv.FormatInt(int64(aws.ToInt32(dev.Count)), 10)
		return
	}
	if a := it.InferenceAcceleratorInfo; a != nil && len(a.Accelerators) > 0 {
		dev := a.Accelerators[0]
		d.Labels[awsv1.LabelInstanceAcceleratorName] = strings.ToLower(aws.ToString(dev.Name))
		d.Labels[awsv1.LabelInstanceAcceleratorManufacturer] = strings.ToLower(aws.ToString(dev.Manufacturer))
		d.Labels[awsv1.LabelInstanceAcceleratorCount] = strconv.FormatInt(int64(aws.ToInt32(dev.Count)), 10)
	}
}

// rootVolumeSize is the size of the node class's root volume: the mapping marked rootVolume,
// else defaultEphemeralStorage.
func rootVolumeSize(nodeClass *awsv1.EC2NodeClass) resource.Quantity {
	for _, m := range nodeClass.Spec.BlockDeviceMappings {
		if m.RootVolume && m.EBS != nil && m.EBS.VolumeSize != nil {
			return m.EBS.VolumeSize.DeepCopy()
		}
	}
	return defaultEphemeralStorage.DeepCopy()
}
