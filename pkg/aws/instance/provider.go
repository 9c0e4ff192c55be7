package instance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"k8s.io/utils/clock"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// EC2API is what Provider calls; *ec2.Client satisfies it.
type EC2API interface {
	CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error)
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	TerminateInstances(ctx context.Context, in *ec2.TerminateInstancesInput, opts ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error)
	GetConsoleOutput(ctx context.Context, in *ec2.GetConsoleOutputInput, opts ...func(*ec2.Options)) (*ec2.GetConsoleOutputOutput, error)
}

// Unavailable records offerings EC2 had no capacity for (instancetype.UnavailableOfferings).
type Unavailable interface {
	MarkUnavailable(instanceType, zone, capacityType string)
}

// Denials explains an UnauthorizedOperation: the CreateError reason and message for it.
type Denials interface {
	Explain(ctx context.Context, err error) (reason, message string)
}

// Instance is an EC2 instance as Joiner reads it.
type Instance struct {
	ID   string
	Type string
	Zone string
	// ZoneID is the zone's ID (usw2-az1) when EC2 said it: DescribeInstances does, a launch's
	// answer does not.
	ZoneID           string
	CapacityType     string
	ImageID          string
	SubnetID         string
	SecurityGroupIDs []string
	State            string
	// StateReason is EC2's message for the state (why it stopped or terminated), if any.
	StateReason string
	// InstanceProfileARN is the ARN of the instance's profile, when described by EC2.
	InstanceProfileARN string
	LaunchTime         time.Time
	Tags               map[string]string
}

// ProviderID is the instance's Kubernetes provider ID, aws:///<zone>/<id>.
func (i *Instance) ProviderID() string { return fmt.Sprintf("aws:///%s/%s", i.Zone, i.ID) }

// Provider launches, describes and terminates instances.
type Provider struct {
	ec2         EC2API
	unavailable Unavailable
	denials     Denials
	clusterName string
	// roles, when set, names the node role in a refused registration's diagnosis.
	roles RoleReader
	// clock dates the descriptions Recent answers from.
	clock  clock.PassiveClock
	recent recent
	// adoptions merges the adoption checks of concurrent launches (ForNodeClaim).
	adoptions adoptions
}

// NewProvider returns a provider for the cluster's instances; denials may be nil (denied
// launches are then reported with EC2's message).
func NewProvider(api EC2API, unavailable Unavailable, denials Denials, clusterName string, clk clock.PassiveClock) *Provider {
	return &Provider{ec2: api, unavailable: unavailable, denials: denials, clusterName: clusterName, clock: clk}
}

// Launch is one instance to launch.
type Launch struct {
	CapacityType string
	// Overrides, from Overrides: at most MaxOverrides, each with the launch template of its
	// instance type's architecture.
	Overrides []Override
	// Tags go on the instance, its volumes and the fleet.
	Tags map[string]string
	// ClientToken, when set, makes the launch idempotent: EC2 answers a CreateFleet repeated
	// with the same token and parameters with the first one's instances instead of launching
	// again, and refuses one with other parameters (IdempotentParameterMismatch). The NodeClaim's
	// UID: a launch retried before DescribeInstances lists the first one's instance (EC2 is
	// eventually consistent) does not launch a second instance.
	ClientToken string
	// ImageIDs are the image of each instance type's launch template, and SecurityGroupIDs the
	// launch templates' security groups: with the fleet's answer they describe the launched
	// instance without a DescribeInstances.
	ImageIDs         map[string]string
	SecurityGroupIDs []string
}

// FleetInput is the CreateFleet request of a launch: type instant, one instance, spot
// price-capacity-optimized or on-demand lowest-price, one launch template config per template.
func FleetInput(l Launch, dryRun bool) *ec2.CreateFleetInput {
	var configs []ec2types.FleetLaunchTemplateConfigRequest
	byTemplate := map[string]int{}
	for _, o := range l.Overrides {
		i, ok := byTemplate[o.LaunchTemplate]
		if !ok {
			i = len(configs)
			byTemplate[o.LaunchTemplate] = i
			configs = append(configs, ec2types.FleetLaunchTemplateConfigRequest{LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateName: aws.String(o.LaunchTemplate), Version: aws.String("$Latest"),
			}})
		}
		configs[i].Overrides = append(configs[i].Overrides, ec2types.FleetLaunchTemplateOverridesRequest{
			InstanceType: ec2types.InstanceType(o.InstanceType), SubnetId: aws.String(o.SubnetID), AvailabilityZone: aws.String(o.Zone),
		})
	}
	var tags []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(l.Tags)) {
		tags = append(tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(l.Tags[k])})
	}
	in := &ec2.CreateFleetInput{
		Type:                  ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: configs,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityType(l.CapacityType),
		},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: tags},
			{ResourceType: ec2types.ResourceTypeVolume, Tags: tags},
			// The fleet too: the controller's policy (iampolicy) allows CreateFleet only for a
			// request carrying the cluster's and a NodePool's tags.
			{ResourceType: ec2types.ResourceTypeFleet, Tags: tags},
		},
		DryRun: aws.Bool(dryRun),
	}
	if l.ClientToken != "" && !dryRun {
		in.ClientToken = aws.String(l.ClientToken)
	}
	if l.CapacityType == v1.CapacityTypeSpot {
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategy(SpotAllocationStrategy)}
	} else {
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategy(OnDemandAllocationStrategy)}
	}
	return in
}

