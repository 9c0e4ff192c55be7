package awsemu_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joinerhq/joiner/awsemu/state"
)

// fixture is what a launch needs from the seeded world.
type fixture struct {
	subnets  map[string]string // zone → subnet id
	group    string
	amd64AMI string
	arm64AMI string
}

func (e *env) fixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{subnets: map[string]string{}}
	discovery := []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"demo"}}}
	subnets, err := e.ec2.DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{Filters: discovery})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subnets.Subnets {
		f.subnets[*s.AvailabilityZone] = *s.SubnetId
	}
	groups, err := e.ec2.DescribeSecurityGroups(t.Context(), &ec2.DescribeSecurityGroupsInput{Filters: discovery})
	if err != nil {
		t.Fatal(err)
	}
	f.group = *groups.SecurityGroups[0].GroupId
	for arch, dst := range map[string]*string{"x86_64": &f.amd64AMI, "arm64": &f.arm64AMI} {
		images, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
			{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-" + arch + "-standard-1.33-v20251101"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		*dst = *images.Images[0].ImageId
	}
	return f
}

func (e *env) launchTemplate(t *testing.T, name, image string, f fixture) {
	t.Helper()
	_, err := e.ec2.CreateLaunchTemplate(t.Context(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId:            aws.String(image),
			UserData:           aws.String("IyEvYmluL2Jhc2gK"),
			IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("KarpenterNodeRole-demo")},
			SecurityGroupIds:   []string{f.group},
			MetadataOptions:    &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{HttpTokens: ec2types.LaunchTemplateHttpTokensStateRequired},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{
				ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("default")}},
			}},
		},
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: []ec2types.Tag{{Key: aws.String("karpenter.k8s.aws/cluster"), Value: aws.String("demo")}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLaunchTemplateLifecycle(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.launchTemplate(t, "karpenter.k8s.aws/123", f.amd64AMI, f)
	_, err := e.ec2.CreateLaunchTemplate(t.Context(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("karpenter.k8s.aws/123"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(f.amd64AMI)},
	})
	if code := errorCode(t, err); code != "InvalidLaunchTemplateName.AlreadyExistsException" {
		t.Errorf("duplicate name: %s", code)
	}
	out, err := e.ec2.DescribeLaunchTemplates(t.Context(), &ec2.DescribeLaunchTemplatesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.k8s.aws/cluster"), Values: []string{"demo"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LaunchTemplates) != 1 || *out.LaunchTemplates[0].LatestVersionNumber != 1 || !strings.HasPrefix(*out.LaunchTemplates[0].LaunchTemplateId, "lt-") {
		t.Fatalf("launch templates: %+v", out.LaunchTemplates)
	}
	if _, err := e.ec2.DeleteLaunchTemplate(t.Context(), &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String("karpenter.k8s.aws/123")}); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"describe by name": func() error {
			_, err := e.ec2.DescribeLaunchTemplates(t.Context(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"karpenter.k8s.aws/123"}})
			return err
		},
		"delete by name": func() error {
			_, err := e.ec2.DeleteLaunchTemplate(t.Context(), &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String("karpenter.k8s.aws/123")})
			return err
		},
	} {
		if code := errorCode(t, call()); code != "InvalidLaunchTemplateName.NotFoundException" {
			t.Errorf("%s after delete: %s", name, code)
		}
	}
}

func fleetInput(lt string, capacityType ec2types.DefaultTargetCapacityType, overrides ...ec2types.FleetLaunchTemplateOverridesRequest) *ec2.CreateFleetInput {
	return &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(lt), Version: aws.String("$Latest")},
			Overrides:                   overrides,
		}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: capacityType},
		SpotOptions:                 &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized},
		OnDemandOptions:             &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("default-abc12")}}},
			{ResourceType: ec2types.ResourceTypeFleet, Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("default-abc12")}}},
		},
	}
}

func override(instanceType, subnet string) ec2types.FleetLaunchTemplateOverridesRequest {
	return ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(instanceType), SubnetId: aws.String(subnet)}
}

