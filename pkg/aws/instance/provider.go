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
	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/batcher"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// EC2API is what Provider calls; *ec2.Client satisfies it.
type EC2API interface {
	CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error)
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	TerminateInstances(ctx context.Context, in *ec2.TerminateInstancesInput, opts ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error)
	CreateTags(ctx context.Context, in *ec2.CreateTagsInput, opts ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
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
	// ledger maps what this controller launched to its NodeClaims, and holds the orphans a launch
	// may adopt.
	ledger ledger
	// named lists the providerIDs of every NodeClaim, for adoption (WithNamedInstances).
	named func(ctx context.Context) ([]string, error)
	// fleets, describes and terminates merge concurrent calls (pkg/aws/batcher). Their windows
	// run on the wall clock whatever clock the provider dates with: they are latency, not time the
	// world sees, and a test's fake clock would hold every call.
	fleets     *batcher.Batcher[string, Launch, *Instance]
	describes  *batcher.Batcher[string, string, *ec2types.Instance]
	terminates *batcher.Batcher[string, string, struct{}]
	// tagging paces Tag.
	tagging *rate.Limiter
}

// NewProvider returns a provider for the cluster's instances; denials may be nil (denied
// launches are then reported with EC2's message).
func NewProvider(api EC2API, unavailable Unavailable, denials Denials, clusterName string, clk clock.PassiveClock) *Provider {
	p := &Provider{ec2: api, unavailable: unavailable, denials: denials, clusterName: clusterName, clock: clk,
		tagging: rate.NewLimiter(TaggingRate, TaggingBurst)}
	windows := clock.RealClock{}
	p.fleets = mustBatcher(batcher.New(batcher.Options{Idle: FleetIdle, Max: FleetMax, MaxItems: FleetMaxItems}, windows, p.launchFleet))
	ids := batcher.Options{Idle: IDsIdle, Max: IDsMax, MaxItems: IDsMaxItems}
	p.describes = mustBatcher(batcher.New(ids, windows, p.describeIDs))
	p.terminates = mustBatcher(batcher.New(ids, windows, p.terminateIDs))
	return p
}

// mustBatcher returns the batcher; its options are this package's constants, which a test holds
// valid, so an error is a programming error.
func mustBatcher[K comparable, In, Out any](b *batcher.Batcher[K, In, Out], err error) *batcher.Batcher[K, In, Out] {
	if err != nil {
		panic(fmt.Sprintf("instance: batcher options, %v", err))
	}
	return b
}

// WithNamedInstances sets how launches learn the providerIDs of every NodeClaim, so that they
// adopt an instance an earlier controller launched and left unrecorded, but never one a
// NodeClaim names (see adopt). Without it, launches adopt only what this provider recorded.
func (p *Provider) WithNamedInstances(named func(ctx context.Context) ([]string, error)) *Provider {
	p.named = named
	return p
}

// Launch is one instance to launch.
type Launch struct {
	CapacityType string
	// Overrides, from Overrides: at most MaxOverrides, each with the launch template of its
	// instance type's architecture.
	Overrides []Override
	// Tags go on the instance, its volumes and the fleet: CommonTags, the same for every
	// NodeClaim of the NodePool, so that launches alike go out as one fleet.
	Tags map[string]string
	// NodeClaim and NodeClaimUID name the NodeClaim launched for. A launch retried for the same
	// UID gets the instance already handed to it (the ledger) instead of launching again.
	NodeClaim, NodeClaimUID string
	// ImageIDs are the image of each instance type's launch template, and SecurityGroupIDs the
	// launch templates' security groups: with the fleet's answer they describe the launched
	// instance without a DescribeInstances.
	ImageIDs         map[string]string
	SecurityGroupIDs []string
}