// Create launches one instance through CreateFleet. Every override EC2 reports as out of
// capacity is marked unavailable. The launched instance is described from what CreateFleet said
// (its ID, type and override) and what the launch asked for (image, security groups, tags),
// pending, launched now, and remembered for Recent: describing it again cost one
// DescribeInstances per launch, which EC2 may not answer for seconds after the launch anyway.
// With no instance launched it returns an InsufficientCapacityError when every error was a
// capacity error, a CreateError for a denial, and a plain error otherwise; errors are wrapped
// "launching nodeclaim, ...".
func (p *Provider) Create(ctx context.Context, l Launch) (*Instance, error) {
	at := p.clock.Now()
	out, err := p.ec2.CreateFleet(ctx, FleetInput(l, false))
	if err != nil {
		return nil, p.classify(ctx, err)
	}
	zoneOf := map[string]string{}
	for _, o := range l.Overrides {
		zoneOf[o.SubnetID] = o.Zone
	}
	var (
		capacityErrs []string
		otherErrs    []ec2types.CreateFleetError
	)
	for _, e := range out.Errors {
		code := aws.ToString(e.ErrorCode)
		if IsCapacityError(code) && e.LaunchTemplateAndOverrides != nil && e.LaunchTemplateAndOverrides.Overrides != nil {
			ov := e.LaunchTemplateAndOverrides.Overrides
			zone := aws.ToString(ov.AvailabilityZone)
			if zone == "" {
				zone = zoneOf[aws.ToString(ov.SubnetId)]
			}
			p.unavailable.MarkUnavailable(string(ov.InstanceType), zone, l.CapacityType)
			capacityErrs = append(capacityErrs, fmt.Sprintf("%s in %s", ov.InstanceType, zone))
			continue
		}
		otherErrs = append(otherErrs, e)
	}
	for _, fi := range out.Instances {
		if len(fi.InstanceIds) == 0 {
			continue
		}
		inst := &Instance{
			ID: fi.InstanceIds[0], Type: string(fi.InstanceType), CapacityType: l.CapacityType, ImageID: l.ImageIDs[string(fi.InstanceType)],
			SecurityGroupIDs: slices.Clone(l.SecurityGroupIDs), State: string(ec2types.InstanceStateNamePending), LaunchTime: at, Tags: maps.Clone(l.Tags),
		}
		if lo := fi.LaunchTemplateAndOverrides; lo != nil && lo.Overrides != nil {
			inst.Zone = aws.ToString(lo.Overrides.AvailabilityZone)
			inst.SubnetID = aws.ToString(lo.Overrides.SubnetId)
			if inst.Zone == "" {
				inst.Zone = zoneOf[inst.SubnetID]
			}
		}
		p.recent.put(inst, at)
		return inst, nil
	}
	if len(otherErrs) == 0 {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim, no %s capacity for %s", l.CapacityType, strings.Join(capacityErrs, ", ")))
	}
	first := otherErrs[0]
	apiErr := &smithy.GenericAPIError{Code: aws.ToString(first.ErrorCode), Message: aws.ToString(first.ErrorMessage)}
	return nil, p.classify(ctx, apiErr)
}

// ReasonLaunchTemplateNotFound is the CreateError reason of a launch whose launch template EC2
// does not have.
const ReasonLaunchTemplateNotFound = "LaunchTemplateNotFound"

// IsCapacityError reports whether an EC2 error code means the pool had no capacity.
func IsCapacityError(code string) bool {
	switch code {
	case "InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded", "VcpuLimitExceeded", "UnfulfillableCapacity", "Unsupported", "InsufficientFreeAddressesInSubnet":
		return true
	}
	return false
}

// classify turns an EC2 error of a launch into the cloudprovider error the caller acts on.
func (p *Provider) classify(ctx context.Context, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch {
		case ae.ErrorCode() == "UnauthorizedOperation":
			reason, message := "UnauthorizedOperation", ae.ErrorMessage()
			if p.denials != nil {
				reason, message = p.denials.Explain(ctx, err)
			}
			return cloudprovider.NewCreateError(fmt.Errorf("launching nodeclaim, %w", err), reason, message)
		case strings.HasPrefix(ae.ErrorCode(), "InvalidLaunchTemplate"):
			return cloudprovider.NewCreateError(fmt.Errorf("launching nodeclaim, %w", err), ReasonLaunchTemplateNotFound, ae.ErrorMessage())
		case IsCapacityError(ae.ErrorCode()):
			return cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim, %w", err))
		case ae.ErrorCode() == "IdempotentParameterMismatch":
			// The token launched an instance already, with other overrides: DescribeInstances
			// does not list it yet. Retried, the launch adopts it once it does.
			return fmt.Errorf("launching nodeclaim, an instance was launched for it already and is not listed yet, %w", err)
		}
	}
	return fmt.Errorf("launching nodeclaim, %w", err)
}

