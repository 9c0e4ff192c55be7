package instancetype

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu/emutest"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// newTestProvider starts an emulator and returns a provider reading it, with prices refreshed.
func newTestProvider(t testing.TB) (*Provider, *pricing.Provider, *clocktesting.FakeClock) {
	t.Helper()
	e := emutest.Start(t)
	c, clk := e.Clients, e.Clock
	prices := pricing.NewProvider(c.Pricing, c.EC2, "us-west-2", clk)
	if err := prices.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	return NewProvider(c.EC2, prices, NewUnavailableOfferings(clk), clk, 0), prices, clk
}

func byName(its []*cloudprovider.InstanceType) map[string]*cloudprovider.InstanceType {
	out := map[string]*cloudprovider.InstanceType{}
	for _, it := range its {
		out[it.Name] = it
	}
	return out
}

// TestDescribeMatchesHandTable reads, through the SDK, the types whose allocatable
// TestAllocatable computes by hand, and checks that EC2's description gives the same inputs and
// List the same allocatable.
func TestDescribeMatchesHandTable(t *testing.T) {
	p, _, _ := newTestProvider(t)
	nodeClass := &awsv1.EC2NodeClass{}
	its, err := p.List(t.Context(), nodeClass)
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 667 {
		t.Errorf("List returned %d instance types, want the catalogue's 667 amd64/arm64 types of us-west-2 (all pages)", len(its))
	}
	got := byName(its)
	tests := []struct {
		info      Info
		arch      string
		wantAlloc allocatable
	}{
		{t3micro, "x86_64", allocatable{1930, 548 * mi, 4, 17 * gi}},
		{t3small, "x86_64", allocatable{1930, 1418 * mi, 11, 17 * gi}},
		{t3medium, "x86_64", allocatable{1930, 3246 * mi, 17, 17 * gi}},
		{t2small, "x86_64", allocatable{940, 1418 * mi, 11, 17 * gi}},
		{t4gmedium, "arm64", allocatable{1930, 3246 * mi, 17, 17 * gi}},
		{m5large, "x86_64", allocatable{1930, 6903 * mi, 29, 17 * gi}},
		{m5xlarge, "x86_64", allocatable{3920, 14162 * mi, 58, 17 * gi}},
		{m54xlarge, "x86_64", allocatable{15890, 57691 * mi, 234, 17 * gi}},
		{c5large, "x86_64", allocatable{1930, 3114 * mi, 29, 17 * gi}},
		{c6gxlarge, "arm64", allocatable{3920, 6584 * mi, 58, 17 * gi}},
		{r52xlarge, "x86_64", allocatable{7910, 59627 * mi, 58, 17 * gi}},
	}
	for _, tt := range tests {
		t.Run(tt.info.Name, func(t *testing.T) {
			d, ok, err := p.Get(t.Context(), tt.info.Name)
			if err != nil || !ok {
				t.Fatalf("Get: %v, %v", ok, err)
			}
			want := tt.info
			want.Architecture = tt.arch
			if diff := cmp.Diff(want, d.Info); diff != "" {
				t.Errorf("described Info (-want +got):\n%s", diff)
			}
			it := got[tt.info.Name]
			if it == nil {
				t.Fatal("not listed")
			}
			a := it.Allocatable()
			gotAlloc := allocatable{CPUMilli: qty(a, corev1.ResourceCPU).MilliValue(), Memory: qty(a, corev1.ResourceMemory).Value(),
				Pods: qty(a, corev1.ResourcePods).Value(), Ephemeral: qty(a, corev1.ResourceEphemeralStorage).Value()}
			if diff := cmp.Diff(tt.wantAlloc, gotAlloc); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
		})
	}
}

func qty(l corev1.ResourceList, name corev1.ResourceName) *resource.Quantity {
	q := l[name]
	return &q
}

