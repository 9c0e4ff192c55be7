package worldcapture_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/worldcapture"
)

// deniedWorld is a world whose controller may make every read a capture makes but one, which
// each case takes away; the capture runs as that controller.
const deniedWorld = `
cluster: {name: prod, accountId: "210987654321", region: eu-west-1, vpcCidr: 10.20.0.0/16, vpcId: vpc-0a1b2c3d4e5f60718}
controllerRole: arn:aws:iam::210987654321:role/KarpenterControllerRole-prod
nodeRoles: [{name: KarpenterNodeRole-prod}]
users: [{userName: alice, path: /ops/, managedPolicies: [arn:aws:iam::aws:policy/ReadOnlyAccess]}]
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/KarpenterNodeRole-prod", type: EC2_LINUX}
- {principalArn: "arn:aws:iam::210987654321:user/ops/alice", kubernetesGroups: [readers]}
subnets: [{subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: eu-west-1a, cidrBlock: 10.20.0.0/19}]
securityGroups: [{groupId: sg-0a1b2c3d4e5f60001, groupName: nodes}]
`

// TestCaptureNamesTheDeniedAction takes one read action from the capturing identity: the capture
// names it, leaves its part out, and writes the rest as a valid world.
func TestCaptureNamesTheDeniedAction(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		denied string
		// missing reports whether the part the action reads is left out of the capture.
		missing func(f *world.File) bool
	}{
		{"ec2:DescribeSubnets", func(f *world.File) bool { return len(f.Subnets) == 0 }},
		{"ec2:DescribeSecurityGroups", func(f *world.File) bool { return len(f.SecurityGroups) == 0 }},
		{"eks:ListAccessEntries", func(f *world.File) bool { return len(f.AccessEntries) == 0 }},
		{"iam:ListAttachedRolePolicies", func(f *world.File) bool { return len(f.NodeRoles[0].ManagedPolicies) == 0 }},
		// The entry is kept, and the world creates its user.
		{"iam:GetUser", func(f *world.File) bool { return len(f.Users) == 0 && len(f.AccessEntries) == 2 }},
		{"iam:ListAttachedUserPolicies", func(f *world.File) bool { return len(f.Users) == 1 && len(f.Users[0].ManagedPolicies) == 0 }},
	} {
		t.Run(tc.denied, func(t *testing.T) {
			f, err := world.Decode([]byte(deniedWorld), cat)
			if err != nil {
				t.Fatal(err)
			}
			f.NodeRoles[0].ManagedPolicies = []string{"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"}
			allowed := slices.DeleteFunc(worldcapture.Actions(), func(a string) bool { return a == tc.denied })
			f.ControllerPolicy, _ = json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{
				map[string]any{"Effect": "Allow", "Action": allowed, "Resource": "*"}}})
			api := emulator(t, f, f.ControllerAccessKeyID)
			o := captureOptions(f)
			got, notes := captureWorld(t, api, o, cat)
			var named []string
			for _, n := range notes {
				if n.Action != "" {
					named = append(named, n.Action)
				}
			}
			if len(named) == 0 || slices.ContainsFunc(named, func(a string) bool { return a != tc.denied }) {
				t.Errorf("the notes name %v, want %s only:\n%v", named, tc.denied, notes)
			}
			for _, n := range notes {
				if n.Action == tc.denied && !strings.Contains(n.String(), "grant "+tc.denied) {
					t.Errorf("note %q does not say to grant %s", n, tc.denied)
				}
			}
			if !tc.missing(got) {
				t.Errorf("the part %s reads is in the capture", tc.denied)
			}
			// The rest is there.
			if got.Cluster.VPCCIDR != "10.20.0.0/16" || got.Cluster.Region != "eu-west-1" || len(got.NodeRoles) != 1 ||
				(tc.denied != "ec2:DescribeSubnets" && len(got.Subnets) != 1) || string(got.ControllerPolicy) == "" {
				t.Errorf("the capture lacks what was allowed: %+v", got)
			}
		})
	}
}

// TestCapturePolicySuffices captures as an identity with joiner iam-policy --capture's policy
// alone: nothing is denied.
func TestCapturePolicySuffices(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, err := world.Decode([]byte(deniedWorld), cat)
	if err != nil {
		t.Fatal(err)
	}
	f.ControllerPolicy, _ = json.Marshal(iampolicy.Capture(worldcapture.Actions()))
	_, notes := captureWorld(t, emulator(t, f, f.ControllerAccessKeyID), captureOptions(f), cat)
	for _, n := range notes {
		if n.Action != "" {
			t.Errorf("denied with the capture policy: %s", n)
		}
	}
}
