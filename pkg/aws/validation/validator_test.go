package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/joinerhq/joiner/awsemu/emutest"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/instanceprofile"
	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/aws/nodeclass"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

// newResolver starts an emulator and returns a node class status resolver that validates, and a
// function replacing the controller role's policy.
func newResolver(t *testing.T) (*nodeclass.Resolver, func(doc string)) {
	t.Helper()
	e := emutest.Start(t)
	clk, c := e.Clock, e.Clients
	prices := pricing.NewProvider(c.Pricing, c.EC2, "us-west-2", clk)
	its := instancetype.NewProvider(c.EC2, prices, instancetype.NewUnavailableOfferings(clk), clk, 0)
	cluster := userdata.Cluster{Name: "demo", Endpoint: "https://demo.eks.example", CABundle: "Q0E=", DNS: "10.100.0.10", CIDR: "10.100.0.0/16"}
	validator := NewValidator(c.EC2, c.STS, its, cluster)
	resolver := nodeclass.NewResolver(c.EC2, c.SSM, instanceprofile.NewProvider(c.IAM, "demo", "us-west-2"), validator, "1.33", clk)
	setPolicy := func(doc string) { e.SetControllerPolicy(t, doc) }
	return resolver, setPolicy
}

func validationClass() *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		Role:                       "KarpenterNodeRole-demo",
	}}
	nc.Name = "default"
	return nc
}

// TestValidationNamesMissingPassRole is the acceptance test: without iam:PassRole on the node
// role, ValidationSucceeded is False naming iam:PassRole and the role's ARN; once the policy is
// fixed it turns True.
func TestValidationNamesMissingPassRole(t *testing.T) {
	resolver, setPolicy := newResolver(t)
	nc := validationClass()
	// The instance profile is created first under the allow-all policy.
	if err := resolver.Resolve(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded) {
		t.Fatalf("ValidationSucceeded not True under allow-all: %+v", meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded))
	}

	setPolicy(`{"Version":"2012-10-17","Statement":[{"Sid":"AllButPassRole","Effect":"Allow","NotAction":"iam:PassRole","Resource":"*"}]}`)
	if err := resolver.Resolve(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
	if cond == nil || cond.Status != "False" {
		t.Fatalf("ValidationSucceeded %+v, want False", cond)
	}
	const roleARN = "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
	for _, want := range []string{"iam:PassRole", roleARN} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("message %q does not name %s", cond.Message, want)
		}
	}
	if cond.Reason != ReasonRunInstancesAuthorizationFailed {
		t.Errorf("reason %s, want %s", cond.Reason, ReasonRunInstancesAuthorizationFailed)
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) {
		t.Error("Ready with validation failing")
	}
	t.Logf("condition message: %s", cond.Message)

	setPolicy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":"iam:PassRole","Resource":"*"},
{"Effect":"Allow","Action":"iam:PassRole","Resource":"` + roleARN + `"}]}`)
	if err := resolver.Resolve(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded) || !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) {
		t.Errorf("after fixing the policy: %+v", nc.Status.Conditions)
	}
}

func TestValidationReasons(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		reason string
		action string
	}{
		{name: "no CreateLaunchTemplate",
			policy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Sid":"NoLT","Effect":"Deny","Action":"ec2:CreateLaunchTemplate","Resource":"*"}]}`,
			reason: ReasonCreateLaunchTemplateAuthorizationFailed, action: "ec2:CreateLaunchTemplate"},
		{name: "no CreateFleet",
			policy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":"ec2:CreateFleet","Resource":"*"}]}`,
			reason: ReasonCreateFleetAuthorizationFailed, action: "ec2:CreateFleet"},
		{name: "RunInstances denied on untagged requests",
			policy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Sid":"OnlyTeamX","Effect":"Deny","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:*:*:instance/*","Condition":{"StringNotEquals":{"aws:RequestTag/team":"x"}}}]}`,
			reason: ReasonRunInstancesAuthorizationFailed, action: "ec2:RunInstances"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resolver, setPolicy := newResolver(t)
			nc := validationClass()
			if err := resolver.Resolve(t.Context(), nc); err != nil {
				t.Fatal(err)
			}
			setPolicy(tt.policy)
			_ = resolver.Resolve(t.Context(), nc)
			cond := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
			if cond == nil || cond.Status != "False" || cond.Reason != tt.reason || !strings.Contains(cond.Message, tt.action) {
				t.Errorf("ValidationSucceeded %+v, want False %s naming %s", cond, tt.reason, tt.action)
			}
		})
	}
}
