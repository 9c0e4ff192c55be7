package iampolicy

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu/policy"
)

func validOptions() Options {
	return Options{ClusterName: "demo", Region: "us-west-2", AccountID: "111122223333", NodeRoles: []string{"KarpenterNodeRole-demo"}}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
		want   string // substring of the error; "" for valid
	}{
		{name: "valid", change: func(*Options) {}},
		{name: "queue and role path", change: func(o *Options) { o.InterruptionQueue = "demo"; o.NodeRoles = []string{"/nodes/Role-1"} }},
		{name: "no cluster", change: func(o *Options) { o.ClusterName = "" }, want: "--cluster"},
		{name: "bad region", change: func(o *Options) { o.Region = "oregon" }, want: "--region \"oregon\""},
		{name: "short account", change: func(o *Options) { o.AccountID = "1234" }, want: "--account \"1234\""},
		{name: "no node role", change: func(o *Options) { o.NodeRoles = nil }, want: "--node-role"},
		{name: "role ARN instead of name", change: func(o *Options) { o.NodeRoles = []string{"arn:aws:iam::111122223333:role/x"} }, want: "is not an IAM role name"},
		{name: "queue URL", change: func(o *Options) { o.InterruptionQueue = "https://sqs.us-west-2.amazonaws.com/111122223333/demo" }, want: "--interruption-queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.change(&o)
			err := o.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestPartition(t *testing.T) {
	for region, want := range map[string]string{"us-east-1": "aws", "cn-north-1": "aws-cn", "us-gov-west-1": "aws-us-gov", "eu-west-1": "aws"} {
		if got := Partition(region); got != want {
			t.Errorf("Partition(%s) = %s, want %s", region, got, want)
		}
		o := validOptions()
		o.Region = region
		if doc, _ := json.Marshal(New(o)); !strings.Contains(string(doc), "arn:"+want+":ec2:"+region+":") {
			t.Errorf("policy of %s has no arn:%s:ec2:%s: resources", region, want, region)
		}
	}
}

// TestPolicyScope evaluates the document with the emulator's IAM evaluator for requests shaped
// as AWS authorizes the controller's calls: the calls of its own cluster are allowed, the same
// calls on another cluster's resources, in another region or with tags missing are denied.
func TestPolicyScope(t *testing.T) {
	const (
		acct    = "111122223333"
		cluster = "kubernetes.io/cluster/demo"
	)
	launchTags := map[string][]string{
		"aws:RequestTag/" + cluster: {"owned"}, "aws:RequestTag/karpenter.sh/nodepool": {"default"},
		"aws:TagKeys": {cluster, "karpenter.sh/nodepool"},
	}
	with := func(base map[string][]string, kv ...string) map[string][]string {
		out := map[string][]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(out, kv[i])
				continue
			}
			out[kv[i]] = []string{kv[i+1]}
		}
		return out
	}
	ownedInstance := map[string][]string{"aws:ResourceTag/" + cluster: {"owned"}, "aws:ResourceTag/karpenter.sh/nodepool": {"default"}}
	ownedTemplate := map[string][]string{"aws:ResourceTag/" + cluster: {"owned"}, "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": {"default"}}
	templateTags := map[string][]string{"aws:RequestTag/" + cluster: {"owned"}, "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": {"default"}}
	profileRequest := map[string][]string{
		"aws:RequestTag/" + cluster: {"owned"}, "aws:RequestTag/topology.kubernetes.io/region": {"us-west-2"},
		"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": {"default"},
	}
	profileResource := map[string][]string{
		"aws:ResourceTag/" + cluster: {"owned"}, "aws:ResourceTag/topology.kubernetes.io/region": {"us-west-2"},
		"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": {"default"},
	}
	ec2 := func(kind string) string { return "arn:aws:ec2:us-west-2:" + acct + ":" + kind }
	profile := "arn:aws:iam::" + acct + ":instance-profile/demo_123"
	tests := []struct {
		name    string
		queue   string
		req     policy.Request
		allowed bool
	}{
		{name: "launch an instance of the cluster", req: policy.Request{Action: "ec2:RunInstances", Resource: ec2("instance/*"), Context: launchTags}, allowed: true},
		{name: "its volume", req: policy.Request{Action: "ec2:RunInstances", Resource: ec2("volume/*"), Context: launchTags}, allowed: true},
		{name: "the fleet", req: policy.Request{Action: "ec2:CreateFleet", Resource: ec2("fleet/*"), Context: launchTags}, allowed: true},
		{name: "a public image", req: policy.Request{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-west-2::image/ami-1"}, allowed: true},
		{name: "a shared-VPC subnet", req: policy.Request{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-west-2:444455556666:subnet/subnet-1"}, allowed: true},
		{name: "the cluster's launch template", req: policy.Request{Action: "ec2:CreateFleet", Resource: ec2("launch-template/lt-1"), Context: ownedTemplate}, allowed: true},
		{name: "another cluster's launch template", req: policy.Request{Action: "ec2:CreateFleet", Resource: ec2("launch-template/lt-1"), Context: with(ownedTemplate, "aws:ResourceTag/"+cluster, "")}},
		{name: "an instance for another cluster", req: policy.Request{Action: "ec2:RunInstances", Resource: ec2("instance/*"), Context: with(launchTags, "aws:RequestTag/"+cluster, "", "aws:RequestTag/kubernetes.io/cluster/other", "owned")}},
		{name: "an instance without a NodePool", req: policy.Request{Action: "ec2:RunInstances", Resource: ec2("instance/*"), Context: with(launchTags, "aws:RequestTag/karpenter.sh/nodepool", "")}},
		{name: "an instance in another region", req: policy.Request{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:eu-west-1:" + acct + ":instance/*", Context: launchTags}},
		{name: "an untagged fleet", req: policy.Request{Action: "ec2:CreateFleet", Resource: ec2("fleet/*")}},
		{name: "tag while launching", req: policy.Request{Action: "ec2:CreateTags", Resource: ec2("instance/*"), Context: with(launchTags, "ec2:CreateAction", "CreateFleet")}, allowed: true},
		{name: "tag an existing instance", req: policy.Request{Action: "ec2:CreateTags", Resource: ec2("instance/i-1"), Context: launchTags}},
		{name: "create a launch template", req: policy.Request{Action: "ec2:CreateLaunchTemplate", Resource: ec2("launch-template/*"), Context: templateTags}, allowed: true},
		{name: "tag it while creating", req: policy.Request{Action: "ec2:CreateTags", Resource: ec2("launch-template/*"), Context: with(templateTags, "ec2:CreateAction", "CreateLaunchTemplate")}, allowed: true},
		{name: "create an untagged launch template", req: policy.Request{Action: "ec2:CreateLaunchTemplate", Resource: ec2("launch-template/*")}},
		{name: "terminate the cluster's instance", req: policy.Request{Action: "ec2:TerminateInstances", Resource: ec2("instance/i-1"), Context: ownedInstance}, allowed: true},
		{name: "read the console of the cluster's instance", req: policy.Request{Action: "ec2:GetConsoleOutput", Resource: ec2("instance/i-1"), Context: ownedInstance}, allowed: true},
		{name: "read the console of another instance", req: policy.Request{Action: "ec2:GetConsoleOutput", Resource: ec2("instance/i-1"), Context: with(ownedInstance, "aws:ResourceTag/"+cluster, "")}},
		{name: "terminate another instance", req: policy.Request{Action: "ec2:TerminateInstances", Resource: ec2("instance/i-1"), Context: with(ownedInstance, "aws:ResourceTag/karpenter.sh/nodepool", "")}},
		{name: "delete the cluster's launch template", req: policy.Request{Action: "ec2:DeleteLaunchTemplate", Resource: ec2("launch-template/lt-1"), Context: ownedTemplate}, allowed: true},
		{name: "delete another launch template", req: policy.Request{Action: "ec2:DeleteLaunchTemplate", Resource: ec2("launch-template/lt-1")}},
		{name: "describe in the region", req: policy.Request{Action: "ec2:DescribeInstances", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"us-west-2"}}}, allowed: true},
		{name: "describe another region", req: policy.Request{Action: "ec2:DescribeInstances", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"eu-west-1"}}}},
		{name: "an action never called", req: policy.Request{Action: "ec2:DescribeAvailabilityZones", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"us-west-2"}}}},
		{name: "a public AMI parameter", req: policy.Request{Action: "ssm:GetParameter", Resource: "arn:aws:ssm:us-west-2::parameter/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"}, allowed: true},
		{name: "a private parameter", req: policy.Request{Action: "ssm:GetParameter", Resource: "arn:aws:ssm:us-west-2:" + acct + ":parameter/secret"}},
		{name: "pass the node role to EC2", req: policy.Request{Action: "iam:PassRole", Resource: "arn:aws:iam::" + acct + ":role/KarpenterNodeRole-demo", Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}, allowed: true},
		{name: "pass it to another service", req: policy.Request{Action: "iam:PassRole", Resource: "arn:aws:iam::" + acct + ":role/KarpenterNodeRole-demo", Context: map[string][]string{"iam:PassedToService": {"lambda.amazonaws.com"}}}},
		{name: "pass another role", req: policy.Request{Action: "iam:PassRole", Resource: "arn:aws:iam::" + acct + ":role/Admin", Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}},
		{name: "create the class's profile", req: policy.Request{Action: "iam:CreateInstanceProfile", Resource: profile, Context: profileRequest}, allowed: true},
		{name: "tag it on creation", req: policy.Request{Action: "iam:TagInstanceProfile", Resource: profile, Context: profileRequest}, allowed: true},
		{name: "create a profile without the region tag", req: policy.Request{Action: "iam:CreateInstanceProfile", Resource: profile, Context: with(profileRequest, "aws:RequestTag/topology.kubernetes.io/region", "")}},
		{name: "create a profile outside the cluster's names", req: policy.Request{Action: "iam:CreateInstanceProfile", Resource: "arn:aws:iam::" + acct + ":instance-profile/admin", Context: profileRequest}},
		{name: "add the role to the class's profile", req: policy.Request{Action: "iam:AddRoleToInstanceProfile", Resource: profile, Context: profileResource}, allowed: true},
		{name: "delete a profile of another region", req: policy.Request{Action: "iam:DeleteInstanceProfile", Resource: profile, Context: with(profileResource, "aws:ResourceTag/topology.kubernetes.io/region", "eu-west-1")}},
		{name: "read a user's profile", req: policy.Request{Action: "iam:GetInstanceProfile", Resource: "arn:aws:iam::" + acct + ":instance-profile/MyNodes"}, allowed: true},
		{name: "describe the cluster", req: policy.Request{Action: "eks:DescribeCluster", Resource: "arn:aws:eks:us-west-2:" + acct + ":cluster/demo"}, allowed: true},
		{name: "describe another cluster", req: policy.Request{Action: "eks:DescribeCluster", Resource: "arn:aws:eks:us-west-2:" + acct + ":cluster/prod"}},
		{name: "prices", req: policy.Request{Action: "pricing:GetProducts", Resource: "*"}, allowed: true},
		{name: "decode a denial", req: policy.Request{Action: "sts:DecodeAuthorizationMessage", Resource: "*"}, allowed: true},
		{name: "no queue, no SQS", req: policy.Request{Action: "sqs:ReceiveMessage", Resource: "arn:aws:sqs:us-west-2:" + acct + ":demo"}},
		{name: "the interruption queue", queue: "demo", req: policy.Request{Action: "sqs:ReceiveMessage", Resource: "arn:aws:sqs:us-west-2:" + acct + ":demo"}, allowed: true},
		{name: "another queue", queue: "demo", req: policy.Request{Action: "sqs:DeleteMessage", Resource: "arn:aws:sqs:us-west-2:" + acct + ":orders"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			o.InterruptionQueue = tt.queue
			raw, err := json.Marshal(New(o))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := policy.Parse(string(raw))
			if err != nil {
				t.Fatalf("the emulator's evaluator cannot parse the policy: %v", err)
			}
			d := policy.Evaluate([]policy.Policy{{Name: "joiner", Document: doc}}, tt.req)
			if d.Allowed != tt.allowed {
				t.Errorf("%s on %s: allowed = %t, want %t", tt.req.Action, tt.req.Resource, d.Allowed, tt.allowed)
			}
		})
	}
}

func TestRender(t *testing.T) {
	o := validOptions()
	out, err := Render(o, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("json output does not parse: %v", err)
	}
	if doc.Version != "2012-10-17" || len(doc.Statement) != len(New(o).Statement) {
		t.Errorf("json output: version %q with %d statements, want 2012-10-17 with %d", doc.Version, len(doc.Statement), len(New(o).Statement))
	}

	out, err = Render(o, FormatCloudFormation)
	if err != nil {
		t.Fatal(err)
	}
	var template struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				ManagedPolicyName string
				PolicyDocument    Document
			}
		}
	}
	if err := yaml.Unmarshal(out, &template); err != nil {
		t.Fatalf("cloudformation output does not parse: %v", err)
	}
	res := template.Resources["JoinerControllerPolicy"]
	if res.Type != "AWS::IAM::ManagedPolicy" || res.Properties.ManagedPolicyName != "JoinerControllerPolicy-demo" {
		t.Errorf("cloudformation resource = %+v, want an AWS::IAM::ManagedPolicy named JoinerControllerPolicy-demo", res)
	}
	if got, want := res.Properties.PolicyDocument.Actions(), New(o).Actions(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("cloudformation policy actions = %v, want %v", got, want)
	}

	if _, err := Render(o, "yaml"); err == nil || !strings.Contains(err.Error(), "json or cloudformation") {
		t.Errorf("Render(yaml) = %v, want an error naming the formats", err)
	}
}
