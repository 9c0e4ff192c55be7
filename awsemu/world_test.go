package awsemu_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// roundTripWorld sets every field of a world file to a value other than its default.
const roundTripWorld = `
cluster:
  name: prod
  accountId: "210987654321"
  region: eu-west-1
  kubernetesVersion: "1.30"
  authenticationMode: API
  serviceIpv4Cidr: 172.20.0.0/16
  vpcId: vpc-0a1b2c3d4e5f60718
  vpcCidr: 10.20.0.0/16
  interruptionQueue: prod-interruptions
controllerRole: arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod
controllerAccessKeyId: AKIDPRODCONTROLLER
controllerPolicy:
  Version: "2012-10-17"
  Statement:
  - {Sid: Everything, Effect: Allow, Action: "*", Resource: "*"}
nodeRoles:
- name: KarpenterNodeRole-prod
  path: /nodes/
  assumeRolePolicyPrincipal: ec2.amazonaws.com
  managedPolicies: [arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy, arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly]
- arn: arn:aws:iam::210987654321:role/BatchNodeRole-prod
instanceProfiles:
- instanceProfileName: BatchNodeInstanceProfile-prod
  path: /batch/
  roles: [arn:aws:iam::210987654321:role/BatchNodeRole-prod]
  tags: {team: batch}
accessEntries:
- principalArn: arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod
  type: EC2_LINUX
  accessEntryArn: arn:aws:eks:eu-west-1:210987654321:access-entry/prod/role/210987654321/KarpenterNodeRole-prod/1234
- principalArn: arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod
  type: STANDARD
  username: karpenter
  kubernetesGroups: [karpenter-admins]
  accessPolicies:
  - policyArn: arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy
    accessScope: {type: namespace, namespaces: [kube-system, karpenter]}
subnets:
- subnetId: subnet-0a1b2c3d4e5f60001
  availabilityZone: eu-west-1a
  cidrBlock: 10.20.0.0/19
  availableIpAddressCount: 1000
  mapPublicIpOnLaunch: true
  tags: {karpenter.sh/discovery: prod, Name: prod-a}
securityGroups:
- groupId: sg-0a1b2c3d4e5f60001
  groupName: prod-nodes
  description: Nodes of prod
  tags: {karpenter.sh/discovery: prod}
images:
- imageId: ami-0a1b2c3d4e5f67890
  name: hardened-al2-1.30
  description: Hardened AL2
  ownerId: "123456789012"
  architecture: arm64
  state: available
  creationDate: "2025-06-01T00:00:00.000Z"
  rootDeviceName: /dev/sda1
  rootDeviceType: ebs
  virtualizationType: hvm
  platformDetails: Linux/UNIX
  tags: {team: platform}
  bootstrap: nodeadm
  kubernetesVersion: "1.30"
`

