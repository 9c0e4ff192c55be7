package awsemu_test

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// loadCLIWorld is the seed of world/testdata/NAME, a world written from the CLI's output.
func loadCLIWorld(t *testing.T, name string) state.SeedOptions {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, err := world.Load(filepath.Join("world", "testdata", name), cat)
	if err != nil {
		t.Fatal(err)
	}
	return f.SeedOptions(state.DefaultSeed())
}

// The tests below seed the worlds written from the CLI's output and read their principals and
// access entries back through the SDK: GetRole, GetUser, ListRoles, ListUsers and
// DescribeAccessEntry answer with the world's principals, those only an access entry names
// included, and with the usernames EKS assigns.

// TestWorldSSORolesThroughTheSDK: IAM Identity Center roles only access entries name.
func TestWorldSSORolesThroughTheSDK(t *testing.T) {
	e := newEnvIn(t, loadCLIWorld(t, "cli-sso-admin.world.yaml"), "us-west-2")
	ctx := t.Context()
	admin := "arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_AdministratorAccess_0123456789abcdef"
	role, err := e.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("AWSReservedSSO_AdministratorAccess_0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	trust, _ := url.QueryUnescape(aws.ToString(role.Role.AssumeRolePolicyDocument))
	if aws.ToString(role.Role.Arn) != admin || aws.ToString(role.Role.Path) != "/aws-reserved/sso.amazonaws.com/" || !strings.Contains(trust, "sts:AssumeRoleWithSAML") {
		t.Errorf("role %s at %s trusting %s", aws.ToString(role.Role.Arn), aws.ToString(role.Role.Path), trust)
	}
	var listed []string
	for p := iam.NewListRolesPaginator(e.iam, &iam.ListRolesInput{PathPrefix: aws.String("/aws-reserved/"), MaxItems: aws.Int32(1)}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Roles {
			listed = append(listed, aws.ToString(r.Arn))
		}
	}
	want := []string{admin, "arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/us-west-2/AWSReservedSSO_ReadOnly_fedcba9876543210"}
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("ListRoles under /aws-reserved/, a page of one at a time (-want +got):\n%s", diff)
	}
	client := eks.NewFromConfig(e.config(t, "us-west-2", state.DefaultSeed().ControllerAccessKey))
	entry, err := client.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("prod"),
		PrincipalArn: aws.String("arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/us-west-2/AWSReservedSSO_ReadOnly_fedcba9876543210")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(entry.AccessEntry.Username); got != "arn:aws:sts::210987654321:assumed-role/AWSReservedSSO_ReadOnly_fedcba9876543210/{{SessionName}}" {
		t.Errorf("username %s", got)
	}
	entries, err := client.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String("prod")})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries.AccessEntries) != 3 || !slices.Contains(entries.AccessEntries, admin) {
		t.Errorf("access entries %v", entries.AccessEntries)
	}
}

// TestWorldUsersThroughTheSDK: a listed user and one only an access entry names.
func TestWorldUsersThroughTheSDK(t *testing.T) {
	e := newEnvIn(t, loadCLIWorld(t, "cli-iam-users.world.yaml"), "us-west-2")
	ctx := t.Context()
	user, err := e.iam.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(user.User.Arn) != "arn:aws:iam::210987654321:user/ops/alice" || !strings.HasPrefix(aws.ToString(user.User.UserId), "AIDA") || len(user.User.Tags) != 1 {
		t.Errorf("user %+v", user.User)
	}
	_, err = e.iam.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("carol")})
	wantCode(t, err, "NoSuchEntity", "unknown user")
	_, err = e.iam.GetUser(ctx, &iam.GetUserInput{})
	wantCode(t, err, "ValidationError", "no user name from a role's session")
	users, err := e.iam.ListUsers(ctx, &iam.ListUsersInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range users.Users {
		names = append(names, aws.ToString(u.UserName))
	}
	if diff := cmp.Diff([]string{"alice", "bob"}, names); diff != "" {
		t.Errorf("ListUsers (-want +got):\n%s", diff)
	}
	policies, err := e.iam.ListAttachedUserPolicies(ctx, &iam.ListAttachedUserPoliciesInput{UserName: aws.String("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if len(policies.AttachedPolicies) != 1 || aws.ToString(policies.AttachedPolicies[0].PolicyName) != "ReadOnlyAccess" {
		t.Errorf("alice's policies %+v", policies.AttachedPolicies)
	}
	client := eks.NewFromConfig(e.config(t, "us-west-2", state.DefaultSeed().ControllerAccessKey))
	entry, err := client.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("prod"), PrincipalArn: aws.String("arn:aws:iam::210987654321:user/bob")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(entry.AccessEntry.Username); got != "arn:aws:iam::210987654321:user/bob" {
		t.Errorf("bob's username %s, want his ARN", got)
	}
	// EKS lets in only principals that exist: a user the account does not have is refused.
	_, err = client.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: aws.String("prod"), PrincipalArn: aws.String("arn:aws:iam::210987654321:user/carol")})
	wantCode(t, err, "InvalidParameterException", "entry for a user that does not exist")
}

// TestWorldNodeEntriesAndPathsThroughTheSDK: a node group's role only its entry names, and a
// role with a path held by an instance profile.
func TestWorldNodeEntriesAndPathsThroughTheSDK(t *testing.T) {
	e := newEnvIn(t, loadCLIWorld(t, "cli-node-entries.world.yaml"), "us-west-2")
	ctx := t.Context()
	client := eks.NewFromConfig(e.config(t, "us-west-2", state.DefaultSeed().ControllerAccessKey))
	entry, err := client.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("prod"),
		PrincipalArn: aws.String("arn:aws:iam::210987654321:role/eks-nodegroup-general-NodeInstanceRole")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(entry.AccessEntry.Username) != "system:node:{{EC2PrivateDNSName}}" || !slices.Equal(entry.AccessEntry.KubernetesGroups, []string{"system:nodes"}) {
		t.Errorf("entry %s in %v", aws.ToString(entry.AccessEntry.Username), entry.AccessEntry.KubernetesGroups)
	}
	if _, err := e.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("eks-nodegroup-general-NodeInstanceRole")}); err != nil {
		t.Errorf("the node group's role, which only its entry names: %v", err)
	}

	e = newEnvIn(t, loadCLIWorld(t, "cli-role-with-path.world.yaml"), "us-west-2")
	role, err := e.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("GitHubActionsDeployer")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(role.Role.Arn) != "arn:aws:iam::210987654321:role/platform/ci/GitHubActionsDeployer" || aws.ToString(role.Role.Description) != "Deploys from GitHub Actions" {
		t.Errorf("role %+v", role.Role)
	}
	listed, err := e.iam.ListRoles(ctx, &iam.ListRolesInput{PathPrefix: aws.String("/platform/")})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Roles) != 1 || aws.ToString(listed.Roles[0].RoleName) != "GitHubActionsDeployer" || listed.IsTruncated {
		t.Errorf("ListRoles under /platform/: %+v", listed.Roles)
	}
	profile, err := e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("ci-runner")})
	if err != nil {
		t.Fatal(err)
	}
	if len(profile.InstanceProfile.Roles) != 1 || aws.ToString(profile.InstanceProfile.Roles[0].RoleName) != "GitHubActionsDeployer" {
		t.Errorf("instance profile roles %+v", profile.InstanceProfile.Roles)
	}
}
