package nodeclass

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/instanceprofile"
)

// emulator is the kit's emulator with this package's helpers.
type emulator struct{ *emutest.Emulator }

func startEmulator(t *testing.T) *emulator { return &emulator{emutest.Start(t)} }

func (e *emulator) resolver() *Resolver {
	c := e.Clients
	return NewResolver(c.EC2, c.SSM, instanceprofile.NewProvider(c.IAM, "demo", "us-west-2"), nil, "1.33", e.Clock)
}

// images returns the emulator's image IDs by name.
func (e *emulator) images() map[string]string {
	out := map[string]string{}
	e.State.View(func(w *state.World) {
		for id, img := range w.Regions["us-west-2"].Images {
			out[img.Name] = id
		}
	})
	return out
}

func discoveryClass(amiTerms ...awsv1.AMISelectorTerm) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		AMISelectorTerms:           amiTerms,
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Name: "demo-node"}},
		Role:                       "KarpenterNodeRole-demo",
	}}
	nc.Name = "default"
	return nc
}

func amiNames(amis []awsv1.AMI) []string {
	var out []string
	for _, a := range amis {
		out = append(out, a.Name)
	}
	return out
}

func TestResolveAMIs(t *testing.T) {
	tests := []struct {
		name      string
		terms     []awsv1.AMISelectorTerm
		deprecate []string
		want      []string
	}{
		{name: "al2023 alias: one per architecture and variant published, newest",
			terms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			want: []string{"amazon-eks-node-al2023-arm64-standard-1.33-v20251101", "amazon-eks-node-al2023-x86_64-nvidia-1.33-v20251101",
				"amazon-eks-node-al2023-x86_64-standard-1.33-v20251101"}},
		{name: "pinned bottlerocket alias",
			terms: []awsv1.AMISelectorTerm{{Alias: "bottlerocket@v1.20251001"}},
			want:  []string{"bottlerocket-aws-k8s-1.33-aarch64-v1.20251001", "bottlerocket-aws-k8s-1.33-x86_64-v1.20251001"}},
		{name: "name wildcard and owner: newest non-deprecated",
			terms:     []awsv1.AMISelectorTerm{{Name: "amazon-eks-node-al2023-arm64-standard-1.33-*", Owner: "amazon"}},
			deprecate: []string{"amazon-eks-node-al2023-arm64-standard-1.33-v20251101"},
			want:      []string{"amazon-eks-node-al2023-arm64-standard-1.33-v20251001"}},
		{name: "all deprecated: the newest deprecated",
			terms: []awsv1.AMISelectorTerm{{Name: "amazon-eks-node-al2023-arm64-standard-1.33-*"}},
			deprecate: []string{"amazon-eks-node-al2023-arm64-standard-1.33-v20251101",
				"amazon-eks-node-al2023-arm64-standard-1.33-v20251001"},
			want: []string{"amazon-eks-node-al2023-arm64-standard-1.33-v20251101"}},
		{name: "ssm parameter",
			terms: []awsv1.AMISelectorTerm{{SSMParameter: "/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/arm64/standard/recommended/image_id"}},
			want:  []string{"amazon-eks-node-al2023-arm64-standard-1.32-v20251101"}},
		{name: "missing ssm parameter matches nothing",
			terms: []awsv1.AMISelectorTerm{{SSMParameter: "/aws/service/missing"}}, want: nil},
		{name: "ids of two architectures",
			terms: []awsv1.AMISelectorTerm{{ID: "amazon-eks-node-1.32-v20251001"}, {ID: "amazon-eks-arm64-node-1.32-v20251101"}},
			want:  []string{"amazon-eks-arm64-node-1.32-v20251101", "amazon-eks-node-1.32-v20251001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEmulator(t)
			ids := e.images()
			for i, term := range tt.terms {
				if term.ID != "" {
					tt.terms[i].ID = ids[term.ID]
				}
			}
			_ = e.State.Update(func(w *state.World) error {
				past := e.Clock.Now().Add(-time.Hour)
				for _, name := range tt.deprecate {
					w.Regions["us-west-2"].Images[ids[name]].Deprecated = &past
				}
				return nil
			})
			nc := discoveryClass(tt.terms...)
			_ = e.resolver().Resolve(t.Context(), nc)
			got := amiNames(nc.Status.AMIs)
			if diff := cmp.Diff(tt.want, sortedCopy(got)); diff != "" {
				t.Errorf("AMIs (-want +got):\n%s", diff)
			}
			if got := meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady); got != (len(tt.want) > 0) {
				t.Errorf("Ready %v with AMIs %v: %+v", got, tt.want, nc.Status.Conditions)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestResolveNetworkAndProfile(t *testing.T) {
	e := startEmulator(t)
	nc := discoveryClass(awsv1.AMISelectorTerm{Alias: "al2023@latest"})
	nc.Spec.Tags = map[string]string{"team": "infra"}
	if err := e.resolver().Resolve(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, s := range nc.Status.Subnets {
		zones = append(zones, s.Zone)
	}
	if diff := cmp.Diff([]string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"}, zones); diff != "" {
		t.Errorf("subnet zones (-want +got):\n%s", diff)
	}
	if len(nc.Status.SecurityGroups) != 1 || nc.Status.SecurityGroups[0].Name != "demo-node" {
		t.Errorf("security groups %+v, want demo-node", nc.Status.SecurityGroups)
	}
	want := instanceprofile.Name("demo", "us-west-2", nc)
	if nc.Status.InstanceProfile != want {
		t.Errorf("instance profile %q, want %q", nc.Status.InstanceProfile, want)
	}
	out, err := e.Clients.IAM.GetInstanceProfile(t.Context(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(want)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.InstanceProfile.Roles) != 1 || aws.ToString(out.InstanceProfile.Roles[0].RoleName) != "KarpenterNodeRole-demo" {
		t.Errorf("profile roles %+v, want KarpenterNodeRole-demo", out.InstanceProfile.Roles)
	}
	// Resolving again changes nothing and creates nothing.
	if err := e.resolver().Resolve(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	if err := instanceprofile.NewProvider(e.Clients.IAM, "demo", "us-west-2").Delete(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Clients.IAM.GetInstanceProfile(t.Context(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(want)}); err == nil {
		t.Error("instance profile still exists after Delete")
	}
}

func TestResolveConditions(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*awsv1.EC2NodeClass)
		notTrue []string
		// readySays is what Ready's message must say: the holding condition's own message,
		// naming the field, which the class's NodePools and waiting pods repeat.
		readySays string
	}{
		{name: "no subnet matches", mutate: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "other"}}}
		}, notTrue: []string{awsv1.ConditionTypeSubnetsReady, awsv1.ConditionTypeReady}, readySays: "SubnetsReady: no subnet matches spec.subnetSelectorTerms"},
		{name: "no security group matches", mutate: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{ID: "sg-missing"}}
		}, notTrue: []string{awsv1.ConditionTypeSecurityGroupsReady, awsv1.ConditionTypeReady}, readySays: "SecurityGroupsReady: no security group matches spec.securityGroupSelectorTerms"},
		{name: "alias of a missing version", mutate: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2023@v19990101"}}
		}, notTrue: []string{awsv1.ConditionTypeAMIsReady, awsv1.ConditionTypeReady}, readySays: "AMIsReady: no AMI matches spec.amiSelectorTerms"},
		{name: "missing instance profile", mutate: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Role, nc.Spec.InstanceProfile = "", aws.String("missing")
		}, notTrue: []string{awsv1.ConditionTypeInstanceProfileReady, awsv1.ConditionTypeReady}, readySays: "InstanceProfileReady: "},
		{name: "existing instance profile", mutate: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Role, nc.Spec.InstanceProfile = "", aws.String("KarpenterNodeRole-demo")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEmulator(t)
			nc := discoveryClass(awsv1.AMISelectorTerm{Alias: "al2023@latest"})
			tt.mutate(nc)
			_ = e.resolver().Resolve(t.Context(), nc)
			var got []string
			for _, c := range nc.Status.Conditions {
				if c.Status != metav1.ConditionTrue {
					got = append(got, c.Type)
				}
			}
			if diff := cmp.Diff(tt.notTrue, got); diff != "" {
				t.Errorf("conditions not True (-want +got):\n%s\n%+v", diff, nc.Status.Conditions)
			}
			if ready := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeReady); !strings.Contains(ready.Message, tt.readySays) {
				t.Errorf("Ready's message %q does not say %q", ready.Message, tt.readySays)
			}
		})
	}
}
