package worldcapture

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/aws/ami"
	"github.com/joinerhq/joiner/pkg/aws/network"
)

// vpcFilter selects the cluster VPC's resources; nil when the VPC is unknown.
func (c *capturer) vpcFilter() []ec2types.Filter {
	if c.vpcID == "" {
		return nil
	}
	return []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{c.vpcID}}}
}

// readNetwork reads the subnets and security groups the classes select, as the controller
// selects them (network.Filters), or without classes the cluster VPC's.
func (c *capturer) readNetwork(ctx context.Context) {
	var subnetInputs []*ec2.DescribeSubnetsInput
	var groupInputs []*ec2.DescribeSecurityGroupsInput
	if classes := c.nodeClasses(); classes != nil {
		for _, nc := range classes {
			for _, t := range nc.Spec.SubnetSelectorTerms {
				subnetInputs = append(subnetInputs, &ec2.DescribeSubnetsInput{Filters: network.Filters("subnet-id", t.ID, t.Tags)})
			}
			for _, t := range nc.Spec.SecurityGroupSelectorTerms {
				filters := network.Filters("group-id", t.ID, t.Tags)
				if t.Name != "" {
					filters = append(filters, ec2types.Filter{Name: aws.String("group-name"), Values: []string{t.Name}})
				}
				groupInputs = append(groupInputs, &ec2.DescribeSecurityGroupsInput{Filters: filters})
			}
		}
	} else {
		if c.vpcID == "" {
			c.note("subnets", "the cluster's VPC is unknown, so every subnet and security group of the region is read")
		}
		subnetInputs = []*ec2.DescribeSubnetsInput{{Filters: c.vpcFilter()}}
		groupInputs = []*ec2.DescribeSecurityGroupsInput{{Filters: c.vpcFilter()}}
	}
	c.readSubnets(ctx, subnetInputs)
	c.readSecurityGroups(ctx, groupInputs)
}

func (c *capturer) readSubnets(ctx context.Context, inputs []*ec2.DescribeSubnetsInput) {
	subnets := []world.Subnet{}
	seen := map[string]bool{}
	for _, in := range inputs {
		pages := ec2.NewDescribeSubnetsPaginator(c.api.EC2, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				c.failed("subnets", "ec2:DescribeSubnets", err)
				return
			}
			for _, s := range page.Subnets {
				id := aws.ToString(s.SubnetId)
				if seen[id] {
					continue
				}
				seen[id] = true
				if !c.inVPC("subnets["+id+"]", aws.ToString(s.VpcId)) {
					continue
				}
				subnets = append(subnets, world.Subnet{SubnetID: id, AvailabilityZone: aws.ToString(s.AvailabilityZone),
					CIDRBlock: aws.ToString(s.CidrBlock), AvailableIPAddressCount: s.AvailableIpAddressCount,
					MapPublicIPOnLaunch: aws.ToBool(s.MapPublicIpOnLaunch), Tags: ec2Tags(s.Tags)})
			}
		}
	}
	slices.SortFunc(subnets, func(a, b world.Subnet) int { return strings.Compare(a.SubnetID, b.SubnetID) })
	c.f.Subnets = subnets
	if len(subnets) > 0 && c.f.Cluster.VPCCIDR == "" {
		c.guessVPCCIDR(subnets)
	}
}

// inVPC reports whether a subnet or group is in the cluster's VPC, the one VPC a world holds,
// taking the first seen as the cluster's when DescribeCluster could not say.
func (c *capturer) inVPC(subject, vpc string) bool {
	if c.vpcID == "" {
		c.vpcID, c.f.Cluster.VPCID = vpc, vpc
	}
	if vpc != c.vpcID {
		c.note(subject, "is in VPC %s, not the cluster's %s; the world holds one VPC, so it is left out", vpc, c.vpcID)
		return false
	}
	return true
}

// guessVPCCIDR sets the VPC's CIDR, which DescribeVpcs did not give, to the smallest network
// holding every subnet (at most a /16, as VPCs are).
func (c *capturer) guessVPCCIDR(subnets []world.Subnet) {
	for bits := 28; bits >= 16; bits-- {
		var vpc netip.Prefix
		fits := true
		for i, s := range subnets {
			p, err := netip.ParsePrefix(s.CIDRBlock)
			if err != nil || p.Bits() < bits {
				fits = false
				break
			}
			q, _ := p.Addr().Prefix(bits)
			if i == 0 {
				vpc = q
			} else if q != vpc {
				fits = false
				break
			}
		}
		if fits {
			c.f.Cluster.VPCCIDR = vpc.String()
			c.note("cluster.vpcCidr", "not read; set to %s, the smallest network holding the subnets: check it with `aws ec2 describe-vpcs`", vpc)
			return
		}
	}
	c.note("cluster.vpcCidr", "not read, and no /16 holds every subnet; set it by hand or the world file is refused")
}