func TestCreateFleetLaunchesTheCheapestPoolWithCapacity(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.launchTemplate(t, "lt-amd64", f.amd64AMI, f)
	// c5.large is cheaper than m5.large on demand; take its capacity away in zone a.
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.InsufficientCapacity[state.Pool{InstanceType: "c5.large", Zone: e.zone("a"), CapacityType: state.CapacityOnDemand}] = true
		return nil
	})
	out, err := e.ec2.CreateFleet(t.Context(), fleetInput("lt-amd64", ec2types.DefaultTargetCapacityTypeOnDemand,
		override("m5.large", f.subnets[e.zone("a")]), override("c5.large", f.subnets[e.zone("a")])))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || *out.Errors[0].ErrorCode != "InsufficientInstanceCapacity" || out.Errors[0].LaunchTemplateAndOverrides.Overrides.InstanceType != "c5.large" {
		t.Fatalf("errors: %+v", out.Errors)
	}
	if len(out.Instances) != 1 || out.Instances[0].InstanceType != "m5.large" || len(out.Instances[0].InstanceIds) != 1 || out.Instances[0].Lifecycle != ec2types.InstanceLifecycleOnDemand {
		t.Fatalf("instances: %+v", out.Instances)
	}
	id := out.Instances[0].InstanceIds[0]

	got, err := e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	inst := got.Reservations[0].Instances[0]
	dns := "." + e.region + ".compute.internal"
	if e.region == "us-east-1" {
		dns = ".ec2.internal" // us-east-1 keeps EC2's first naming scheme
	}
	if inst.State.Name != ec2types.InstanceStateNamePending || *inst.Placement.AvailabilityZone != e.zone("a") ||
		!strings.HasSuffix(*inst.PrivateDnsName, dns) || !strings.HasSuffix(*inst.IamInstanceProfile.Arn, "instance-profile/KarpenterNodeRole-demo") {
		t.Errorf("instance: %+v", inst)
	}
	tags := map[string]string{}
	for _, tg := range inst.Tags {
		tags[*tg.Key] = *tg.Value
	}
	if tags["karpenter.sh/nodeclaim"] != "default-abc12" || tags["karpenter.sh/nodepool"] != "default" || tags["aws:ec2:fleet-id"] != *out.FleetId {
		t.Errorf("tags: %v", tags)
	}

	e.clock.Step(6 * time.Second)
	waiter := ec2.NewInstanceRunningWaiter(e.ec2)
	if err := waiter.Wait(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}}, time.Minute); err != nil {
		t.Fatalf("instance did not run: %v", err)
	}
}

func TestCreateFleetPerOverrideErrors(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.launchTemplate(t, "lt-amd64", f.amd64AMI, f)
	tests := []struct {
		name     string
		lt       string
		override ec2types.FleetLaunchTemplateOverridesRequest
		code     string
	}{
		{"architecture mismatch", "lt-amd64", override("m6g.large", f.subnets[e.zone("a")]), "InvalidParameterValue"},
		{"unknown type", "lt-amd64", override("m5.huge", f.subnets[e.zone("a")]), "InvalidParameterValue"},
		{"unknown subnet", "lt-amd64", override("m5.large", "subnet-0000"), "InvalidSubnetID.NotFound"},
		{"missing launch template", "nope", override("m5.large", f.subnets[e.zone("a")]), "InvalidLaunchTemplateName.NotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.ec2.CreateFleet(t.Context(), fleetInput(tt.lt, ec2types.DefaultTargetCapacityTypeSpot, tt.override))
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Instances) != 0 || len(out.Errors) != 1 || *out.Errors[0].ErrorCode != tt.code {
				t.Errorf("instances %+v errors %+v, want one %s", out.Instances, out.Errors, tt.code)
			}
		})
	}
	// A type offered in only some zones fails as Unsupported in the others.
	var unsupported string
	_ = e.state.Update(func(w *state.World) error {
		for _, it := range w.Catalog.Types {
			if it.Architecture == "x86_64" && len(it.Offerings[e.region]) > 0 && !it.Offered(e.region, e.zone("d")) {
				unsupported = it.Name
				break
			}
		}
		return nil
	})
	out, err := e.ec2.CreateFleet(t.Context(), fleetInput("lt-amd64", ec2types.DefaultTargetCapacityTypeOnDemand, override(unsupported, f.subnets[e.zone("d")])))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || *out.Errors[0].ErrorCode != "Unsupported" {
		t.Errorf("%s in %s: %+v", unsupported, e.zone("d"), out.Errors)
	}
}

