package awsemu_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

func TestInstanceProfileLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	created, err := e.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
		InstanceProfileName: aws.String("demo_1234"), Path: aws.String("/karpenter/"),
		Tags: []iamtypes.Tag{{Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String("default")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(*created.InstanceProfile.Arn, ":instance-profile/demo_1234") || len(created.InstanceProfile.Roles) != 0 {
		t.Errorf("created: %+v", created.InstanceProfile)
	}
	_, err = e.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("demo_1234")})
	wantCode(t, err, "EntityAlreadyExists", "duplicate")
	if _, err := e.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("demo_1234"), RoleName: aws.String("KarpenterNodeRole-demo")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("demo_1234"), RoleName: aws.String("KarpenterNodeRole-demo")})
	wantCode(t, err, "LimitExceeded", "second role")
	if _, err := e.iam.TagInstanceProfile(ctx, &iam.TagInstanceProfileInput{InstanceProfileName: aws.String("demo_1234"),
		Tags: []iamtypes.Tag{{Key: aws.String("team"), Value: aws.String("platform")}}}); err != nil {
		t.Fatal(err)
	}
	got, err := e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("demo_1234")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.InstanceProfile.Roles) != 1 || *got.InstanceProfile.Roles[0].RoleName != "KarpenterNodeRole-demo" || len(got.InstanceProfile.Tags) != 2 || *got.InstanceProfile.Path != "/karpenter/" {
		t.Errorf("got: %+v", got.InstanceProfile)
	}
	list, err := e.iam.ListInstanceProfiles(ctx, &iam.ListInstanceProfilesInput{PathPrefix: aws.String("/karpenter/")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.InstanceProfiles) != 1 || list.IsTruncated {
		t.Errorf("listed: %+v", list.InstanceProfiles)
	}
	_, err = e.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String("demo_1234")})
	wantCode(t, err, "DeleteConflict", "delete with a role")
	if _, err := e.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String("demo_1234"), RoleName: aws.String("KarpenterNodeRole-demo")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String("demo_1234")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("demo_1234")})
	var nse *iamtypes.NoSuchEntityException
	if code := errorCode(t, err); code != "NoSuchEntity" || !errorsAs(err, &nse) {
		t.Errorf("after delete: %s (%T)", code, err)
	}
}

func TestGetRoleAndCallerIdentity(t *testing.T) {
	e := newEnv(t)
	role, err := e.iam.GetRole(t.Context(), &iam.GetRoleInput{RoleName: aws.String("KarpenterNodeRole-demo")})
	if err != nil {
		t.Fatal(err)
	}
	if *role.Role.Arn != "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo" || !strings.HasPrefix(*role.Role.RoleId, "AROA") {
		t.Errorf("role: %+v", role.Role)
	}
	_, err = e.iam.GetRole(t.Context(), &iam.GetRoleInput{RoleName: aws.String("Nobody")})
	wantCode(t, err, "NoSuchEntity", "unknown role")
	who, err := e.sts.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if *who.Account != "111122223333" || !strings.HasPrefix(*who.Arn, "arn:aws:sts::111122223333:assumed-role/JoinerControllerRole/") {
		t.Errorf("caller: %s %s", *who.Account, *who.Arn)
	}
}

func TestUnknownAccessKey(t *testing.T) {
	e := newEnv(t)
	cfg := e.config(t, e.region, "AKIDSTRANGER")
	_, err := ec2.NewFromConfig(cfg).DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{})
	wantCode(t, err, "AuthFailure", "ec2")
	_, err = sts.NewFromConfig(cfg).GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	wantCode(t, err, "InvalidClientTokenId", "sts")
}