// TestWorldRoundTripsThroughTheSDK seeds a world and reads each field back through the real SDK,
// as the controller or an operator with the AWS CLI would.
func TestWorldRoundTripsThroughTheSDK(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, err := world.Decode([]byte(roundTripWorld), cat)
	if err != nil {
		t.Fatal(err)
	}
	e := newSeededEnv(t, f.SeedOptions(state.DefaultSeed()))
	cfg := e.config(t, "eu-west-1", "AKIDPRODCONTROLLER")
	var rows []roundTrip
	rows = append(rows, eksRoundTrips(t, eks.NewFromConfig(cfg))...)
	rows = append(rows, iamRoundTrips(t, iam.NewFromConfig(cfg))...)
	rows = append(rows, ec2RoundTrips(t, ec2.NewFromConfig(cfg), cat)...)
	rows = append(rows, stsRoundTrips(t, sts.NewFromConfig(cfg))...)
	for _, r := range rows {

		t.Run(r.name, func(t *testing.T) {
			got, err := r.get(t)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(r.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	// What no read API above returns: the world's state holds it for the APIs that will.
	e.state.View(func(w *state.World) {
		if got := w.IAM.Roles["KarpenterNodeRole-prod"].ManagedPolicyARNs; !slices.Equal(got, []string{
			"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"}) {
			t.Errorf("managed policies %v", got)
		}
		c := w.Regions["eu-west-1"].Clusters["prod"]
		got := c.AccessEntries["arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod"].AccessPolicies
		want := []state.AccessPolicyAssociation{{PolicyARN: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy", ScopeType: "namespace",
			Namespaces: []string{"kube-system", "karpenter"}, AssociatedAt: t0}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("access policies (-want +got):\n%s", diff)
		}
		if q := w.Regions["eu-west-1"].InterruptionQueues; !slices.Equal(q, []string{"prod-interruptions"}) {
			t.Errorf("interruption queues %v", q)
		}
		if n := len(w.Regions["us-west-2"].Clusters); n != 0 {
			t.Errorf("us-west-2 has %d clusters; the world's cluster lives in eu-west-1 only", n)
		}
		if img := w.Regions["eu-west-1"].Images["ami-0a1b2c3d4e5f67890"]; img.Family != state.FamilyAL2023 || !img.CreationDate.Equal(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("image family %s created %s", img.Family, img.CreationDate)
		}
	})
}

// roundTrip reads one part of the world back: get reads it, want is what it must read.
type roundTrip struct {
	name string
	get  func(t *testing.T) (any, error)
	want any
}

func eksRoundTrips(t *testing.T, eksc *eks.Client) []roundTrip {
	ctx := t.Context()
	cluster := func() (*eks.DescribeClusterOutput, error) {
		return eksc.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod")})
	}
	entry := func(principal string) (*eks.DescribeAccessEntryOutput, error) {
		return eksc.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("prod"), PrincipalArn: aws.String(principal)})
	}
	return []roundTrip{
		{"cluster", func(t *testing.T) (any, error) {
			out, err := cluster()
			if err != nil {
				return nil, err
			}
			c := out.Cluster
			return []string{aws.ToString(c.Name), aws.ToString(c.Arn), aws.ToString(c.Version), string(c.AccessConfig.AuthenticationMode),
				aws.ToString(c.KubernetesNetworkConfig.ServiceIpv4Cidr)}, nil
		}, []string{"prod", "arn:aws:eks:eu-west-1:210987654321:cluster/prod", "1.30", "API", "172.20.0.0/16"}},
		{"access entries listed", func(t *testing.T) (any, error) {
			out, err := eksc.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String("prod")})
			if err != nil {
				return nil, err
			}
			return out.AccessEntries, nil
		}, []string{"arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", "arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod"}},
		{"node access entry", func(t *testing.T) (any, error) {
			out, err := entry("arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod")
			if err != nil {
				return nil, err
			}
			a := out.AccessEntry
			return append([]string{aws.ToString(a.AccessEntryArn), aws.ToString(a.Type), aws.ToString(a.Username)}, a.KubernetesGroups...), nil
		}, []string{"arn:aws:eks:eu-west-1:210987654321:access-entry/prod/role/210987654321/KarpenterNodeRole-prod/1234", "EC2_LINUX", "system:node:{{EC2PrivateDNSName}}", "system:nodes"}},
		{"standard access entry", func(t *testing.T) (any, error) {
			out, err := entry("arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod")
			if err != nil {
				return nil, err
			}
			a := out.AccessEntry
			return append([]string{aws.ToString(a.ClusterName), aws.ToString(a.Type), aws.ToString(a.Username)}, a.KubernetesGroups...), nil
		}, []string{"prod", "STANDARD", "karpenter", "karpenter-admins"}}}
}