const denyPassRole = `{"Version": "2012-10-17", "Statement": [
  {"Sid": "EC2", "Effect": "Allow", "Action": "ec2:*", "Resource": "*"},
  {"Sid": "Decode", "Effect": "Allow", "Action": "sts:DecodeAuthorizationMessage", "Resource": "*"}
]}`

func TestRunInstancesDryRun(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	input := &ec2.RunInstancesInput{
		DryRun: aws.Bool(true), MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("b")]),
		SecurityGroupIds:   []string{f.group},
		IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String("KarpenterNodeRole-demo")},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance,
			Tags: []ec2types.Tag{{Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String("default")}}}},
	}
	_, err := e.ec2.RunInstances(t.Context(), input)
	if code := errorCode(t, err); code != "DryRunOperation" {
		t.Fatalf("allowed dry run: %s", code)
	}

	e.setControllerPolicy(t, denyPassRole)
	_, err = e.ec2.RunInstances(t.Context(), input)
	if code := errorCode(t, err); code != "UnauthorizedOperation" {
		t.Fatalf("dry run without iam:PassRole: %s", code)
	}
	msg := err.Error()
	_, encoded, ok := strings.Cut(msg, "Encoded authorization failure message: ")
	if !ok {
		t.Fatalf("no encoded message in %q", msg)
	}
	decoded, err := e.sts.DecodeAuthorizationMessage(t.Context(), &sts.DecodeAuthorizationMessageInput{EncodedMessage: aws.String(strings.TrimSpace(encoded))})
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Allowed bool `json:"allowed"`
		Context struct {
			Action   string `json:"action"`
			Resource string `json:"resource"`
		} `json:"context"`
	}
	if err := json.Unmarshal([]byte(*decoded.DecodedMessage), &m); err != nil {
		t.Fatal(err)
	}
	if m.Allowed || m.Context.Action != "iam:PassRole" || m.Context.Resource != "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo" {
		t.Errorf("decoded: %s", *decoded.DecodedMessage)
	}
	_, err = e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{})
	if err != nil {
		t.Errorf("describe is still allowed: %v", err)
	}
}

func TestDescribeInstancesFiltersAndPagination(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	for _, pool := range []string{"a", "b"} {
		_, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
			MinCount: aws.Int32(1), MaxCount: aws.Int32(4), ImageId: aws.String(f.arm64AMI), InstanceType: ec2types.InstanceTypeT4gMedium,
			SubnetId: aws.String(f.subnets[e.zone("a")]),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance,
				Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String(pool)}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	pages := 0
	p := ec2.NewDescribeInstancesPaginator(e.ec2, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)})
	for p.HasMorePages() {
		out, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range out.Reservations {
			for _, i := range r.Instances {
				ids = append(ids, *i.InstanceId)
			}
		}
	}
	if len(ids) != 8 || pages != 2 || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 8 {
		t.Errorf("got %d instances in %d pages: %v", len(ids), pages, ids)
	}
	tagged, err := e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{"b"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tagged.Reservations) != 1 || len(tagged.Reservations[0].Instances) != 4 {
		t.Errorf("nodepool b: %+v", tagged.Reservations)
	}
	_, err = e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{"i-00000000000000bad"}})
	if code := errorCode(t, err); code != "InvalidInstanceID.NotFound" {
		t.Errorf("unknown instance: %s", code)
	}
}

