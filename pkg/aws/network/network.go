package network

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
)

// EC2API is what the package calls; *ec2.Client satisfies it.
type EC2API interface {
	DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, opts ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeSecurityGroups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput, opts ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
}

// Subnet is a subnet a selector matched.
type Subnet struct {
	ID, Zone, ZoneID, VPCID string
	AvailableIPs            int64
}

// Status is the subnet as status.subnets lists it.
func (s Subnet) Status() awsv1.Subnet { return awsv1.Subnet{ID: s.ID, Zone: s.Zone, ZoneID: s.ZoneID} }

// Launch is the subnet as pkg/aws/instance chooses among them.
func (s Subnet) Launch() instance.Subnet {
	return instance.Subnet{ID: s.ID, Zone: s.Zone, AvailableIPs: s.AvailableIPs}
}

// Filters are the EC2 filters of one selector term: idFilter for id, tag:<key> for each tag
// (tag-key when the value is "*"), sorted by name so requests are stable.
func Filters(idFilter, id string, tags map[string]string) []ec2types.Filter {
	var out []ec2types.Filter
	if id != "" {
		out = append(out, ec2types.Filter{Name: aws.String(idFilter), Values: []string{id}})
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if tags[k] == "*" {
			out = append(out, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
			continue
		}
		out = append(out, ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{tags[k]}})
	}
	return out
}

// Subnets returns the subnets any term matches, sorted by zone then ID.
func Subnets(ctx context.Context, api EC2API, terms []awsv1.SubnetSelectorTerm) ([]Subnet, error) {
	found := map[string]Subnet{}
	for i, term := range terms {
		pages := ec2.NewDescribeSubnetsPaginator(api, &ec2.DescribeSubnetsInput{Filters: Filters("subnet-id", term.ID, term.Tags)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing subnets of spec.subnetSelectorTerms[%d], %w", i, err)
			}
			for _, s := range page.Subnets {
				found[aws.ToString(s.SubnetId)] = Subnet{
					ID: aws.ToString(s.SubnetId), Zone: aws.ToString(s.AvailabilityZone), ZoneID: aws.ToString(s.AvailabilityZoneId),
					VPCID: aws.ToString(s.VpcId), AvailableIPs: int64(aws.ToInt32(s.AvailableIpAddressCount)),
				}
			}
		}
	}
	out := slices.Collect(maps.Values(found))
	slices.SortFunc(out, func(a, b Subnet) int { return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// SecurityGroups returns the security groups any term matches, sorted by ID.
func SecurityGroups(ctx context.Context, api EC2API, terms []awsv1.SecurityGroupSelectorTerm) ([]awsv1.SecurityGroup, error) {
	found := map[string]awsv1.SecurityGroup{}
	for i, term := range terms {
		filters := Filters("group-id", term.ID, term.Tags)
		if term.Name != "" {
			filters = append(filters, ec2types.Filter{Name: aws.String("group-name"), Values: []string{term.Name}})
		}
		pages := ec2.NewDescribeSecurityGroupsPaginator(api, &ec2.DescribeSecurityGroupsInput{Filters: filters})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing security groups of spec.securityGroupSelectorTerms[%d], %w", i, err)
			}
			for _, g := range page.SecurityGroups {
				found[aws.ToString(g.GroupId)] = awsv1.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName)}
			}
		}
	}
	out := slices.Collect(maps.Values(found))
	slices.SortFunc(out, func(a, b awsv1.SecurityGroup) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
