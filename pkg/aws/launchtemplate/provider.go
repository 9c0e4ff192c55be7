package launchtemplate

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"k8s.io/utils/clock"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// EC2API is what Provider calls; *ec2.Client satisfies it.
type EC2API interface {
	CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error)
	DescribeLaunchTemplates(ctx context.Context, in *ec2.DescribeLaunchTemplatesInput, opts ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplatesOutput, error)
	DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error)
}

// UnusedTTL is how long a launch template may go without a launch (and since its creation)
// before GarbageCollect deletes it.
const UnusedTTL = 24 * time.Hour

// Provider creates launch templates on demand and remembers which exist and when each was last
// used, so that a launch with the same resolved options makes no EC2 call and unused templates
// can be collected. It is safe for concurrent use.
type Provider struct {
	ec2         EC2API
	clusterName string
	clock       clock.PassiveClock

	mu       sync.Mutex
	known    map[string]bool
	lastUsed map[string]time.Time
}

// NewProvider returns a provider of the cluster's launch templates with an empty cache.
func NewProvider(api EC2API, clusterName string, clk clock.PassiveClock) *Provider {
	return &Provider{ec2: api, clusterName: clusterName, clock: clk, known: map[string]bool{}, lastUsed: map[string]time.Time{}}
}

// GarbageCollect deletes the cluster's launch templates (NamePrefix, tagged
// kubernetes.io/cluster/<name>) that no Ensure asked for, and that were not created, within
// UnusedTTL. It returns the names deleted, sorted. A template deleted here that a launch needs
// again is simply created again.
func (p *Provider) GarbageCollect(ctx context.Context) ([]string, error) {
	now := p.clock.Now()
	in := &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + awsv1.TagKeyPrefixCluster + p.clusterName), Values: []string{"owned"}},
	}}
	var deleted []string
	pages := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return deleted, fmt.Errorf("listing launch templates, %w", err)
		}
		for _, lt := range page.LaunchTemplates {
			name := aws.ToString(lt.LaunchTemplateName)
			if !strings.HasPrefix(name, NamePrefix) {
				continue
			}
			p.mu.Lock()
			used := p.lastUsed[name]
			p.mu.Unlock()
			if created := aws.ToTime(lt.CreateTime); created.After(used) {
				used = created
			}
			if now.Sub(used) < UnusedTTL {
				continue
			}
			if _, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)}); err != nil {
				return deleted, fmt.Errorf("deleting launch template %s, %w", name, err)
			}
			p.Forget(name)
			deleted = append(deleted, name)
		}
	}
	slices.Sort(deleted)
	return deleted, nil
}

// Ensure returns the name of the launch template for the options, creating it unless it is known
// to exist. A template created meanwhile by another Joiner (AlreadyExists) counts as existing.
func (p *Provider) Ensure(ctx context.Context, o Options) (string, error) {
	name, err := Name(o)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	known := p.known[name]
	p.lastUsed[name] = p.clock.Now()
	p.mu.Unlock()
	if known {
		return name, nil
	}
	_, err = p.ec2.CreateLaunchTemplate(ctx, CreateInput(name, o, false))
	if err != nil && !alreadyExists(err) {
		return "", fmt.Errorf("creating launch template %s, %w", name, err)
	}
	p.mu.Lock()
	p.known[name] = true
	p.mu.Unlock()
	return name, nil
}

// Forget drops a name from the cache, after EC2 said the template does not exist.
func (p *Provider) Forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.known, name)
	delete(p.lastUsed, name)
}

// CreateInput is the CreateLaunchTemplate request for the options (with DryRun for validation):
// image, base64 userData, instance profile, security groups (on the primary network interface
// when a public address is chosen), block devices, metadata options, monitoring, and the tags on
// the template itself and on the network interfaces and Spot requests of its launches.
func CreateInput(name string, o Options, dryRun bool) *ec2.CreateLaunchTemplateInput {
	data := &ec2types.RequestLaunchTemplateData{
		ImageId:            aws.String(o.ImageID),
		UserData:           aws.String(base64.StdEncoding.EncodeToString([]byte(o.UserData))),
		IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(o.InstanceProfile)},
		Monitoring:         &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(o.DetailedMonitoring)},
	}
	if o.AssociatePublicIPAddress != nil {
		data.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), AssociatePublicIpAddress: o.AssociatePublicIPAddress, Groups: o.SecurityGroupIDs,
		}}
	} else {
		data.SecurityGroupIds = o.SecurityGroupIDs
	}
	for _, m := range o.BlockDeviceMappings {
		data.BlockDeviceMappings = append(data.BlockDeviceMappings, blockDevice(m))
	}
	if m := o.MetadataOptions; m != nil {
		data.MetadataOptions = &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpEndpoint:            ec2types.LaunchTemplateInstanceMetadataEndpointState(aws.ToString(m.HTTPEndpoint)),
			HttpProtocolIpv6:        ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(aws.ToString(m.HTTPProtocolIPv6)),
			HttpPutResponseHopLimit: int64To32(m.HTTPPutResponseHopLimit),
			HttpTokens:              ec2types.LaunchTemplateHttpTokensState(aws.ToString(m.HTTPTokens)),
		}
	}
	var tags []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(o.Tags)) {
		tags = append(tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(o.Tags[k])})
	}
	in := &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name), LaunchTemplateData: data, DryRun: aws.Bool(dryRun)}
	if len(tags) > 0 {
		in.TagSpecifications = []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tags}}
		// The network interface (and the Spot request) of every launch carry the template's
		// tags, as Karpenter's launch templates give them: CreateFleet's TagSpecifications cannot
		// tag them, and Karpenter's controller policy creates network-interface/* and
		// spot-instances-request/* only with the cluster and NodePool tags.
		data.TagSpecifications = []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: tags}}
		if o.CapacityType == v1.CapacityTypeSpot {
			data.TagSpecifications = append(data.TagSpecifications,
				ec2types.LaunchTemplateTagSpecificationRequest{ResourceType: ec2types.ResourceTypeSpotInstancesRequest, Tags: tags})
		}
	}
	return in
}

func blockDevice(m awsv1.BlockDeviceMapping) ec2types.LaunchTemplateBlockDeviceMappingRequest {
	out := ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: m.DeviceName}
	if e := m.EBS; e != nil {
		ebs := &ec2types.LaunchTemplateEbsBlockDeviceRequest{
			DeleteOnTermination: e.DeleteOnTermination, Encrypted: e.Encrypted, KmsKeyId: e.KMSKeyID, SnapshotId: e.SnapshotID,
			Iops: int64To32(e.IOPS), Throughput: int64To32(e.Throughput), VolumeInitializationRate: e.VolumeInitializationRate,
			VolumeType: ec2types.VolumeType(aws.ToString(e.VolumeType)),
		}
		if e.VolumeSize != nil {
			// EC2 takes GiB; round up so the volume is never smaller than asked.
			gib := (e.VolumeSize.Value() + (1<<30 - 1)) >> 30
			ebs.VolumeSize = aws.Int32(int32(gib))
		}
		out.Ebs = ebs
	}
	return out
}

func int64To32(v *int64) *int32 {
	if v == nil {
		return nil
	}
	return aws.Int32(int32(*v))
}

func alreadyExists(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "InvalidLaunchTemplateName.AlreadyExistsException"
}
