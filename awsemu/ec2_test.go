package awsemu_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/pkg/catalog"
)

func TestDescribeInstanceTypesPaginates(t *testing.T) {
	e := newEnv(t)
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, it := range cat.Types {
		if len(it.Offerings[e.region]) > 0 {
			want = append(want, it.Name)
		}
	}
	var got []string
	pages := 0
	p := ec2.NewDescribeInstanceTypesPaginator(e.ec2, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(100)})
	for p.HasMorePages() {
		out, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range out.InstanceTypes {
			got = append(got, string(it.InstanceType))
		}
	}
	if !slices.Equal(got, want) || pages != (len(want)+99)/100 {
		t.Errorf("got %d types in %d pages, want %d types in %d pages", len(got), pages, len(want), (len(want)+99)/100)
	}
}

func TestDescribeInstanceTypesFacts(t *testing.T) {
	e := newEnv(t)
	out, err := e.ec2.DescribeInstanceTypes(t.Context(), &ec2.DescribeInstanceTypesInput{
		InstanceTypes: []ec2types.InstanceType{"m5.large", "g5.12xlarge", "t4g.medium", "i4i.metal"},
	})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ec2types.InstanceTypeInfo{}
	for _, it := range out.InstanceTypes {
		byName[string(it.InstanceType)] = it
	}
	m5 := byName["m5.large"]
	if *m5.VCpuInfo.DefaultVCpus != 2 || *m5.MemoryInfo.SizeInMiB != 8192 || *m5.NetworkInfo.MaximumNetworkInterfaces != 3 ||
		*m5.NetworkInfo.Ipv4AddressesPerInterface != 10 || m5.Hypervisor != ec2types.InstanceTypeHypervisorNitro ||
		m5.ProcessorInfo.SupportedArchitectures[0] != ec2types.ArchitectureTypeX8664 {
		t.Errorf("m5.large: %+v", m5)
	}
	g5 := byName["g5.12xlarge"]
	if g5.GpuInfo == nil || *g5.GpuInfo.Gpus[0].Count != 4 || *g5.GpuInfo.Gpus[0].Name != "A10G" || g5.InstanceStorageInfo == nil {
		t.Errorf("g5.12xlarge GPUs or storage missing: %+v", g5)
	}
	if byName["t4g.medium"].ProcessorInfo.SupportedArchitectures[0] != ec2types.ArchitectureTypeArm64 || !*byName["t4g.medium"].BurstablePerformanceSupported {
		t.Errorf("t4g.medium: %+v", byName["t4g.medium"])
	}
	if metal := byName["i4i.metal"]; !*metal.BareMetal || metal.Hypervisor != "" {
		t.Errorf("i4i.metal: bare metal %v hypervisor %q", *metal.BareMetal, metal.Hypervisor)
	}
}