// identity is the NodeClaim's UID or, for one never written to an API server (a test's), which
// has none, its name.
func (l Launch) identity() string {
	if l.NodeClaimUID != "" {
		return l.NodeClaimUID
	}
	return "name:" + l.NodeClaim
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
	if l.CapacityType == v1.CapacityTypeSpot {
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategy(SpotAllocationStrategy)}
	} else {
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategy(OnDemandAllocationStrategy)}
	}
	return in
}

// Create hands the launch an instance: the one already handed to its NodeClaim (a retried
// Create), an orphan it fits (adopt), or one launched through CreateFleet. Launches that share
// their request (fleetKey) within the batcher's windows go out as one fleet with a target
// capacity of one per launch (launchFleet); each launched instance is handed to one launch, and
// launches left without one get an error, never a second fleet. The instance is described from
// what CreateFleet said (its ID, type and override) and what the launch asked for (image,
// security groups, tags), pending, launched now, and remembered for Recent: describing it again
// cost one DescribeInstances per launch, which EC2 may not answer for seconds after the launch
// anyway. With no instance launched it returns an InsufficientCapacityError when every error was
// a capacity error (each marked unavailable), a CreateError for a denial, and a plain error
// otherwise; errors are wrapped "launching nodeclaim, ...".
func (p *Provider) Create(ctx context.Context, l Launch) (*Instance, error) {
	if l.NodeClaimUID == "" && l.NodeClaim == "" {
		return nil, errors.New("launching nodeclaim, the launch names no NodeClaim")
	}
	if inst := p.ledger.handedTo(l.identity()); inst != nil {
		return inst, nil
	}
	if inst, err := p.adopt(ctx, l); inst != nil || err != nil {
		return inst, err
	}
	key, err := fleetKey(l)
	if err != nil {
		return nil, err
	}
	return p.fleets.Do(ctx, key, l)
}

// Launched is the instance this provider handed to the NodeClaim with the UID and name
// (launched or adopted), or nil.
func (p *Provider) Launched(uid, name string) *Instance {
	return p.ledger.handedTo(Launch{NodeClaimUID: uid, NodeClaim: name}.identity())
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
// NodeClaimNotFoundError. The description is remembered for Recent. Concurrent Gets share
// DescribeInstances calls (describeIDs).
func (p *Provider) Get(ctx context.Context, id string) (*Instance, error) {
	at := p.clock.Now()
	described, err := p.describe(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("describing instance %s, %w", id, err)
	}
	if described == nil {
		p.recent.forget(id)
		p.ledger.forget(id)
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s not found", id))
	}
	inst := read(*described)
	if inst.State == string(ec2types.InstanceStateNameTerminated) {
		p.recent.forget(id)
		p.ledger.forget(id)
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
// already gone or terminating, so callers can tell when termination is done. Concurrent Deletes
// share their DescribeInstances and TerminateInstances calls (terminateIDs).
func (p *Provider) Delete(ctx context.Context, id string) error {
	inst, err := p.Get(ctx, id)
	if err != nil {
		return err
	}
	if inst.State == string(ec2types.InstanceStateNameShuttingDown) {
		p.recent.forget(id)
		p.ledger.forget(id)
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s is terminating", id))
	}
	if err := p.terminate(ctx, id); err != nil {
		return err
	}
	p.recent.forget(id)
	p.ledger.forget(id)
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
// collection terminates. See the function Leaked. An instance's NodeClaim is its
// karpenter.sh/nodeclaim tag or, before it is tagged, the NodeClaim the ledger handed it to.
func (p *Provider) Leaked(ctx context.Context, providerIDs, launching []string, now time.Time) ([]string, error) {
	insts, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	described := make([]Described, 0, len(insts))
	for _, i := range insts {
		owner := i.Tags[awsv1.TagKeyNodeClaim]
		if owner == "" {
			owner = p.ledger.ownerOf(i.ID)
		}
		described = append(described, Described{ID: i.ID, LaunchTime: i.LaunchTime, State: i.State, NodeClaim: owner})
	}
	return Leaked(described, providerIDs, launching, now, GarbageCollectionGrace), nil
}