// TestListOfferings: offerings only in the zones of the node class's subnets, with the subnets'
// zone IDs, spot and on-demand each priced from the pricing provider, unavailable while the cache says so; hardware labels
// and GPU capacity from the description; the root volume as ephemeral storage.
func TestListOfferings(t *testing.T) {
	p, prices, _ := newTestProvider(t)
	nodeClass := &awsv1.EC2NodeClass{
		Spec: awsv1.EC2NodeClassSpec{BlockDeviceMappings: []awsv1.BlockDeviceMapping{
			{RootVolume: true, EBS: &awsv1.BlockDevice{VolumeSize: ptrTo(resource.MustParse("100Gi"))}},
		}},
		Status: awsv1.EC2NodeClassStatus{Subnets: []awsv1.Subnet{{ID: "subnet-a", Zone: "us-west-2a", ZoneID: "usw2-az1"}, {ID: "subnet-b", Zone: "us-west-2b", ZoneID: "usw2-az2"}}},
	}
	p.unavailable.MarkUnavailable("m5.large", "us-west-2b", "spot")
	its, err := p.List(t.Context(), nodeClass)
	if err != nil {
		t.Fatal(err)
	}
	m5 := byName(its)["m5.large"]
	spotA, _ := prices.Spot("m5.large", "us-west-2a")
	spotB, _ := prices.Spot("m5.large", "us-west-2b")
	od, _ := prices.OnDemand("m5.large")
	want := []*cloudprovider.Offering{
		{Zone: "us-west-2a", ZoneID: "usw2-az1", CapacityType: "spot", Price: spotA, Available: true},
		{Zone: "us-west-2a", ZoneID: "usw2-az1", CapacityType: "on-demand", Price: od, Available: true},
		{Zone: "us-west-2b", ZoneID: "usw2-az2", CapacityType: "spot", Price: spotB, Available: false},
		{Zone: "us-west-2b", ZoneID: "usw2-az2", CapacityType: "on-demand", Price: od, Available: true},
	}
	if diff := cmp.Diff(want, m5.Offerings); diff != "" {
		t.Errorf("m5.large offerings (-want +got):\n%s", diff)
	}
	for key, value := range map[string]string{
		awsv1.LabelInstanceCPUManufacturer: "intel", awsv1.LabelInstanceHypervisor: "nitro",
		"topology.kubernetes.io/zone": "us-west-2a", "kubernetes.io/arch": "amd64",
		awsv1.LabelTopologyZoneID: "usw2-az1", awsv1.LabelInstanceTenancy: "default",
	} {
		if vs := m5.Requirements[key]; len(vs) == 0 || vs[0] != value {
			t.Errorf("m5.large requirement %s = %v, want first value %s", key, vs, value)
		}
	}
	if got := m5.Capacity[corev1.ResourceEphemeralStorage]; got.Cmp(resource.MustParse("100Gi")) != 0 {
		t.Errorf("ephemeral-storage capacity %s, want the 100Gi root volume", got.String())
	}
	for _, it := range its {
		if it.Requirements[awsv1.LabelInstanceGPUManufacturer] != nil && it.Requirements[awsv1.LabelInstanceGPUManufacturer][0] == "nvidia" {
			if q := it.Capacity[ResourceNvidiaGPU]; q.Value() < 1 {
				t.Errorf("%s: nvidia GPU type without nvidia.com/gpu capacity", it.Name)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestListWithoutPrices: when neither pricing source answered, every offering still has a price
// (on-demand from pricing.Estimate, spot the same) and stays available.
func TestListWithoutPrices(t *testing.T) {
	p, _, clk := newTestProvider(t)
	p.prices = pricing.NewProvider(nil, nil, "us-west-2", clk) // never refreshed: knows no price
	its, err := p.List(t.Context(), &awsv1.EC2NodeClass{})
	if err != nil {
		t.Fatal(err)
	}
	m5 := byName(its)["m5.large"]
	want := pricing.Estimate(2, 8192)
	for _, o := range m5.Offerings {
		if o.Price != want || !o.Available {
			t.Errorf("offering %+v, want price %v and available", o, want)
		}
	}
}

// TestDescribe reads DescribeInstanceTypes entries the emulator's catalogue does not carry
// (accelerators, bandwidths) as EC2 documents them.
func TestDescribe(t *testing.T) {
	tests := []struct {
		name   string
		in     ec2types.InstanceTypeInfo
		ok     bool
		labels map[string]string
		gpus   int64
	}{
		{name: "inf2.xlarge", in: ec2types.InstanceTypeInfo{
			InstanceType:  "inf2.xlarge",
			ProcessorInfo: &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{"x86_64"}, Manufacturer: aws.String("AMD"), SustainedClockSpeedInGhz: aws.Float64(2.95)},
			NeuronInfo:    &ec2types.NeuronInfo{NeuronDevices: []ec2types.NeuronDeviceInfo{{Name: aws.String("Inferentia2"), Count: aws.Int32(1)}}},
			EbsInfo:       &ec2types.EbsInfo{EbsOptimizedInfo: &ec2types.EbsOptimizedInfo{MaximumBandwidthInMbps: aws.Int32(10000)}},
			NetworkInfo: &ec2types.NetworkInfo{NetworkCards: []ec2types.NetworkCardInfo{
				{NetworkCardIndex: aws.Int32(0), MaximumNetworkInterfaces: aws.Int32(4), BaselineBandwidthInGbps: aws.Float64(2.083)},
			}, Ipv4AddressesPerInterface: aws.Int32(15)},
		}, ok: true, labels: map[string]string{
			awsv1.LabelInstanceAcceleratorName: "inferentia2", awsv1.LabelInstanceAcceleratorManufacturer: "aws", awsv1.LabelInstanceAcceleratorCount: "1",
			awsv1.LabelInstanceCPUManufacturer: "amd", awsv1.LabelInstanceCPUSustainedClockSpeedMhz: "2950",
			awsv1.LabelInstanceEBSBandwidth: "10000", awsv1.LabelInstanceNetworkBandwidth: "2083",
		}},
		{name: "g5.xlarge", in: ec2types.InstanceTypeInfo{
			InstanceType:  "g5.xlarge",
			ProcessorInfo: &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{"x86_64"}},
			GpuInfo:       &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Name: aws.String("A10G"), Manufacturer: aws.String("NVIDIA"), Count: aws.Int32(1), MemoryInfo: &ec2types.GpuDeviceMemoryInfo{SizeInMiB: aws.Int32(24576)}}}},
		}, ok: true, gpus: 1, labels: map[string]string{
			awsv1.LabelInstanceGPUName: "a10g", awsv1.LabelInstanceGPUManufacturer: "nvidia", awsv1.LabelInstanceGPUCount: "1", awsv1.LabelInstanceGPUMemory: "24576",
		}},
		{name: "mac1.metal", in: ec2types.InstanceTypeInfo{
			InstanceType:  "mac1.metal",
			ProcessorInfo: &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{"x86_64_mac"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := Describe(tt.in)
			if ok != tt.ok {
				t.Fatalf("Describe ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tt.labels, d.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if d.NvidiaGPUs != tt.gpus {
				t.Errorf("NVIDIA GPUs %d, want %d", d.NvidiaGPUs, tt.gpus)
			}
		})
	}
}

// TestFromCatalogMatchesEC2: the built-in catalogue read directly gives, type for type, what List
// reads from EC2 (the emulator serving the same catalogue) in the same region at the same time:
// labels, capacity, overhead, and offerings with their prices.
func TestFromCatalogMatchesEC2(t *testing.T) {
	p, _, clk := newTestProvider(t)
	nodeClass := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}
	fromEC2, err := p.List(t.Context(), nodeClass)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	fromCatalog, err := FromCatalog(cat, "us-west-2", nodeClass, clk.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromCatalog) != len(fromEC2) {
		t.Errorf("FromCatalog lists %d types, EC2 %d", len(fromCatalog), len(fromEC2))
	}
	want := byName(fromEC2)
	for _, it := range fromCatalog {
		w, ok := want[it.Name]
		if !ok {
			t.Errorf("%s is in the catalogue's list but not EC2's", it.Name)
			continue
		}
		if diff := cmp.Diff(w, it); diff != "" {
			t.Errorf("%s (-EC2 +catalogue):\n%s", it.Name, diff)
		}
	}
	if _, err := FromCatalog(cat, "mars-north-1", nodeClass, clk.Now(), 0); err == nil || !strings.Contains(err.Error(), `region "mars-north-1" is not in the built-in catalogue`) {
		t.Errorf("unknown region: error %v", err)
	}
}