// Get describes one instance, as EC2 describes it now. A missing or terminated instance is a
// NodeClaimNotFoundError. The description is remembered for Recent.
func (p *Provider) Get(ctx context.Context, id string) (*Instance, error) {
	at := p.clock.Now()
	out, err := p.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "InvalidInstanceID.NotFound" {
		p.recent.forget(id)
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s not found", id))
	}
	if err != nil {
		return nil, fmt.Errorf("describing instance %s, %w", id, err)
	}
	if len(out.Reservations) == 0 || len(out.Reservations[0].Instances) == 0 {
		p.recent.forget(id)
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s not found", id))
	}
	inst := read(out.Reservations[0].Instances[0])
	if inst.State == string(ec2types.InstanceStateNameTerminated) {
		p.recent.forget(id)
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s is terminated", id))
	}
	p.recent.put(inst, at)
	return inst, nil
}

// List returns the cluster's instances that Joiner launched (tagged kubernetes.io/cluster/<name>
// and karpenter.sh/nodepool) and that are not terminated. A complete listing is remembered for
// Recent.
func (p *Provider) List(ctx context.Context) ([]*Instance, error) {
	at := p.clock.Now()
	in := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag-key"), Values: []string{awsv1.TagKeyPrefixCluster + p.clusterName}},
		{Name: aws.String("tag-key"), Values: []string{awsv1.TagKeyNodePool}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped", "shutting-down"}},
	}}
	var out []*Instance
	pages := ec2.NewDescribeInstancesPaginator(p.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing instances, %w", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				out = append(out, read(i))
			}
		}
	}
	slices.SortFunc(out, func(a, b *Instance) int { return strings.Compare(a.ID, b.ID) })
	p.recent.listed(out, at)
	return out, nil
}

// Delete terminates the instance. It returns a NodeClaimNotFoundError when the instance is
// already gone or terminating, so callers can tell when termination is done.
func (p *Provider) Delete(ctx context.Context, id string) error {
	inst, err := p.Get(ctx, id)
	if err != nil {
		return err
	}
	if inst.State == string(ec2types.InstanceStateNameShuttingDown) {
		p.recent.forget(id)
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s is terminating", id))
	}
	if _, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && ae.ErrorCode() == "InvalidInstanceID.NotFound" {
			return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s not found", id))
		}
		return fmt.Errorf("terminating instance %s, %w", id, err)
	}
	p.recent.forget(id)
	return nil
}

func read(i ec2types.Instance) *Instance {
	inst := &Instance{
		ID: aws.ToString(i.InstanceId), Type: string(i.InstanceType), ImageID: aws.ToString(i.ImageId),
		SubnetID: aws.ToString(i.SubnetId), LaunchTime: aws.ToTime(i.LaunchTime), Tags: map[string]string{},
		CapacityType: v1.CapacityTypeOnDemand,
	}
	if i.Placement != nil {
		inst.Zone = aws.ToString(i.Placement.AvailabilityZone)
		inst.ZoneID = aws.ToString(i.Placement.AvailabilityZoneId)
	}
	if i.State != nil {
		inst.State = string(i.State.Name)
	}
	if i.StateReason != nil {
		inst.StateReason = aws.ToString(i.StateReason.Message)
	}
	if i.IamInstanceProfile != nil {
		inst.InstanceProfileARN = aws.ToString(i.IamInstanceProfile.Arn)
	}
	if i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		inst.CapacityType = v1.CapacityTypeSpot
	}
	for _, g := range i.SecurityGroups {
		inst.SecurityGroupIDs = append(inst.SecurityGroupIDs, aws.ToString(g.GroupId))
	}
	for _, t := range i.Tags {
		inst.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return inst
}

// Leaked returns, sorted, the IDs of the cluster's instances that no NodeClaim names
// (providerIDs are the status.providerID of every NodeClaim; launching names the NodeClaims
// without one yet) and that are older than GarbageCollectionGrace at now: the instances garbage
// collection terminates. See the function Leaked.
func (p *Provider) Leaked(ctx context.Context, providerIDs, launching []string, now time.Time) ([]string, error) {
	insts, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	described := make([]Described, 0, len(insts))
	for _, i := range insts {
		described = append(described, Described{ID: i.ID, LaunchTime: i.LaunchTime, State: i.State, NodeClaim: i.Tags[awsv1.TagKeyNodeClaim]})
	}
	return Leaked(described, providerIDs, launching, now, GarbageCollectionGrace), nil
}
