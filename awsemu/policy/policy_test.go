package policy_test

import (
	"testing"

	"github.com/joinerhq/joiner/awsemu/policy"
)

const controller = `{
  "Version": "2012-10-17",
  "Statement": [
    {"Sid": "Read", "Effect": "Allow", "Action": ["ec2:Describe*", "pricing:GetProducts", "ssm:GetParameter"], "Resource": "*"},
    {"Sid": "Launch", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
     "Resource": ["arn:aws:ec2:*::image/*", "arn:aws:ec2:*:*:subnet/*", "arn:aws:ec2:*:*:security-group/*", "arn:aws:ec2:*:*:launch-template/*"]},
    {"Sid": "LaunchTagged", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
     "Resource": ["arn:aws:ec2:*:*:instance/*", "arn:aws:ec2:*:*:fleet/*", "arn:aws:ec2:*:*:launch-template/*", "arn:aws:ec2:*:*:volume/*"],
     "Condition": {"StringEquals": {"aws:RequestTag/kubernetes.io/cluster/demo": "owned"}, "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}}},
    {"Sid": "Terminate", "Effect": "Allow", "Action": "ec2:TerminateInstances", "Resource": "arn:aws:ec2:*:*:instance/*",
     "Condition": {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/demo": "owned"}, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}},
    {"Sid": "PassNodeRole", "Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo",
     "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}}},
    {"Sid": "NoGPUs", "Effect": "Deny", "Action": "ec2:RunInstances", "Resource": "arn:aws:ec2:*:*:instance/*",
     "Condition": {"StringLike": {"ec2:InstanceType": ["p*", "g*"]}}},
    {"Sid": "NoUntaggedSubnets", "Effect": "Deny", "NotAction": ["ec2:Describe*"], "Resource": "arn:aws:ec2:*:*:subnet/*",
     "Condition": {"Null": {"aws:ResourceTag/karpenter.sh/discovery": "true"}}}
  ]
}`