// karpenterStyle allows launches only with the cluster's ownership tag, and termination only of
// instances carrying it, as Karpenter's reference controller policy does; REGION stands for the
// region the suite runs in.
const karpenterStyle = `{"Version": "2012-10-17", "Statement": [
  {"Sid": "Read", "Effect": "Allow", "Action": ["ec2:Describe*", "iam:GetInstanceProfile"], "Resource": "*"},
  {"Sid": "AllowScopedEC2InstanceAccessActions", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
   "Resource": ["arn:aws:ec2:REGION::image/*", "arn:aws:ec2:REGION:*:subnet/*", "arn:aws:ec2:REGION:*:security-group/*",
                "arn:aws:ec2:REGION:*:network-interface/*", "arn:aws:ec2:REGION:*:launch-template/*"]},
  {"Sid": "AllowScopedEC2InstanceActionsWithTags", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
   "Resource": ["arn:aws:ec2:REGION:*:instance/*", "arn:aws:ec2:REGION:*:volume/*", "arn:aws:ec2:REGION:*:fleet/*"],
   "Condition": {"StringEquals": {"aws:RequestTag/kubernetes.io/cluster/demo": "owned"}}},
  {"Sid": "AllowScopedResourceCreationTagging", "Effect": "Allow", "Action": "ec2:CreateTags",
   "Resource": ["arn:aws:ec2:REGION:*:instance/*", "arn:aws:ec2:REGION:*:volume/*", "arn:aws:ec2:REGION:*:fleet/*"],
   "Condition": {"StringEquals": {"aws:RequestTag/kubernetes.io/cluster/demo": "owned", "ec2:CreateAction": ["RunInstances", "CreateFleet"]}}},
  {"Sid": "AllowScopedDeletion", "Effect": "Allow", "Action": "ec2:TerminateInstances", "Resource": "arn:aws:ec2:REGION:*:instance/*",
   "Condition": {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/demo": "owned"}}},
  {"Sid": "AllowPassingInstanceRole", "Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo",
   "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}}},
  {"Sid": "Decode", "Effect": "Allow", "Action": "sts:DecodeAuthorizationMessage", "Resource": "*"}
]}`

func TestLaunchAuthorizationByTags(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	run := func(tags map[string]string, dryRun bool) (string, error) {
		var ts []ec2types.Tag
		for k, v := range tags {
			ts = append(ts, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		out, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
			DryRun: aws.Bool(dryRun), MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: aws.String(f.amd64AMI),
			InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")]), SecurityGroupIds: []string{f.group},
			IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String("KarpenterNodeRole-demo")},
			TagSpecifications: []ec2types.TagSpecification{
				{ResourceType: ec2types.ResourceTypeInstance, Tags: ts}, {ResourceType: ec2types.ResourceTypeVolume, Tags: ts},
			},
		})
		if err != nil {
			return "", err
		}
		return *out.Instances[0].InstanceId, nil
	}
	foreign, err := run(map[string]string{"team": "other"}, false) // launched while everything is allowed
	if err != nil {
		t.Fatal(err)
	}
	e.setControllerPolicy(t, strings.ReplaceAll(karpenterStyle, "REGION", e.region))
	owned := map[string]string{"kubernetes.io/cluster/demo": "owned"}
	if _, err := run(owned, true); errorCode(t, err) != "DryRunOperation" {
		t.Errorf("owned dry run: %v", err)
	}
	if _, err := run(map[string]string{"kubernetes.io/cluster/demo": "shared"}, true); errorCode(t, err) != "UnauthorizedOperation" {
		t.Errorf("shared-tag dry run: %v", err)
	}
	id, err := run(owned, false)
	if err != nil {
		t.Fatalf("owned launch: %v", err)
	}
	if _, err := e.ec2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: []string{foreign}}); errorCode(t, err) != "UnauthorizedOperation" {
		t.Errorf("terminating an instance without the ownership tag: %v", err)
	}
	if _, err := e.ec2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Errorf("terminating an owned instance: %v", err)
	}
}

func TestIAMAccessDeniedAndPagination(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		if _, err := e.iam.CreateInstanceProfile(t.Context(), &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("p" + string(rune('a'+i)))}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	p := iam.NewListInstanceProfilesPaginator(e.iam, &iam.ListInstanceProfilesInput{MaxItems: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, ip := range page.InstanceProfiles {
			names = append(names, *ip.InstanceProfileName)
		}
	}
	if len(names) != 4 { // three created and the seeded node profile
		t.Errorf("listed %v", names)
	}
	e.setControllerPolicy(t, `{"Statement": [{"Effect": "Allow", "Action": "iam:Get*", "Resource": "*"}]}`)
	_, err := e.iam.CreateInstanceProfile(t.Context(), &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("denied")})
	wantCode(t, err, "AccessDenied", "create without iam:CreateInstanceProfile")
	if _, err := e.iam.GetInstanceProfile(t.Context(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("pa")}); err != nil {
		t.Errorf("get is allowed: %v", err)
	}
}

