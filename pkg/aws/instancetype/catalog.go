package instancetype

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// FromCatalog lists the instance types of the built-in catalogue in region as List would read
// them from EC2 there: the types offered in the region's zones, on-demand at the catalogue's
// regional price, spot at its price in each zone at time at, with capacity and overhead under
// the node class's settings (every offering available; the node class's subnets are not
// resolved, so every zone of the region counts). It lets `joiner simulate` plan without an AWS
// account.
func FromCatalog(cat *catalog.Catalog, region string, nodeClass *awsv1.EC2NodeClass, at time.Time, vmMemoryOverheadPercent float64) ([]*cloudprovider.InstanceType, error) {
	if _, ok := cat.Region(region); !ok {
		names := make([]string, len(cat.Regions))
		for i, r := range cat.Regions {
			names[i] = r.Name
		}
		return nil, fmt.Errorf("region %q is not in the built-in catalogue: use one of %v", region, names)
	}
	if vmMemoryOverheadPercent == 0 {
		vmMemoryOverheadPercent = DefaultVMMemoryOverheadPercent
	}
	var described []Described
	zones := map[string][]string{}
	for _, t := range cat.Types {
		if len(t.Offerings[region]) == 0 {
			continue
		}
		d, ok := Describe(catalogInfo(t))
		if !ok {
			continue
		}
		described = append(described, d)
		zones[t.Name] = t.Offerings[region]
	}
	return build(described, zones, catalogPrices{cat: cat, region: region, at: at}, nil, nodeClass, vmMemoryOverheadPercent)
}

// catalogInfo is the DescribeInstanceTypes entry of a catalogue type: the facts Describe reads.
func catalogInfo(t catalog.InstanceType) ec2types.InstanceTypeInfo {
	info := ec2types.InstanceTypeInfo{
		InstanceType: ec2types.InstanceType(t.Name),
		ProcessorInfo: &ec2types.ProcessorInfo{
			SupportedArchitectures: []ec2types.ArchitectureType{ec2types.ArchitectureType(t.Architecture)},
			Manufacturer:           aws.String(t.Manufacturer),
		},
		VCpuInfo:   &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(t.VCPU)},
		MemoryInfo: &ec2types.MemoryInfo{SizeInMiB: aws.Int64(t.MemoryMiB)},
		NetworkInfo: &ec2types.NetworkInfo{
			MaximumNetworkInterfaces:  aws.Int32(t.MaxENIs),
			Ipv4AddressesPerInterface: aws.Int32(t.IPv4PerENI),
			NetworkCards:              []ec2types.NetworkCardInfo{{NetworkCardIndex: aws.Int32(0), MaximumNetworkInterfaces: aws.Int32(t.MaxENIs)}},
			// as EC2 reports for Nitro and bare-metal types
			EncryptionInTransitSupported: aws.Bool(t.Hypervisor == catalog.HypervisorNitro || t.BareMetal),
		},
		Hypervisor: ec2types.InstanceTypeHypervisor(t.Hypervisor),
	}
	if t.ClockGHz > 0 {
		info.ProcessorInfo.SustainedClockSpeedInGhz = aws.Float64(t.ClockGHz)
	}
	if s := t.LocalStorage; s != nil {
		nvme := ec2types.EphemeralNvmeSupportUnsupported
		if s.NVMe {
			nvme = ec2types.EphemeralNvmeSupportRequired
		}
		info.InstanceStorageInfo = &ec2types.InstanceStorageInfo{TotalSizeInGB: aws.Int64(s.TotalGB()), NvmeSupport: nvme}
	}
	if g := t.GPUs; g != nil {
		info.GpuInfo = &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{
			Name: aws.String(g.Name), Manufacturer: aws.String(g.Manufacturer), Count: aws.Int32(g.Count),
			MemoryInfo: &ec2types.GpuDeviceMemoryInfo{SizeInMiB: aws.Int32(int32(g.MemoryMiB))},
		}}}
	}
	return info
}

// catalogPrices are the catalogue's prices in one region at one time.
type catalogPrices struct {
	cat    *catalog.Catalog
	region string
	at     time.Time
}

func (p catalogPrices) OnDemand(name string) (float64, bool) {
	t, ok := p.cat.Type(name)
	if !ok {
		return 0, false
	}
	price, ok := t.OnDemandUSD[p.region]
	return price, ok
}

func (p catalogPrices) Spot(name, zone string) (float64, bool) {
	t, ok := p.cat.Type(name)
	if !ok {
		return 0, false
	}
	return t.SpotPrice(zone, p.at)
}