func TestDescribeInstanceTypesFilters(t *testing.T) {
	e := newEnv(t)
	out, err := e.ec2.DescribeInstanceTypes(t.Context(), &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{
		{Name: aws.String("processor-info.supported-architecture"), Values: []string{"arm64"}},
		{Name: aws.String("instance-type"), Values: []string{"t4g.*", "c7g.x*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range out.InstanceTypes {
		names = append(names, string(it.InstanceType))
	}
	want := []string{"c7g.xlarge", "t4g.2xlarge", "t4g.large", "t4g.medium", "t4g.micro", "t4g.nano", "t4g.small", "t4g.xlarge"}
	if !slices.Equal(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
	_, err = e.ec2.DescribeInstanceTypes(t.Context(), &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{{Name: aws.String("colour"), Values: []string{"red"}}}})
	if code := errorCode(t, err); code != "InvalidParameterValue" {
		t.Errorf("unknown filter: %s", code)
	}
	_, err = e.ec2.DescribeInstanceTypes(t.Context(), &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m5.huge"}})
	if code := errorCode(t, err); code != "InvalidInstanceType" {
		t.Errorf("unknown type: %s", code)
	}
}

func TestDescribeInstanceTypeOfferings(t *testing.T) {
	e := newEnv(t)
	zonesOf := func(client *ec2.Client) map[string][]string {
		out := map[string][]string{}
		p := ec2.NewDescribeInstanceTypeOfferingsPaginator(client, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone})
		for p.HasMorePages() {
			page, err := p.NextPage(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.InstanceTypeOfferings {
				out[string(o.InstanceType)] = append(out[string(o.InstanceType)], *o.Location)
			}
		}
		return out
	}
	west := zonesOf(e.ec2)
	zones := e.zones()
	if got := west["m5.large"]; len(got) != zones {
		t.Errorf("m5.large in %v, want all %d zones of %s", got, zones, e.region)
	}
	gaps := 0
	for _, in := range west {
		if len(in) < zones {
			gaps++
		}
	}
	if gaps == 0 {
		t.Error("every type is offered in every zone: the catalogue has no gaps")
	}
	eu := zonesOf(ec2.NewFromConfig(e.config(t, "eu-west-1", "AKIDJOINERCONTROLLER")))
	if got := eu["m5.large"]; len(got) != 3 || !strings.HasPrefix(got[0], "eu-west-1") {
		t.Errorf("m5.large in eu-west-1: %v", got)
	}
	if _, ok := eu["p5.48xlarge"]; ok {
		t.Error("p5.48xlarge is offered in eu-west-1, which the catalogue excludes")
	}
}

func TestDescribeAvailabilityZones(t *testing.T) {
	e := newEnv(t)
	out, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, z := range out.AvailabilityZones {
		got = append(got, *z.ZoneName+"="+*z.ZoneId)
	}
	want := map[string][]string{
		"us-west-2": {"us-west-2a=usw2-az2", "us-west-2b=usw2-az1", "us-west-2c=usw2-az3", "us-west-2d=usw2-az4"},
		"us-east-1": {"us-east-1a=use1-az4", "us-east-1b=use1-az6", "us-east-1c=use1-az1", "us-east-1d=use1-az2", "us-east-1e=use1-az3", "us-east-1f=use1-az5"},
	}[e.region]
	if want != nil && !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// zones is the number of zones of the suite's region: the seed gives each a subnet.
func (e *env) zones() int {
	n := 0
	e.state.View(func(w *state.World) { n = len(w.Regions[e.region].Zones) })
	return n
}

func TestDescribeSubnetsAndSecurityGroupsByTag(t *testing.T) {
	e := newEnv(t)
	zones := e.zones()
	tests := []struct {
		name    string
		filters []ec2types.Filter
		subnets int
		groups  int
	}{
		{"discovery tag", []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"demo"}}}, zones, 1},
		{"wildcard value", []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"de*"}}}, zones, 1},
		{"other cluster", []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"prod"}}}, 0, 0},
		{"tag-key", []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"karpenter.sh/discovery"}}}, zones, 1},
		{"no filter", nil, zones, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subnets, err := e.ec2.DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{Filters: tt.filters})
			if err != nil {
				t.Fatal(err)
			}
			groups, err := e.ec2.DescribeSecurityGroups(t.Context(), &ec2.DescribeSecurityGroupsInput{Filters: tt.filters})
			if err != nil {
				t.Fatal(err)
			}
			if len(subnets.Subnets) != tt.subnets || len(groups.SecurityGroups) != tt.groups {
				t.Errorf("got %d subnets and %d groups, want %d and %d", len(subnets.Subnets), len(groups.SecurityGroups), tt.subnets, tt.groups)
			}
			for _, s := range subnets.Subnets {
				if *s.AvailableIpAddressCount <= 0 || s.AvailabilityZone == nil || s.VpcId == nil {
					t.Errorf("subnet %s lacks facts", *s.SubnetId)
				}
			}
		})
	}
	_, err := e.ec2.DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-nope"}})
	if code := errorCode(t, err); code != "InvalidSubnetID.NotFound" {
		t.Errorf("unknown subnet: %s", code)
	}
}