func TestTerminateTagAndConsole(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	run, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large,
		SubnetId: aws.String(f.subnets[e.zone("c")]),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *run.Instances[0].InstanceId
	if _, err := e.ec2.CreateTags(t.Context(), &ec2.CreateTagsInput{Resources: []string{id},
		Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String("node-1")}}}); err != nil {
		t.Fatal(err)
	}
	console, err := e.ec2.GetConsoleOutput(t.Context(), &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
	if err != nil || *console.InstanceId != id {
		t.Fatalf("console output: %v", err)
	}

	term, err := e.ec2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if c := term.TerminatingInstances[0]; c.CurrentState.Name != ec2types.InstanceStateNameShuttingDown || c.PreviousState.Name != ec2types.InstanceStateNamePending {
		t.Errorf("state change: %+v", c)
	}
	e.clock.Step(state.ShuttingDownFor)
	if err := ec2.NewInstanceTerminatedWaiter(e.ec2).Wait(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}}, time.Minute); err != nil {
		t.Fatalf("instance did not terminate: %v", err)
	}
	got, err := e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if i := got.Reservations[0].Instances[0]; len(i.Tags) != 1 || *i.Tags[0].Value != "node-1" || i.StateReason == nil {
		t.Errorf("terminated instance: %+v", i)
	}
	e.clock.Step(state.TerminatedVisibleFor)
	_, err = e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if code := errorCode(t, err); code != "InvalidInstanceID.NotFound" {
		t.Errorf("an hour after termination: %s", code)
	}
}

func TestDescribeInstanceStatus(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	run, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")])})
	if err != nil {
		t.Fatal(err)
	}
	id := *run.Instances[0].InstanceId
	pending, err := e.ec2.DescribeInstanceStatus(t.Context(), &ec2.DescribeInstanceStatusInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending.InstanceStatuses) != 0 {
		t.Errorf("a pending instance is listed without IncludeAllInstances: %+v", pending.InstanceStatuses)
	}
	e.clock.Step(state.PendingFor + 2*time.Minute)
	if err := ec2.NewInstanceStatusOkWaiter(e.ec2).Wait(t.Context(), &ec2.DescribeInstanceStatusInput{InstanceIds: []string{id}}, time.Minute); err != nil {
		t.Fatalf("status never ok: %v", err)
	}
	all, err := e.ec2.DescribeInstanceStatus(t.Context(), &ec2.DescribeInstanceStatusInput{IncludeAllInstances: aws.Bool(true),
		Filters: []ec2types.Filter{{Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.InstanceStatuses) != 1 || all.InstanceStatuses[0].InstanceStatus.Status != ec2types.SummaryStatusOk {
		t.Errorf("statuses: %+v", all.InstanceStatuses)
	}
}

// TestCreateFleetClientToken: a CreateFleet repeated with its client token and parameters is
// answered with the first one's instance and launches nothing; with other parameters it is
// refused with IdempotentParameterMismatch; a request that launched nothing does not hold its
// token.
func TestCreateFleetClientToken(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.launchTemplate(t, "lt-amd64", f.amd64AMI, f)
	// The token of a launch that found no capacity stays free.
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.InsufficientCapacity[state.Pool{InstanceType: "m5.large", Zone: e.zone("a"), CapacityType: state.CapacityOnDemand}] = true
		return nil
	})
	in := fleetInput("lt-amd64", ec2types.DefaultTargetCapacityTypeOnDemand, override("m5.large", f.subnets[e.zone("a")]))
	in.ClientToken = aws.String("4b9c1f0e-nodeclaim-uid")
	if out, err := e.ec2.CreateFleet(t.Context(), in); err != nil || len(out.Instances) != 0 {
		t.Fatalf("launch without capacity: %+v, %v", out, err)
	}
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.InsufficientCapacity = map[state.Pool]bool{}
		return nil
	})
	var ids []string
	for range 2 {
		out, err := e.ec2.CreateFleet(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 1 {
			t.Fatalf("instances: %+v", out.Instances)
		}
		ids = append(ids, out.Instances[0].InstanceIds[0])
	}
	if ids[0] != ids[1] {
		t.Errorf("the repeated request launched %s after %s", ids[1], ids[0])
	}
	if n := len(e.inspectInstances(t)); n != 1 {
		t.Errorf("%d instances, want 1", n)
	}
	other := fleetInput("lt-amd64", ec2types.DefaultTargetCapacityTypeOnDemand, override("c5.large", f.subnets[e.zone("a")]))
	other.ClientToken = in.ClientToken
	_, err := e.ec2.CreateFleet(t.Context(), other)
	wantCode(t, err, "IdempotentParameterMismatch", "the token with other parameters")
	other.ClientToken = aws.String("another-token")
	if out, err := e.ec2.CreateFleet(t.Context(), other); err != nil || len(out.Instances) != 1 {
		t.Errorf("another token: %+v, %v", out, err)
	}
}