// TestCreationTagging: creating a launch template or an instance profile with tags needs the
// tagging action too (ec2:CreateTags with ec2:CreateAction, iam:TagInstanceProfile), as AWS
// authorizes it; without tags the create action alone is enough.
func TestCreationTagging(t *testing.T) {
	e := newEnv(t)
	createOnly := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:CreateLaunchTemplate","iam:CreateInstanceProfile"],"Resource":"*"}]}`
	withTagging := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:CreateLaunchTemplate","iam:CreateInstanceProfile"],"Resource":"*"},
		{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"ec2:CreateAction":"CreateLaunchTemplate"}}},
		{"Effect":"Allow","Action":"iam:TagInstanceProfile","Resource":"*"}]}`
	template := func(name string, tagged bool) error {
		in := &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{InstanceType: ec2types.InstanceTypeM5Large}}
		if tagged {
			in.TagSpecifications = []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
				Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}}}
		}
		_, err := e.ec2.CreateLaunchTemplate(t.Context(), in)
		return err
	}
	profile := func(name string, tagged bool) error {
		in := &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name)}
		if tagged {
			in.Tags = []iamtypes.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}
		}
		_, err := e.iam.CreateInstanceProfile(t.Context(), in)
		return err
	}
	e.setControllerPolicy(t, createOnly)
	if err := template("untagged", false); err != nil {
		t.Errorf("untagged launch template with ec2:CreateLaunchTemplate: %v", err)
	}
	if err := profile("untagged", false); err != nil {
		t.Errorf("untagged instance profile with iam:CreateInstanceProfile: %v", err)
	}
	wantCode(t, template("tagged", true), "UnauthorizedOperation", "tagged launch template without ec2:CreateTags")
	wantCode(t, profile("tagged", true), "AccessDenied", "tagged instance profile without iam:TagInstanceProfile")
	e.setControllerPolicy(t, withTagging)
	if err := template("tagged", true); err != nil {
		t.Errorf("tagged launch template with ec2:CreateTags on CreateLaunchTemplate: %v", err)
	}
	if err := profile("tagged", true); err != nil {
		t.Errorf("tagged instance profile with iam:TagInstanceProfile: %v", err)
	}
}

// TestCreationTaggingResourceTags: at creation, iam:TagInstanceProfile sees the new profile's
// tags (the request's) as aws:ResourceTag, so a statement conditioned on both aws:ResourceTag and
// aws:RequestTag, as Karpenter's AllowScopedInstanceProfileTagActions is, lets the controller
// create its tagged profiles; a profile requested without the cluster tag is still denied.
func TestCreationTaggingResourceTags(t *testing.T) {
	e := newEnv(t)
	e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"iam:CreateInstanceProfile","Resource":"*"},
		{"Effect":"Allow","Action":"iam:TagInstanceProfile","Resource":"*","Condition":{"StringEquals":{
			"aws:ResourceTag/kubernetes.io/cluster/demo":"owned","aws:RequestTag/kubernetes.io/cluster/demo":"owned"}}}]}`)
	profile := func(name, cluster string) error {
		_, err := e.iam.CreateInstanceProfile(t.Context(), &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name),
			Tags: []iamtypes.Tag{{Key: aws.String("kubernetes.io/cluster/" + cluster), Value: aws.String("owned")}}})
		return err
	}
	if err := profile("ours", "demo"); err != nil {
		t.Errorf("profile created with the cluster tag: %v", err)
	}
	wantCode(t, profile("theirs", "other"), "AccessDenied", "profile created with another cluster's tag")
	// Tagging an existing profile still reads its stored tags: "theirs" was not created.
	_, err := e.iam.TagInstanceProfile(t.Context(), &iam.TagInstanceProfileInput{InstanceProfileName: aws.String("ours"),
		Tags: []iamtypes.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}})
	if err != nil {
		t.Errorf("tagging the cluster's own profile: %v", err)
	}
}