func TestDescribeImages(t *testing.T) {
	e := newEnv(t)
	out, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{
		Owners:  []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-arm64-standard-1.33-*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Images) != 2 {
		t.Fatalf("got %d images, want the 2 releases", len(out.Images))
	}
	for _, img := range out.Images {
		if img.Architecture != ec2types.ArchitectureValuesArm64 || *img.OwnerId != "602401143452" || img.State != ec2types.ImageStateAvailable {
			t.Errorf("image %s: %+v", *img.ImageId, img)
		}
		if _, err := time.Parse(time.RFC3339, *img.CreationDate); err != nil {
			t.Errorf("creation date %q: %v", *img.CreationDate, err)
		}
	}
	_, err = e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{ImageIds: []string{"ami-0123"}})
	if code := errorCode(t, err); code != "InvalidAMIID.NotFound" {
		t.Errorf("unknown image: %s", code)
	}
}

// TestDeregisterImage: a deregistered image leaves DescribeImages at once, by filter and by id,
// and deregistering it again is InvalidAMIID.NotFound, as in EC2.
func TestDeregisterImage(t *testing.T) {
	e := newEnv(t)
	byName := &ec2.DescribeImagesInput{
		Owners:  []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-arm64-standard-1.33-*"}}},
	}
	out, err := e.ec2.DescribeImages(t.Context(), byName)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Images) != 2 {
		t.Fatalf("got %d images, want the 2 releases", len(out.Images))
	}
	gone := out.Images[0].ImageId
	if _, err := e.ec2.DeregisterImage(t.Context(), &ec2.DeregisterImageInput{ImageId: gone}); err != nil {
		t.Fatal(err)
	}
	if out, err = e.ec2.DescribeImages(t.Context(), byName); err != nil {
		t.Fatal(err)
	}
	if len(out.Images) != 1 || *out.Images[0].ImageId == *gone {
		t.Errorf("after deregistering %s, DescribeImages lists %d images", *gone, len(out.Images))
	}
	_, err = e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{ImageIds: []string{*gone}})
	if code := errorCode(t, err); code != "InvalidAMIID.NotFound" {
		t.Errorf("deregistered image by id: %s", code)
	}
	_, err = e.ec2.DeregisterImage(t.Context(), &ec2.DeregisterImageInput{ImageId: gone})
	if code := errorCode(t, err); code != "InvalidAMIID.NotFound" {
		t.Errorf("deregistering twice: %s", code)
	}
}

func TestDescribeSpotPriceHistory(t *testing.T) {
	e := newEnv(t)
	e.clock.SetTime(t0.Add(30 * time.Minute))
	out, err := e.ec2.DescribeSpotPriceHistory(t.Context(), &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes:       []ec2types.InstanceType{"m5.large"},
		ProductDescriptions: []string{"Linux/UNIX"},
		StartTime:           aws.Time(t0.Add(-3 * time.Hour)),
	})
	if err != nil {
		t.Fatal(err)
	}
	perZone := map[string][]string{}
	for _, p := range out.SpotPriceHistory {
		perZone[*p.AvailabilityZone] = append(perZone[*p.AvailabilityZone], *p.SpotPrice)
	}
	if len(perZone) != e.zones() {
		t.Fatalf("prices for zones %v, want %d zones", perZone, e.zones())
	}
	for z, prices := range perZone {
		if len(prices) != 4 {
			t.Errorf("%s: %d hourly points, want 4", z, len(prices))
		}
		if len(slices.Compact(slices.Clone(prices))) < 2 {
			t.Errorf("%s: spot price does not move: %v", z, prices)
		}
	}
}

func TestDescribeCapacityReservations(t *testing.T) {
	e := newEnv(t)
	out, err := e.ec2.DescribeCapacityReservations(t.Context(), &ec2.DescribeCapacityReservationsInput{
		Filters: []ec2types.Filter{{Name: aws.String("state"), Values: []string{"active"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.CapacityReservations) != 0 {
		t.Errorf("reservations: %+v", out.CapacityReservations)
	}
	_, err = e.ec2.DescribeCapacityReservations(t.Context(), &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-0123"}})
	wantCode(t, err, "InvalidCapacityReservationId.NotFound", "unknown reservation")
}
