package pricing

import (
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joinerhq/joiner/awsemu/emutest"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// emulator is an emulated AWS with the provider's clients pointed at it.
const denyPrices = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},
{"Effect":"Deny","Action":["pricing:GetProducts","ec2:DescribeSpotPriceHistory"],"Resource":"*"}]}`

func TestPricesFromTheAPIs(t *testing.T) {
	e := emutest.Start(t)
	p := NewProvider(e.Clients.Pricing, e.Clients.EC2, "us-west-2", e.Clock)
	if err := p.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ instanceType, zone string }{
		{"m5.large", "us-west-2a"}, {"c6g.xlarge", "us-west-2b"}, {"t3.micro", "us-west-2c"}, {"r5.2xlarge", "us-west-2d"},
	}
	for _, tt := range tests {
		it, ok := cat.Type(tt.instanceType)
		if !ok {
			t.Fatalf("%s not in the catalogue", tt.instanceType)
		}
		if got, ok := p.OnDemand(tt.instanceType); !ok || math.Abs(got-it.OnDemandUSD["us-west-2"]) > 1e-9 {
			t.Errorf("OnDemand(%s) = %v, %v; want %v", tt.instanceType, got, ok, it.OnDemandUSD["us-west-2"])
		}
		want, _ := it.SpotPrice(tt.zone, e.Clock.Now())
		if got, ok := p.Spot(tt.instanceType, tt.zone); !ok || math.Abs(got-want) > 1e-6 {
			t.Errorf("Spot(%s, %s) = %v, %v; want %v", tt.instanceType, tt.zone, got, ok, want)
		}
	}
	if _, ok := p.Spot("m5.large", "eu-west-1a"); ok {
		t.Error("Spot of another region's zone is known")
	}
}

// TestRefreshIsDueOnTheClock: a refresh within the interval calls nothing (so a denial is not
// seen), one after it does, and a failed refresh keeps the prices read before.
func TestRefreshIsDueOnTheClock(t *testing.T) {
	e := emutest.Start(t)
	p := NewProvider(e.Clients.Pricing, e.Clients.EC2, "us-west-2", e.Clock)
	if err := p.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	before, _ := p.Spot("m5.large", "us-west-2a")
	e.SetControllerPolicy(t, denyPrices)
	e.Clock.Step(SpotRefreshInterval - time.Second)
	if err := p.Refresh(t.Context()); err != nil {
		t.Errorf("Refresh before anything is due: %v", err)
	}
	e.Clock.Step(time.Second)
	if err := p.Refresh(t.Context()); err == nil {
		t.Error("Refresh of due spot prices under a denying policy succeeded")
	}
	if got, ok := p.Spot("m5.large", "us-west-2a"); !ok || got != before {
		t.Errorf("after a failed refresh Spot = %v, %v; want the previous %v", got, ok, before)
	}
	if _, ok := p.OnDemand("m5.large"); !ok {
		t.Error("on-demand prices lost after a failed spot refresh")
	}
}

func TestEstimate(t *testing.T) {
	tests := []struct {
		vcpus, memoryMiB int64
		want             float64
	}{
		{2, 8192, 0.1032},
		{4, 8192, 0.1704},
		{16, 131072, 1.1136},
	}
	for _, tt := range tests {
		if got := Estimate(tt.vcpus, tt.memoryMiB); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Estimate(%d, %d) = %v, want %v", tt.vcpus, tt.memoryMiB, got, tt.want)
		}
	}
}

func TestVolumesHourly(t *testing.T) {
	size := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	typ := func(s string) *string { return &s }
	num := func(n int64) *int64 { return &n }
	tests := []struct {
		name     string
		mappings []awsv1.BlockDeviceMapping
		want     float64 // $/month
		err      string
	}{
		{"gp3 20Gi root volume", []awsv1.BlockDeviceMapping{{EBS: &awsv1.BlockDevice{VolumeSize: size("20Gi"), VolumeType: typ("gp3")}}}, 1.60, ""},
		{"gp3 with IOPS and throughput above the included", []awsv1.BlockDeviceMapping{{EBS: &awsv1.BlockDevice{VolumeSize: size("100Gi"), VolumeType: typ("gp3"), IOPS: num(4000), Throughput: num(250)}}}, 8 + 5 + 5, ""},
		{"gp3 at the included IOPS and throughput", []awsv1.BlockDeviceMapping{{EBS: &awsv1.BlockDevice{VolumeSize: size("50Gi"), VolumeType: typ("gp3"), IOPS: num(3000), Throughput: num(125)}}}, 4, ""},
		{"no type is gp2, as in EC2", []awsv1.BlockDeviceMapping{{EBS: &awsv1.BlockDevice{VolumeSize: size("10Gi")}}}, 1, ""},
		{"Bottlerocket's two volumes, instance store ignored", []awsv1.BlockDeviceMapping{
			{EBS: &awsv1.BlockDevice{VolumeSize: size("4Gi"), VolumeType: typ("gp3")}},
			{EBS: &awsv1.BlockDevice{VolumeSize: size("20Gi"), VolumeType: typ("gp3")}}, {}}, 1.92, ""},
		{"io2 with IOPS", []awsv1.BlockDeviceMapping{{EBS: &awsv1.BlockDevice{VolumeSize: size("8Gi"), VolumeType: typ("io2"), IOPS: num(1000)}}}, 1 + 65, ""},
		{"unknown type", []awsv1.BlockDeviceMapping{{EBS: &awsv1.BlockDevice{VolumeSize: size("8Gi"), VolumeType: typ("gp9")}}}, 0, `blockDeviceMappings[0], pricing EBS volume type "gp9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VolumesHourly(tt.mappings)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got*HoursPerMonth-tt.want) > 1e-9 {
				t.Errorf("VolumesHourly = %v/h = %v/month, want %v/month", got, got*HoursPerMonth, tt.want)
			}
		})
	}
}