func iamRoundTrips(t *testing.T, iamc *iam.Client) []roundTrip {
	ctx := t.Context()
	role := func(name string) (*iam.GetRoleOutput, error) {
		return iamc.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	}
	return []roundTrip{
		{"controller role", func(t *testing.T) (any, error) {
			out, err := role("KarpenterControllerRole-prod")
			if err != nil {
				return nil, err
			}
			return []string{aws.ToString(out.Role.Arn), aws.ToString(out.Role.Path)}, nil
		}, []string{"arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod", "/platform/"}},
		{"node role with its path and trust policy", func(t *testing.T) (any, error) {
			out, err := role("KarpenterNodeRole-prod")
			if err != nil {
				return nil, err
			}
			doc, err := url.QueryUnescape(aws.ToString(out.Role.AssumeRolePolicyDocument))
			if err != nil {
				return nil, err
			}
			var trust struct {
				Statement []struct{ Principal map[string]string }
			}
			if err := json.Unmarshal([]byte(doc), &trust); err != nil {
				return nil, err
			}
			return []string{aws.ToString(out.Role.Arn), aws.ToString(out.Role.Path), trust.Statement[0].Principal["Service"]}, nil
		}, []string{"arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", "/nodes/", "ec2.amazonaws.com"}},
		{"node role given by ARN", func(t *testing.T) (any, error) {
			out, err := role("BatchNodeRole-prod")
			if err != nil {
				return nil, err
			}
			return aws.ToString(out.Role.Arn), nil
		}, "arn:aws:iam::210987654321:role/BatchNodeRole-prod"},
		{"instance profile", func(t *testing.T) (any, error) {
			out, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("BatchNodeInstanceProfile-prod")})
			if err != nil {
				return nil, err
			}
			p := out.InstanceProfile
			got := []string{aws.ToString(p.Arn), aws.ToString(p.Path)}
			for _, r := range p.Roles {
				got = append(got, aws.ToString(r.Arn))
			}
			for _, tag := range p.Tags {
				got = append(got, aws.ToString(tag.Key)+"="+aws.ToString(tag.Value))
			}
			return got, nil
		}, []string{"arn:aws:iam::210987654321:instance-profile/batch/BatchNodeInstanceProfile-prod", "/batch/", "arn:aws:iam::210987654321:role/BatchNodeRole-prod", "team=batch"}},
		{"controller policy", func(t *testing.T) (any, error) {
			out, err := iamc.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("KarpenterControllerRole-prod"), PolicyName: aws.String(state.ControllerPolicyName)})
			if err != nil {
				return nil, err
			}
			doc, err := url.QueryUnescape(aws.ToString(out.PolicyDocument))
			if err != nil {
				return nil, err
			}
			var p struct{ Statement []struct{ Sid string } }
			return p.Statement, json.Unmarshal([]byte(doc), &p)
		}, []struct{ Sid string }{{"Everything"}}},
	}
}

