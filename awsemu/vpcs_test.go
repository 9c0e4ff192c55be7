package awsemu_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/joinerhq/joiner/awsemu/state"
)

// TestDescribeVpcs reads the cluster's VPC as `aws ec2 describe-vpcs` does: by id, by filter,
// page by page, and an unknown id is InvalidVpcID.NotFound.
func TestDescribeVpcs(t *testing.T) {
	seed := state.DefaultSeed()
	seed.VPCID, seed.VPCCIDR = "vpc-0a1b2c3d4e5f60718", "10.20.0.0/16"
	e := newSeededEnv(t, seed)
	ctx := t.Context()
	out, err := e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{"vpc-0a1b2c3d4e5f60718"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Vpcs) != 1 {
		t.Fatalf("got %d VPCs, want 1", len(out.Vpcs))
	}
	v := out.Vpcs[0]
	if aws.ToString(v.CidrBlock) != "10.20.0.0/16" || v.State != ec2types.VpcStateAvailable || aws.ToBool(v.IsDefault) ||
		len(v.CidrBlockAssociationSet) != 1 || aws.ToString(v.CidrBlockAssociationSet[0].CidrBlock) != "10.20.0.0/16" {
		t.Errorf("VPC %+v", v)
	}
	filtered, err := e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{Filters: []ec2types.Filter{{Name: aws.String("cidr"), Values: []string{"10.99.0.0/16"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(filtered.Vpcs) != 0 {
		t.Errorf("filter cidr=10.99.0.0/16 matched %d VPCs", len(filtered.Vpcs))
	}
	pages := ec2.NewDescribeVpcsPaginator(e.ec2, &ec2.DescribeVpcsInput{MaxResults: aws.Int32(5)})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Vpcs)
	}
	if n != 1 {
		t.Errorf("paging listed %d VPCs, want 1", n)
	}
	_, err = e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{"vpc-00000000000000000"}})
	wantCode(t, err, "InvalidVpcID.NotFound", "unknown VPC")
	_, err = e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{MaxResults: aws.Int32(2)})
	wantCode(t, err, "InvalidParameterValue", "MaxResults below 5")
	e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeSubnets","Resource":"*"}]}`)
	_, err = e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	wantCode(t, err, "UnauthorizedOperation", "without ec2:DescribeVpcs")
}

// TestDescribeClusterVPCConfig reads the cluster's VPC, subnets and cluster security group from
// DescribeCluster, and its (absent) Pod Identity associations.
func TestDescribeClusterVPCConfig(t *testing.T) {
	seed := state.DefaultSeed()
	seed.VPCID, seed.VPCCIDR = "vpc-0a1b2c3d4e5f60718", "10.20.0.0/16"
	e := newSeededEnv(t, seed)
	ctx := t.Context()
	eksc := eks.NewFromConfig(e.config(t, e.region, seed.ControllerAccessKey))
	out, err := eksc.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(seed.ClusterName)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := out.Cluster.ResourcesVpcConfig
	subnets, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(cfg.VpcId) != seed.VPCID || len(cfg.SubnetIds) != len(subnets.Subnets) || aws.ToString(cfg.ClusterSecurityGroupId) == "" {
		t.Errorf("resourcesVpcConfig %+v, want VPC %s, %d subnets and a cluster security group", cfg, seed.VPCID, len(subnets.Subnets))
	}
	list, err := eksc.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(seed.ClusterName)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Associations) != 0 {
		t.Errorf("got %d Pod Identity associations, want none", len(list.Associations))
	}
	_, err = eksc.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(seed.ClusterName), AssociationId: aws.String("a-0123456789abcdef0")})
	wantCode(t, err, "ResourceNotFoundException", "unknown association")
	_, err = eksc.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("nope")})
	wantCode(t, err, "ResourceNotFoundException", "unknown cluster")
}