func TestEvaluate(t *testing.T) {
	doc, err := policy.Parse(controller)
	if err != nil {
		t.Fatal(err)
	}
	policies := []policy.Policy{{Name: "controller", Document: doc}}
	instance := "arn:aws:ec2:us-west-2:111122223333:instance/*"
	tagged := map[string][]string{
		"aws:RequestTag/kubernetes.io/cluster/demo": {"owned"}, "aws:RequestTag/karpenter.sh/nodepool": {"default"},
		"aws:TagKeys": {"kubernetes.io/cluster/demo", "karpenter.sh/nodepool"}, "ec2:InstanceType": {"m5.large"},
	}
	tests := []struct {
		name      string
		req       policy.Request
		allowed   bool
		explicit  bool
		statement string
	}{
		{"wildcard action allows", policy.Request{Action: "ec2:DescribeInstances", Resource: "*"}, true, false, "Read"},
		{"actions match case-insensitively", policy.Request{Action: "EC2:describeSubnets", Resource: "*"}, true, false, "Read"},
		{"unlisted action is implicitly denied", policy.Request{Action: "ec2:DeleteVpc", Resource: "*"}, false, false, ""},
		{"resource ARN pattern allows", policy.Request{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-west-2::image/ami-1"}, true, false, "Launch"},
		{"request tags meet the condition", policy.Request{Action: "ec2:RunInstances", Resource: instance, Context: tagged}, true, false, "LaunchTagged"},
		{"missing request tag fails the condition", policy.Request{Action: "ec2:RunInstances", Resource: instance,
			Context: map[string][]string{"aws:RequestTag/karpenter.sh/nodepool": {"default"}}}, false, false, ""},
		{"wrong request tag value fails the condition", policy.Request{Action: "ec2:CreateFleet", Resource: "arn:aws:ec2:us-west-2:111122223333:fleet/*",
			Context: map[string][]string{"aws:RequestTag/kubernetes.io/cluster/demo": {"shared"}, "aws:RequestTag/karpenter.sh/nodepool": {"x"}}}, false, false, ""},
		{"condition keys are case-insensitive", policy.Request{Action: "ec2:RunInstances", Resource: instance,
			Context: map[string][]string{"AWS:REQUESTTAG/kubernetes.io/cluster/demo": {"owned"}, "aws:requesttag/karpenter.sh/nodepool": {"a"}}}, true, false, "LaunchTagged"},
		{"resource tag allows terminate", policy.Request{Action: "ec2:TerminateInstances", Resource: "arn:aws:ec2:us-west-2:111122223333:instance/i-1",
			Context: map[string][]string{"aws:ResourceTag/kubernetes.io/cluster/demo": {"owned"}, "aws:ResourceTag/karpenter.sh/nodepool": {"default"}}}, true, false, "Terminate"},
		{"foreign instance cannot be terminated", policy.Request{Action: "ec2:TerminateInstances", Resource: "arn:aws:ec2:us-west-2:111122223333:instance/i-2"}, false, false, ""},
		{"explicit deny beats allow", policy.Request{Action: "ec2:RunInstances", Resource: instance,
			Context: map[string][]string{"aws:RequestTag/kubernetes.io/cluster/demo": {"owned"}, "aws:RequestTag/karpenter.sh/nodepool": {"gpu"}, "ec2:InstanceType": {"p5.48xlarge"}}}, false, true, "NoGPUs"},
		{"Null condition denies untagged subnet", policy.Request{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-west-2:111122223333:subnet/subnet-1"}, false, true, "NoUntaggedSubnets"},
		{"Null condition lets tagged subnet through", policy.Request{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-west-2:111122223333:subnet/subnet-1",
			Context: map[string][]string{"aws:ResourceTag/karpenter.sh/discovery": {"demo"}}}, true, false, "Launch"},
		{"NotAction exempts describes from the deny", policy.Request{Action: "ec2:DescribeSubnets", Resource: "arn:aws:ec2:us-west-2:111122223333:subnet/subnet-1"}, true, false, "Read"},
		{"PassRole on the node role", policy.Request{Action: "iam:PassRole", Resource: "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo",
			Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}, true, false, "PassNodeRole"},
		{"missing PassRole for another role", policy.Request{Action: "iam:PassRole", Resource: "arn:aws:iam::111122223333:role/OtherRole",
			Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := policy.Evaluate(policies, tt.req)
			if d.Allowed != tt.allowed || d.ExplicitDeny != tt.explicit {
				t.Fatalf("allowed %v explicit deny %v, want %v %v (matched %+v)", d.Allowed, d.ExplicitDeny, tt.allowed, tt.explicit, d.Matched)
			}
			if tt.statement != "" && (len(d.Matched) == 0 || d.Matched[0].Sid != tt.statement) {
				t.Errorf("matched %+v, want statement %s", d.Matched, tt.statement)
			}
		})
	}
}

func TestConditionOperators(t *testing.T) {
	tests := []struct {
		name string
		cond string
		ctx  map[string][]string
		want bool
	}{
		{"StringNotEquals holds when the key is absent", `{"StringNotEquals": {"aws:RequestTag/a": "x"}}`, nil, true},
		{"StringNotEquals fails on a match", `{"StringNotEquals": {"aws:RequestTag/a": "x"}}`, map[string][]string{"aws:RequestTag/a": {"x"}}, false},
		{"StringEqualsIfExists holds when absent", `{"StringEqualsIfExists": {"ec2:InstanceType": "m5.large"}}`, nil, true},
		{"StringEqualsIfExists checks when present", `{"StringEqualsIfExists": {"ec2:InstanceType": "m5.large"}}`, map[string][]string{"ec2:InstanceType": {"c5.large"}}, false},
		{"values are ORed", `{"StringEquals": {"ec2:InstanceType": ["c5.large", "m5.large"]}}`, map[string][]string{"ec2:InstanceType": {"m5.large"}}, true},
		{"keys are ANDed", `{"StringEquals": {"a:x": "1", "a:y": "2"}}`, map[string][]string{"a:x": {"1"}, "a:y": {"3"}}, false},
		{"ForAllValues holds when every key is allowed", `{"ForAllValues:StringEquals": {"aws:TagKeys": ["a", "b"]}}`, map[string][]string{"aws:TagKeys": {"a"}}, true},
		{"ForAllValues fails on a foreign key", `{"ForAllValues:StringEquals": {"aws:TagKeys": ["a", "b"]}}`, map[string][]string{"aws:TagKeys": {"a", "c"}}, false},
		{"ForAllValues holds vacuously when absent", `{"ForAllValues:StringEquals": {"aws:TagKeys": ["a"]}}`, nil, true},
		{"ForAnyValue holds on one match", `{"ForAnyValue:StringLike": {"aws:TagKeys": ["karpenter.sh/*"]}}`, map[string][]string{"aws:TagKeys": {"x", "karpenter.sh/nodepool"}}, true},
		{"ForAnyValue fails when absent", `{"ForAnyValue:StringLike": {"aws:TagKeys": ["*"]}}`, nil, false},
		{"Null false requires presence", `{"Null": {"aws:RequestTag/a": "false"}}`, map[string][]string{"aws:RequestTag/a": {"v"}}, true},
		{"Bool compares text", `{"Bool": {"aws:SecureTransport": true}}`, map[string][]string{"aws:SecureTransport": {"true"}}, true},
		{"NumericLessThanEquals", `{"NumericLessThanEquals": {"ec2:VolumeSize": 100}}`, map[string][]string{"ec2:VolumeSize": {"80"}}, true},
		{"ArnLike", `{"ArnLike": {"ec2:InstanceProfile": "arn:aws:iam::*:instance-profile/demo_*"}}`, map[string][]string{"ec2:InstanceProfile": {"arn:aws:iam::1:instance-profile/demo_123"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := policy.Parse(`{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": ` + tt.cond + `}}`)
			if err != nil {
				t.Fatal(err)
			}
			got := policy.Evaluate([]policy.Policy{{Name: "p", Document: doc}}, policy.Request{Action: "ec2:RunInstances", Resource: "*", Context: tt.ctx}).Allowed
			if got != tt.want {
				t.Errorf("allowed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"bad effect":       `{"Statement": [{"Effect": "Maybe", "Action": "*", "Resource": "*"}]}`,
		"no action":        `{"Statement": [{"Effect": "Allow", "Resource": "*"}]}`,
		"unknown operator": `{"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"StringSortOf": {"a": "b"}}}]}`,
		"not JSON":         `{`,
	} {
		if _, err := policy.Parse(doc); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
