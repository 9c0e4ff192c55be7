package network

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

func TestFilters(t *testing.T) {
	got := Filters("subnet-id", "subnet-1", map[string]string{"b": "*", "a": "x"})
	want := []ec2types.Filter{
		{Name: aws.String("subnet-id"), Values: []string{"subnet-1"}},
		{Name: aws.String("tag:a"), Values: []string{"x"}},
		{Name: aws.String("tag-key"), Values: []string{"b"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(ec2types.Filter{})); diff != "" {
		t.Errorf("Filters (-want +got):\n%s", diff)
	}
}

func TestSelectors(t *testing.T) {
	e := emutest.Start(t)
	var subnetA, groupNode string
	e.State.View(func(w *state.World) {
		r := w.Regions["us-west-2"]
		for id, s := range r.Subnets {
			if s.Zone == "us-west-2a" {
				subnetA = id
			}
		}
		for id, g := range r.SecurityGroups {
			if g.Name == "demo-node" {
				groupNode = id
			}
		}
	})
	api := e.Clients.EC2

	subnetTests := []struct {
		name  string
		terms []awsv1.SubnetSelectorTerm
		zones []string
	}{
		{"by id", []awsv1.SubnetSelectorTerm{{ID: subnetA}}, []string{"us-west-2a"}},
		{"by tag", []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}}, []string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"}},
		{"tag present", []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"kubernetes.io/role/internal-elb": "*"}}}, []string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"}},
		{"terms ORed, union by id", []awsv1.SubnetSelectorTerm{{ID: subnetA}, {Tags: map[string]string{"Name": "demo-private-us-west-2a"}}}, []string{"us-west-2a"}},
		{"id and tag ANDed", []awsv1.SubnetSelectorTerm{{ID: subnetA, Tags: map[string]string{"Name": "demo-private-us-west-2b"}}}, nil},
	}
	for _, tt := range subnetTests {
		t.Run(tt.name, func(t *testing.T) {
			subnets, err := Subnets(t.Context(), api, tt.terms)
			if err != nil {
				t.Fatal(err)
			}
			var zones []string
			for _, s := range subnets {
				zones = append(zones, s.Zone)
				if s.AvailableIPs == 0 || s.VPCID == "" {
					t.Errorf("subnet %+v lacks its free addresses or VPC", s)
				}
			}
			if diff := cmp.Diff(tt.zones, zones); diff != "" {
				t.Errorf("zones (-want +got):\n%s", diff)
			}
		})
	}

	groupTests := []struct {
		name  string
		terms []awsv1.SecurityGroupSelectorTerm
		want  []string
	}{
		{"by name", []awsv1.SecurityGroupSelectorTerm{{Name: "demo-node"}}, []string{"demo-node"}},
		{"by id", []awsv1.SecurityGroupSelectorTerm{{ID: groupNode}}, []string{"demo-node"}},
		{"by tag", []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"aws:eks:cluster-name": "demo"}}}, []string{"eks-cluster-sg-demo"}},
		{"none", []awsv1.SecurityGroupSelectorTerm{{Name: "missing"}}, nil},
	}
	for _, tt := range groupTests {
		t.Run(tt.name, func(t *testing.T) {
			groups, err := SecurityGroups(t.Context(), api, tt.terms)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range groups {
				names = append(names, g.Name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}
