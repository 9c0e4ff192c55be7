package awsemu_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// TestEveryRegion runs the calls a node autoscaler makes, through the SDK, in every region of
// the catalogue: zones with their ids, offerings, discovery, images and their SSM parameters, the
// cluster, prices, and a launch that boots and joins. The whole suite runs in one region with
// AWSEMU_TEST_REGION=us-east-1 go test ./awsemu/.
func TestEveryRegion(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cat.Regions {
		t.Run(r.Name, func(t *testing.T) {
			e := newEnvIn(t, state.DefaultSeed(), r.Name)
			checkRegionZones(t, e, r)
			f := e.fixture(t)
			if len(f.subnets) != len(r.Zones) || f.group == "" || f.amd64AMI == "" || f.arm64AMI == "" {
				t.Fatalf("discovery found %v, group %q, images %q %q", f.subnets, f.group, f.amd64AMI, f.arm64AMI)
			}
			checkRegionServices(t, e, r, f)
			id := e.runAL2(t, f.subnets[r.Zones[0].Name], ec2types.InstanceTypeM5Large, "/etc/eks/bootstrap.sh demo")
			e.boot(t)
			if i := e.instance(id); i.BootPhase != state.BootJoined || i.Zone != r.Zones[0].Name {
				t.Errorf("instance %s in %s: phase %q reason %q", id, i.Zone, i.BootPhase, i.BootReason)
			}
		})
	}
}

// checkRegionZones checks the region's zones, with their ids, and that m5.large is in each.
func checkRegionZones(t *testing.T, e *env, r catalog.Region) {
	t.Helper()
	zones, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(zones.AvailabilityZones) != len(r.Zones) {
		t.Fatalf("%d zones, want %d", len(zones.AvailabilityZones), len(r.Zones))
	}
	for i, z := range zones.AvailabilityZones {
		if *z.ZoneName != r.Zones[i].Name || *z.ZoneId != r.Zones[i].ID || *z.RegionName != r.Name {
			t.Errorf("zone %s (%s) in %s, want %s (%s)", *z.ZoneName, *z.ZoneId, *z.RegionName, r.Zones[i].Name, r.Zones[i].ID)
		}
	}
	offerings, err := e.ec2.DescribeInstanceTypeOfferings(t.Context(), &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone,
		Filters:      []ec2types.Filter{{Name: aws.String("instance-type"), Values: []string{"m5.large"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(offerings.InstanceTypeOfferings) != len(r.Zones) {
		t.Errorf("m5.large offered in %d zones, want %d", len(offerings.InstanceTypeOfferings), len(r.Zones))
	}
}

// checkRegionServices checks the region's SSM image parameter, its EKS cluster and its prices.
func checkRegionServices(t *testing.T, e *env, r catalog.Region, f fixture) {
	t.Helper()
	ctx := t.Context()
	param, err := ssm.NewFromConfig(e.config(t, r.Name, "AKIDJOINERCONTROLLER")).GetParameter(ctx, &ssm.GetParameterInput{
		Name: aws.String("/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id")})
	if err != nil {
		t.Fatal(err)
	}
	if *param.Parameter.Value != f.amd64AMI {
		t.Errorf("SSM names %s, DescribeImages %s", *param.Parameter.Value, f.amd64AMI)
	}
	cluster, err := eks.NewFromConfig(e.config(t, r.Name, "AKIDJOINERCONTROLLER")).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(*cluster.Cluster.Arn, "arn:aws:eks:"+r.Name+":") {
		t.Errorf("cluster %s", *cluster.Cluster.Arn)
	}
	products, err := pricing.NewFromConfig(e.config(t, "us-east-1", "AKIDJOINERCONTROLLER")).GetProducts(ctx, &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"),
		Filters: []pricingtypes.Filter{{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("regionCode"), Value: aws.String(r.Name)},
			{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("instanceType"), Value: aws.String("m5.large")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var product struct {
		Product struct {
			Attributes map[string]string `json:"attributes"`
		} `json:"product"`
	}
	if len(products.PriceList) != 1 || json.Unmarshal([]byte(products.PriceList[0]), &product) != nil || product.Product.Attributes["location"] != r.Location {
		t.Errorf("m5.large prices in %s: %v", r.Name, products.PriceList)
	}
}
