package world_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
)

// principalsBase is a world that the cases below add access entries, roles and users to.
const principalsBase = `
cluster: {name: prod, accountId: "210987654321", region: us-west-2}
controllerRole: arn:aws:iam::210987654321:role/KarpenterControllerRole-prod
nodeRoles: [{name: KarpenterNodeRole-prod, path: /nodes/}]
`

// TestPrincipalsAndEntriesAsAWSPrintsThem: what describe-access-entry and get-role print is
// accepted; what EKS or IAM would refuse, or what contradicts the world, is refused with its
// path and the fix, word for word.
func TestPrincipalsAndEntriesAsAWSPrintsThem(t *testing.T) {
	cat := loadCatalog(t)
	for _, tt := range []struct {
		name, add string
		want      []world.Problem // nil: accepted
	}{
		{name: "EC2_LINUX entry with the username and groups EKS assigns", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", type: EC2_LINUX, username: "system:node:{{EC2PrivateDNSName}}", kubernetesGroups: ["system:nodes"], createdAt: "2024-05-14T09:12:33.123000+00:00", modifiedAt: 1715677953.123}`},
		{name: "EC2_LINUX entry with no groups", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", type: EC2_LINUX, kubernetesGroups: []}`},
		{name: "EC2_WINDOWS entry with its groups in another order", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", type: EC2_WINDOWS, username: "system:node:{{EC2PrivateDNSName}}", kubernetesGroups: ["eks:kube-proxy-windows", "system:nodes"]}`},
		{name: "HYBRID_LINUX entry with the session username", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/HybridNodesRole", type: HYBRID_LINUX, username: "system:node:{{SessionName}}"}`},
		{name: "EC2_LINUX entry with the Fargate username", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", type: EC2_LINUX, username: "system:node:{{SessionName}}"}`,
			want: []world.Problem{{Path: "accessEntries[0].username", Reason: "EKS assigns an entry of type EC2_LINUX the username system:node:{{EC2PrivateDNSName}}; remove username or give that"}}},
		{name: "FARGATE_LINUX entry with the EC2 username", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/FargatePods", type: FARGATE_LINUX, username: "system:node:{{EC2PrivateDNSName}}"}`,
			want: []world.Problem{{Path: "accessEntries[0].username", Reason: "EKS assigns an entry of type FARGATE_LINUX the username system:node:{{SessionName}}; remove username or give that"}}},
		{name: "EC2_LINUX entry with the bootstrappers group", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", type: EC2_LINUX, kubernetesGroups: ["system:bootstrappers", "system:nodes"]}`,
			want: []world.Problem{{Path: "accessEntries[0].kubernetesGroups", Reason: "EKS assigns an entry of type EC2_LINUX the groups [system:nodes]; remove kubernetesGroups or give those"}}},
		{name: "typo in a read-only field", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", type: EC2_LINUX, createAt: "2024-05-14T09:12:33Z"}`,
			want: []world.Problem{{Path: "accessEntries[0].createAt", Reason: "is not a field of the world file (field names are case-sensitive, as the AWS APIs spell them; see docs/world.md)"}}},
		{name: "STANDARD entry with a reserved username", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:user/alice", username: "eks:alice"}`,
			want: []world.Problem{{Path: "accessEntries[0].username", Reason: "EKS refuses usernames starting with eks: on STANDARD entries; choose another, or leave it out for the one EKS assigns"}}},
		{name: "SSO role the world creates", add: `
accessEntries:
- principalArn: arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_AdministratorAccess_0123456789abcdef
  username: "arn:aws:sts::210987654321:assumed-role/AWSReservedSSO_AdministratorAccess_0123456789abcdef/{{SessionName}}"
  accessPolicies: [{policyArn: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy", accessScope: {type: cluster}}]`},
		{name: "STANDARD entry for another account's role", add: `
accessEntries:
- {principalArn: "arn:aws:iam::123456789012:role/ci/deploy"}`},
		{name: "node entry for another account's role", add: `
accessEntries:
- {principalArn: "arn:aws:iam::123456789012:role/KarpenterNodeRole-prod", type: EC2_LINUX}`,
			want: []world.Problem{{Path: "accessEntries[0].principalArn", Reason: "an entry of type EC2_LINUX needs a role of the cluster's account 210987654321 (cluster.accountId), not of 123456789012"}}},
		{name: "node entry for a user", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:user/alice", type: EC2_LINUX}`,
			want: []world.Problem{{Path: "accessEntries[0].principalArn", Reason: "an entry of type EC2_LINUX lets nodes in, by their role; arn:aws:iam::210987654321:user/alice is a user: use type STANDARD or a node role"}}},
		{name: "entry for a session", add: `
accessEntries:
- {principalArn: "arn:aws:sts::210987654321:assumed-role/Admin/alice"}`,
			want: []world.Problem{{Path: "accessEntries[0].principalArn", Reason: `"arn:aws:sts::210987654321:assumed-role/Admin/alice" is a session, which EKS refuses; name its role (arn:aws:iam::ACCOUNT:role/NAME)`}}},
		{name: "listed user named at another path", add: `
users: [{userName: alice, path: /ops/}]
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:user/dev/alice"}`,
			want: []world.Problem{{Path: "accessEntries[0].principalArn", Reason: "user alice is arn:aws:iam::210987654321:user/ops/alice in this world (a path is part of the ARN); name it so, or without its path"}}},
		{name: "listed role named without its path", add: `
roles: [{name: Admin, path: /people/}]
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/Admin"}`},
		{name: "one principal with and without its path", add: `
accessEntries:
- {principalArn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", type: EC2_LINUX}
- {principalArn: "arn:aws:iam::210987654321:role/KarpenterNodeRole-prod", type: EC2_LINUX}`,
			want: []world.Problem{{Path: "accessEntries[1].principalArn", Reason: "a cluster has one access entry per principal; arn:aws:iam::210987654321:role/KarpenterNodeRole-prod has another at accessEntries[0]"}}},
		{name: "role in nodeRoles and roles", add: `
roles: [{arn: "arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod"}]`,
			want: []world.Problem{{Path: "roles[0].name", Reason: "role KarpenterNodeRole-prod is listed twice (nodeRoles and roles list each role once)"}}},
		{name: "role with both trust forms", add: `
roles:
- name: Admin
  assumeRolePolicyPrincipal: arn:aws:iam::210987654321:root
  assumeRolePolicyDocument: {Version: "2012-10-17", Statement: [{Effect: Allow, Principal: {AWS: "arn:aws:iam::210987654321:root"}, Action: "sts:AssumeRole"}]}`,
			want: []world.Problem{{Path: "roles[0].assumeRolePolicyDocument", Reason: "give the trust policy or assumeRolePolicyPrincipal, not both"}}},
		{name: "trust policy with a resource", add: `
roles:
- name: Admin
  assumeRolePolicyDocument: {Version: "2012-10-17", Statement: [{Effect: Allow, Principal: {AWS: "arn:aws:iam::210987654321:root"}, Action: "sts:AssumeRole", Resource: "*"}]}`,
			want: []world.Problem{{Path: "roles[0].assumeRolePolicyDocument.Statement[0]", Reason: "a trust policy has no Resource (the role is the resource)"}}},
		{name: "trust policy as an encoded string", add: `
roles:
- name: Admin
  assumeRolePolicyDocument: "%7B%22Version%22%3A%222012-10-17%22%7D"`,
			want: []world.Problem{{Path: "roles[0].assumeRolePolicyDocument", Reason: "must be a policy document, a mapping with Version and Statement, as get-role prints it"}}},
		{name: "user of another account", add: `
users: [{arn: "arn:aws:iam::123456789012:user/alice"}]`,
			want: []world.Problem{{Path: "users[0].arn", Reason: "the user is in account 123456789012, not the cluster's 210987654321 (cluster.accountId); the world is one account"}}},
		{name: "user listed twice", add: `
users: [{userName: alice}, {arn: "arn:aws:iam::210987654321:user/ops/alice"}]`,
			want: []world.Problem{{Path: "users[1].userName", Reason: "user alice is listed twice"}}},
		{name: "instance profile holding a role of roles", add: `
roles: [{name: BuildRunner, path: /ci/}]
instanceProfiles: [{instanceProfileName: runner, roles: ["arn:aws:iam::210987654321:role/ci/BuildRunner"]}]`},
		{name: "instance profile holding a role only an access entry names", add: `
instanceProfiles: [{instanceProfileName: runner, roles: ["arn:aws:iam::210987654321:role/Implicit"]}]
accessEntries: [{principalArn: "arn:aws:iam::210987654321:role/Implicit"}]`,
			want: []world.Problem{{Path: "instanceProfiles[0].roles[0]", Reason: "role Implicit does not exist in this world; add it to nodeRoles or roles (or name controllerRole)"}}},
		{name: "subnet as describe-subnets prints it", add: `
cluster: {name: prod, accountId: "210987654321", region: us-west-2, vpcCidr: 10.20.0.0/16}
subnets:
- {subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: us-west-2a, cidrBlock: 10.20.0.0/19, state: available, ownerId: "210987654321",
   subnetArn: "arn:aws:ec2:us-west-2:210987654321:subnet/subnet-0a1b2c3d4e5f60001", availabilityZoneId: usw2-az1, defaultForAz: false,
   ipv6CidrBlockAssociationSet: [], privateDnsNameOptionsOnLaunch: {hostnameType: ip-name}, enableLniAtDeviceIndex: 1}`},
		{name: "subnet shared from another account", add: `
cluster: {name: prod, accountId: "210987654321", region: us-west-2, vpcCidr: 10.20.0.0/16}
subnets:
- {subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: us-west-2a, cidrBlock: 10.20.0.0/19, ownerId: "999988887777",
   subnetArn: "arn:aws:ec2:us-west-2:999988887777:subnet/subnet-0a1b2c3d4e5f60001"}`},
		{name: "subnet pasted with another subnet's ARN", add: `
cluster: {name: prod, accountId: "210987654321", region: us-west-2, vpcCidr: 10.20.0.0/16}
subnets:
- {subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: us-west-2a, cidrBlock: 10.20.0.0/19,
   subnetArn: "arn:aws:ec2:us-west-2:210987654321:subnet/subnet-0a1b2c3d4e5f60002"}`,
			want: []world.Problem{{Path: "subnets[0].subnetArn", Reason: "arn:aws:ec2:us-west-2:210987654321:subnet/subnet-0a1b2c3d4e5f60002 does not name this subnet, arn:aws:ec2:us-west-2:210987654321:subnet/subnet-0a1b2c3d4e5f60001; it was printed for another one, or leave it out"}}},
		{name: "IPv6-only subnet", add: `
cluster: {name: prod, accountId: "210987654321", region: us-west-2, vpcCidr: 10.20.0.0/16}
subnets:
- {subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: us-west-2a, cidrBlock: 10.20.0.0/19, ipv6Native: true}`,
			want: []world.Problem{{Path: "subnets[0].ipv6Native", Reason: "IPv6-only subnets are not emulated; list the cluster's IPv4 subnets"}}},
		{name: "security group as describe-security-groups prints it", add: `
securityGroups:
- {groupId: sg-0a1b2c3d4e5f60001, groupName: nodes, ownerId: "210987654321", securityGroupArn: "arn:aws:ec2:us-west-2:210987654321:security-group/sg-0a1b2c3d4e5f60001",
   ipPermissions: [{ipProtocol: "-1", userIdGroupPairs: [{groupId: sg-0a1b2c3d4e5f60001}]}], ipPermissionsEgress: []}`},
		{name: "security group ARN of another region", add: `
securityGroups:
- {groupId: sg-0a1b2c3d4e5f60001, securityGroupArn: "arn:aws:ec2:eu-west-1:210987654321:security-group/sg-0a1b2c3d4e5f60001"}`,
			want: []world.Problem{{Path: "securityGroups[0].securityGroupArn", Reason: "arn:aws:ec2:eu-west-1:210987654321:security-group/sg-0a1b2c3d4e5f60001 does not name this security group, arn:aws:ec2:us-west-2:210987654321:security-group/sg-0a1b2c3d4e5f60001; it was printed for another one, or leave it out"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := principalsBase + tt.add
			if strings.Contains(tt.add, "\ncluster:") {
				doc = strings.Replace(principalsBase, `cluster: {name: prod, accountId: "210987654321", region: us-west-2}`, "", 1) + tt.add
			}
			f, err := world.Decode([]byte(doc), cat)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := seed(t, f); err != nil {
					t.Fatalf("accepted, but does not seed: %v", err)
				}
				return
			}
			var we *world.Error
			if !errors.As(err, &we) {
				t.Fatalf("error %v, want the problems %v", err, tt.want)
			}
			if diff := cmp.Diff(tt.want, we.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// seed seeds a new world from f, as the emulator does.
func seed(t *testing.T, f *world.File) (*state.World, error) {
	t.Helper()
	st := state.New(clocktesting.NewFakeClock(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)), loadCatalog(t), f.Cluster.AccountID)
	var w *state.World
	err := st.Update(func(world *state.World) error {
		w = world
		return world.Seed(f.SeedOptions(state.DefaultSeed()))
	})
	return w, err
}

// TestCLIWorldsSeed: worlds written from the CLI's own output (testdata/cli-*.world.yaml)
// decode and seed the principals and entries AWS has, with the usernames EKS assigns.
func TestCLIWorldsSeed(t *testing.T) {
	type entry struct {
		Type, Username string
		Groups         []string
	}
	type principal struct{ ARN, Trust string }
	for _, tt := range []struct {
		file    string
		entries map[string]entry
		// roles and users are the ARNs and trusted principals of roles and users that must
		// exist; absent are names that must not.
		roles, users map[string]principal
		absent       []string
	}{
		{file: "cli-node-entries.world.yaml",
			entries: map[string]entry{
				"arn:aws:iam::210987654321:role/KarpenterNodeRole-prod":                 {"EC2_LINUX", "system:node:{{EC2PrivateDNSName}}", []string{"system:nodes"}},
				"arn:aws:iam::210987654321:role/eks-nodegroup-general-NodeInstanceRole": {"EC2_LINUX", "system:node:{{EC2PrivateDNSName}}", []string{"system:nodes"}},
				"arn:aws:iam::210987654321:role/eks-fargate-pods":                       {"FARGATE_LINUX", "system:node:{{SessionName}}", []string{"system:nodes", "system:node-proxier"}},
			},
			roles: map[string]principal{
				"eks-nodegroup-general-NodeInstanceRole": {"arn:aws:iam::210987654321:role/eks-nodegroup-general-NodeInstanceRole", `"Service":"ec2.amazonaws.com"`},
				"eks-fargate-pods":                       {"arn:aws:iam::210987654321:role/eks-fargate-pods", `"Service":"eks-fargate-pods.amazonaws.com"`},
			}},
		{file: "cli-sso-admin.world.yaml",
			entries: map[string]entry{
				"arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_AdministratorAccess_0123456789abcdef": {"STANDARD",
					"arn:aws:sts::210987654321:assumed-role/AWSReservedSSO_AdministratorAccess_0123456789abcdef/{{SessionName}}", []string{}},
				"arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/us-west-2/AWSReservedSSO_ReadOnly_fedcba9876543210": {"STANDARD",
					"arn:aws:sts::210987654321:assumed-role/AWSReservedSSO_ReadOnly_fedcba9876543210/{{SessionName}}", nil},
				"arn:aws:iam::123456789012:role/ci/deploy": {"STANDARD", "arn:aws:sts::123456789012:assumed-role/deploy/{{SessionName}}", nil},
			},
			roles: map[string]principal{
				"AWSReservedSSO_AdministratorAccess_0123456789abcdef": {"arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_AdministratorAccess_0123456789abcdef", `"Federated":"arn:aws:iam::210987654321:saml-provider/AWSSSO_`},
				"AWSReservedSSO_ReadOnly_fedcba9876543210":            {"arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/us-west-2/AWSReservedSSO_ReadOnly_fedcba9876543210", `"sts:AssumeRoleWithSAML"`},
			},
			absent: []string{"deploy"}},
		{file: "cli-iam-users.world.yaml",
			entries: map[string]entry{
				"arn:aws:iam::210987654321:user/ops/alice": {"STANDARD", "arn:aws:iam::210987654321:user/ops/alice", []string{"ops-readers"}},
				"arn:aws:iam::210987654321:user/bob":       {"STANDARD", "arn:aws:iam::210987654321:user/bob", nil},
			},
			users: map[string]principal{
				"alice": {ARN: "arn:aws:iam::210987654321:user/ops/alice"},
				"bob":   {ARN: "arn:aws:iam::210987654321:user/bob"},
			}},
		{file: "cli-role-with-path.world.yaml",
			entries: map[string]entry{
				"arn:aws:iam::210987654321:role/platform/ci/GitHubActionsDeployer": {"STANDARD", "arn:aws:sts::210987654321:assumed-role/GitHubActionsDeployer/{{SessionName}}", []string{"deployers"}},
			},
			roles: map[string]principal{
				"GitHubActionsDeployer": {"arn:aws:iam::210987654321:role/platform/ci/GitHubActionsDeployer", `"Federated":"arn:aws:iam::210987654321:oidc-provider/token.actions.githubusercontent.com"`},
			}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			f, err := world.Load(filepath.Join("testdata", tt.file), loadCatalog(t))
			if err != nil {
				t.Fatal(err)
			}
			w, err := seed(t, f)
			if err != nil {
				t.Fatal(err)
			}
			c := w.Regions["us-west-2"].Clusters["prod"]
			got := map[string]entry{}
			for p, e := range c.AccessEntries {
				got[p] = entry{e.Type, e.Username, e.KubernetesGroups}
			}
			if diff := cmp.Diff(tt.entries, got); diff != "" {
				t.Errorf("access entries (-want +got):\n%s", diff)
			}
			for name, want := range tt.roles {
				r := w.IAM.Roles[name]
				if r == nil {
					t.Errorf("no role %s", name)
					continue
				}
				if r.ARN != want.ARN || !strings.Contains(r.AssumeRolePolicyDocument, want.Trust) {
					t.Errorf("role %s is %s trusting %s; want %s trusting %s", name, r.ARN, r.AssumeRolePolicyDocument, want.ARN, want.Trust)
				}
			}
			for name, want := range tt.users {
				if u := w.IAM.Users[name]; u == nil || u.ARN != want.ARN {
					t.Errorf("user %s is %+v, want %s", name, u, want.ARN)
				}
			}
			for _, name := range tt.absent {
				if w.IAM.Roles[name] != nil || w.IAM.Users[name] != nil {
					t.Errorf("%s of another account was created in the world's", name)
				}
			}
		})
	}
}