func ec2RoundTrips(t *testing.T, ec2c *ec2.Client, cat *catalog.Catalog) []roundTrip {
	ctx := t.Context()
	image := func() (ec2types.Image, error) {
		out, err := ec2c.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{"ami-0a1b2c3d4e5f67890"}})
		if err != nil || len(out.Images) != 1 {
			return ec2types.Image{}, err
		}
		return out.Images[0], nil
	}
	return []roundTrip{
		{"subnet", func(t *testing.T) (any, error) {
			out, err := ec2c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
			if err != nil || len(out.Subnets) != 1 {
				return out, err
			}
			s := out.Subnets[0]
			return []any{aws.ToString(s.SubnetId), aws.ToString(s.VpcId), aws.ToString(s.AvailabilityZone), aws.ToString(s.AvailabilityZoneId),
				aws.ToString(s.CidrBlock), aws.ToInt32(s.AvailableIpAddressCount), aws.ToBool(s.MapPublicIpOnLaunch), ec2Tags(s.Tags)}, nil
		}, []any{"subnet-0a1b2c3d4e5f60001", "vpc-0a1b2c3d4e5f60718", "eu-west-1a", zoneID(t, cat, "eu-west-1", "eu-west-1a"), "10.20.0.0/19", int32(1000), true,
			map[string]string{"karpenter.sh/discovery": "prod", "Name": "prod-a"}}},
		{"security group", func(t *testing.T) (any, error) {
			out, err := ec2c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
			if err != nil || len(out.SecurityGroups) != 1 {
				return out, err
			}
			g := out.SecurityGroups[0]
			return []any{aws.ToString(g.GroupId), aws.ToString(g.GroupName), aws.ToString(g.Description), aws.ToString(g.VpcId), ec2Tags(g.Tags)}, nil
		}, []any{"sg-0a1b2c3d4e5f60001", "prod-nodes", "Nodes of prod", "vpc-0a1b2c3d4e5f60718", map[string]string{"karpenter.sh/discovery": "prod"}}},
		{"custom image", func(t *testing.T) (any, error) {
			img, err := image()
			if err != nil {
				return nil, err
			}
			return []any{aws.ToString(img.Name), aws.ToString(img.Description), aws.ToString(img.OwnerId), string(img.Architecture), string(img.State),
				aws.ToString(img.CreationDate), aws.ToString(img.RootDeviceName), string(img.RootDeviceType), string(img.VirtualizationType),
				aws.ToString(img.PlatformDetails), aws.ToBool(img.Public), ec2Tags(img.Tags)}, nil
		}, []any{"hardened-al2-1.30", "Hardened AL2", "123456789012", "arm64", "available", "2025-06-01T00:00:00.000Z", "/dev/sda1", "ebs", "hvm",
			"Linux/UNIX", false, map[string]string{"team": "platform"}}}}
}

func stsRoundTrips(t *testing.T, stsc *sts.Client) []roundTrip {
	ctx := t.Context()
	return []roundTrip{
		{"caller identity", func(t *testing.T) (any, error) {
			out, err := stsc.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			if err != nil {
				return nil, err
			}
			return []string{aws.ToString(out.Account), aws.ToString(out.Arn)}, nil
		}, []string{"210987654321", "arn:aws:sts::210987654321:assumed-role/KarpenterControllerRole-prod/AKIDPRODCONTROLLER"}}}
}

func ec2Tags(tags []ec2types.Tag) map[string]string {
	out := map[string]string{}
	for _, t := range tags {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

func zoneID(t *testing.T, cat *catalog.Catalog, region, zone string) string {
	t.Helper()
	r, _ := cat.Region(region)
	for _, z := range r.Zones {
		if z.Name == zone {
			return z.ID
		}
	}
	t.Fatalf("no zone %s in %s", zone, region)
	return ""
}

// TestWorldControllerPolicyIsEnforced: the controller's key may do what the world's
// controllerPolicy allows, and nothing more.
func TestWorldControllerPolicyIsEnforced(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	// The world's region is the suite's, so that the us-east-1 run reads its subnets too.
	f, err := world.Decode([]byte(`
cluster: {name: prod, region: `+testRegion()+`, vpcCidr: 10.20.0.0/16}
controllerPolicy: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "ec2:Describe*", Resource: "*"}]}
`), cat)
	if err != nil {
		t.Fatal(err)
	}
	e := newSeededEnv(t, f.SeedOptions(state.DefaultSeed()))
	subnets, err := e.ec2.DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatalf("DescribeSubnets, allowed by the policy: %v", err)
	}
	// The default subnets, one per zone, are carved from the world's VPC.
	for _, sn := range subnets.Subnets {
		if cidr := aws.ToString(sn.CidrBlock); !strings.HasPrefix(cidr, "10.20.") || !strings.HasSuffix(cidr, "/20") {
			t.Errorf("default subnet %s has CIDR %s, outside the VPC 10.20.0.0/16", aws.ToString(sn.SubnetId), cidr)
		}
	}
	if len(subnets.Subnets) == 0 {
		t.Error("no default subnets")
	}
	_, err = e.iam.GetRole(t.Context(), &iam.GetRoleInput{RoleName: aws.String("KarpenterNodeRole-prod")})
	if err == nil || errorCode(t, err) != "AccessDenied" {
		t.Errorf("GetRole, which the policy does not allow: %v", err)
	}
}