// TestRunInstancesNetworkInterfaceTags: the network interface a launch creates is authorized
// with its own tags (the request's network-interface TagSpecification, or the launch template's)
// as aws:RequestTag, and, being tagged, needs ec2:CreateTags with ec2:CreateAction: a policy
// that allows network-interface/* only with the cluster tag, as Karpenter's does, denies an
// untagged one.
func TestRunInstancesNetworkInterfaceTags(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"ec2:RunInstances","NotResource":"arn:aws:ec2:*:*:network-interface/*"},
		{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:*:*:network-interface/*",
		 "Condition":{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/demo":"owned"}}},
		{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"ec2:CreateAction":"RunInstances"}}},
		{"Effect":"Allow","Action":"iam:PassRole","Resource":"*"}]}`)
	owned := []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}
	run := func(specs ...ec2types.TagSpecification) string {
		_, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
			DryRun: aws.Bool(true), MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("b")]),
			SecurityGroupIds: []string{f.group}, TagSpecifications: specs,
		})
		return errorCode(t, err)
	}
	instance := ec2types.TagSpecification{ResourceType: ec2types.ResourceTypeInstance, Tags: owned}
	if code := run(instance); code != "UnauthorizedOperation" {
		t.Errorf("untagged network interface: %s, want UnauthorizedOperation", code)
	}
	if code := run(instance, ec2types.TagSpecification{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: owned}); code != "DryRunOperation" {
		t.Errorf("network interface tagged by the request: %s, want DryRunOperation", code)
	}
	_, err := e.ec2.CreateLaunchTemplate(t.Context(), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("eni-tagged"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(f.amd64AMI), SecurityGroupIds: []string{f.group},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: owned}}}})
	if err == nil {
		t.Fatal("CreateLaunchTemplate allowed by a policy without it")
	}
	e.setControllerPolicy(t, state.AllowAllPolicy)
	if _, err := e.ec2.CreateLaunchTemplate(t.Context(), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("eni-tagged"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(f.amd64AMI), SecurityGroupIds: []string{f.group},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: owned}}}}); err != nil {
		t.Fatal(err)
	}
	e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"ec2:RunInstances","NotResource":"arn:aws:ec2:*:*:network-interface/*"},
		{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:*:*:network-interface/*",
		 "Condition":{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/demo":"owned"}}},
		{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"ec2:CreateAction":"RunInstances"}}}]}`)
	_, err = e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
		DryRun: aws.Bool(true), MinCount: aws.Int32(1), MaxCount: aws.Int32(1), InstanceType: ec2types.InstanceTypeM5Large,
		SubnetId: aws.String(f.subnets[e.zone("b")]), LaunchTemplate: &ec2types.LaunchTemplateSpecification{LaunchTemplateName: aws.String("eni-tagged")},
	})
	if code := errorCode(t, err); code != "DryRunOperation" {
		t.Errorf("network interface tagged by the launch template: %s, want DryRunOperation", code)
	}
}