func (c *capturer) readSecurityGroups(ctx context.Context, inputs []*ec2.DescribeSecurityGroupsInput) {
	groups := []world.SecurityGroup{}
	seen := map[string]bool{}
	for _, in := range inputs {
		pages := ec2.NewDescribeSecurityGroupsPaginator(c.api.EC2, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				c.failed("securityGroups", "ec2:DescribeSecurityGroups", err)
				return
			}
			for _, g := range page.SecurityGroups {
				id := aws.ToString(g.GroupId)
				if seen[id] {
					continue
				}
				seen[id] = true
				if !c.inVPC("securityGroups["+id+"]", aws.ToString(g.VpcId)) {
					continue
				}
				groups = append(groups, world.SecurityGroup{GroupID: id, GroupName: aws.ToString(g.GroupName),
					Description: aws.ToString(g.Description), Tags: ec2Tags(g.Tags)})
			}
		}
	}
	slices.SortFunc(groups, func(a, b world.SecurityGroup) int { return strings.Compare(a.GroupID, b.GroupID) })
	c.f.SecurityGroups = groups
}

func ec2Tags(tags []ec2types.Tag) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, t := range tags {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

// readImages reads the custom AMIs the classes select (their amiSelectorTerms other than
// aliases, as the controller resolves them), or without classes the account's own; images AWS
// publishes (public ones) are left out, as the emulator publishes the EKS-optimized ones itself.
func (c *capturer) readImages(ctx context.Context) {
	var inputs []*ec2.DescribeImagesInput
	if classes := c.nodeClasses(); classes != nil {
		for _, nc := range classes {
			for _, t := range nc.Spec.AMISelectorTerms {
				if t.Alias == "" {
					inputs = append(inputs, ami.TermInput(t))
				}
			}
		}
	} else {
		inputs = []*ec2.DescribeImagesInput{{Owners: []string{"self"}, IncludeDeprecated: aws.Bool(true)}}
	}
	images := []world.Image{}
	seen := map[string]bool{}
	for _, in := range inputs {
		pages := ec2.NewDescribeImagesPaginator(c.api.EC2, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				c.failed("images", "ec2:DescribeImages", err)
				return
			}
			for _, img := range page.Images {
				id := aws.ToString(img.ImageId)
				if seen[id] || aws.ToBool(img.Public) {
					continue
				}
				seen[id] = true
				images = append(images, c.image(img))
			}
		}
	}
	slices.SortFunc(images, func(a, b world.Image) int { return strings.Compare(a.ImageID, b.ImageID) })
	c.f.Images = images
}

var (
	imageVersion = regexp.MustCompile(`(?:^|[^0-9.])(1\.[0-9]{2})(?:[^0-9]|$)`)
	al2Image     = regexp.MustCompile(`(^|[^a-z0-9])(al2|amzn2|amazon linux 2)([^0-9]|$)`)
)

// image is the world's entry of an AMI. How it boots and the kubelet it carries are not AWS
// fields: they are guessed from its name and description, and noted.
func (c *capturer) image(img ec2types.Image) world.Image {
	out := world.Image{ImageID: aws.ToString(img.ImageId), Name: aws.ToString(img.Name), Description: aws.ToString(img.Description),
		OwnerID: aws.ToString(img.OwnerId), Architecture: string(img.Architecture), State: string(img.State),
		CreationDate: aws.ToString(img.CreationDate), RootDeviceName: aws.ToString(img.RootDeviceName),
		RootDeviceType: string(img.RootDeviceType), VirtualizationType: string(img.VirtualizationType),
		PlatformDetails: aws.ToString(img.PlatformDetails), Tags: ec2Tags(img.Tags)}
	text := strings.ToLower(out.Name + " " + out.Description)
	switch {
	case strings.Contains(text, "bottlerocket"):
		out.Bootstrap = world.BootstrapBottlerocket
	case strings.Contains(text, "al2023"):
		out.Bootstrap = world.BootstrapNodeadm
	case al2Image.MatchString(text):
		out.Bootstrap = world.BootstrapAL2
	}
	if m := imageVersion.FindStringSubmatch(out.Name + " " + out.Description); m != nil {
		out.KubernetesVersion = m[1]
	}
	subject := fmt.Sprintf("images[%s]", out.ImageID)
	boot := out.Bootstrap
	if boot == "" {
		boot = "none (userData runs as it is)"
	}
	version := out.KubernetesVersion
	if version == "" {
		version = "the cluster's"
	}
	c.note(subject, "bootstrap %s and kubernetesVersion %s are guessed from the name %q: AWS does not record them; check them", boot, version, out.Name)
	return out
}

// readQueue checks the interruption queue the options or the controller's settings name, or a
// queue named after the cluster.
func (c *capturer) readQueue(ctx context.Context) {
	name := c.o.InterruptionQueue
	if name == "" && c.o.Cluster != nil {
		name = c.o.Cluster.InterruptionQueue
	}
	given := name != ""
	if !given {
		name = c.o.ClusterName
	}
	_, err := c.api.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	switch {
	case err == nil:
		c.f.Cluster.InterruptionQueue = name
	case !given && !denied(err):
		c.note("cluster.interruptionQueue", "no queue named after the cluster and none found in the controller's settings; the world's default, %s, is kept (pass --interruption-queue)", name)
	case given:
		c.f.Cluster.InterruptionQueue = name
		c.failed("cluster.interruptionQueue", "sqs:GetQueueUrl", err)
	default:
		c.failed("cluster.interruptionQueue", "sqs:GetQueueUrl", err)
	}
}
