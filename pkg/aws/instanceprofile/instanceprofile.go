package instanceprofile

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// IAMAPI is what the package calls; *iam.Client satisfies it.
type IAMAPI interface {
	GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, opts ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	CreateInstanceProfile(ctx context.Context, in *iam.CreateInstanceProfileInput, opts ...func(*iam.Options)) (*iam.CreateInstanceProfileOutput, error)
	DeleteInstanceProfile(ctx context.Context, in *iam.DeleteInstanceProfileInput, opts ...func(*iam.Options)) (*iam.DeleteInstanceProfileOutput, error)
	AddRoleToInstanceProfile(ctx context.Context, in *iam.AddRoleToInstanceProfileInput, opts ...func(*iam.Options)) (*iam.AddRoleToInstanceProfileOutput, error)
	RemoveRoleFromInstanceProfile(ctx context.Context, in *iam.RemoveRoleFromInstanceProfileInput, opts ...func(*iam.Options)) (*iam.RemoveRoleFromInstanceProfileOutput, error)
}

// Name is the name of the instance profile Joiner owns for a node class: the cluster name and a
// hash of the region and the class's name, so that it is stable across restarts, unique per
// cluster, region and class, and within IAM's 128 characters for any cluster name of up to 100.
func Name(clusterName, region string, nodeClass *awsv1.EC2NodeClass) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(region + "/" + nodeClass.Name))
	return clusterName + "_" + strconv.FormatUint(h.Sum64(), 10)
}

// Provider creates, checks and deletes instance profiles.
type Provider struct {
	iam         IAMAPI
	clusterName string
	region      string
}

// NewProvider returns a provider for the cluster's node classes in region.
func NewProvider(api IAMAPI, clusterName, region string) *Provider {
	return &Provider{iam: api, clusterName: clusterName, region: region}
}

// Ensure returns the name of the instance profile the node class launches with. For
// spec.instanceProfile it checks that the profile exists and holds a role. For spec.role it
// creates the profile Name gives (tagged with the cluster, the region, the class and the class's
// spec.tags)
// when missing, and makes it hold exactly the role.
func (p *Provider) Ensure(ctx context.Context, nodeClass *awsv1.EC2NodeClass) (string, error) {
	if nodeClass.Spec.InstanceProfile != nil {
		name := *nodeClass.Spec.InstanceProfile
		out, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if err != nil {
			return "", fmt.Errorf("getting instance profile %s of spec.instanceProfile, %w", name, err)
		}
		if len(out.InstanceProfile.Roles) == 0 {
			return "", fmt.Errorf("instance profile %s of spec.instanceProfile holds no role: add the node role to it", name)
		}
		return name, nil
	}
	if nodeClass.Spec.Role == "" {
		return "", errors.New("neither spec.role nor spec.instanceProfile is set")
	}
	name := Name(p.clusterName, p.region, nodeClass)
	profile, err := p.getOrCreate(ctx, name, nodeClass)
	if err != nil {
		return "", err
	}
	for _, r := range profile.Roles {
		if aws.ToString(r.RoleName) == nodeClass.Spec.Role {
			return name, nil
		}
		if _, err := p.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: r.RoleName}); err != nil {
			return "", fmt.Errorf("removing role %s from instance profile %s, %w", aws.ToString(r.RoleName), name, err)
		}
	}
	if _, err := p.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String(nodeClass.Spec.Role)}); err != nil {
		if notFound := (*iamtypes.NoSuchEntityException)(nil); errors.As(err, &notFound) {
			return "", fmt.Errorf("role %s of spec.role does not exist: set spec.role to the name of the node role "+
				"(the role with AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy and AmazonEC2ContainerRegistryReadOnly that the cluster maps for nodes), "+
				"or create it; adding it to instance profile %s, %w", nodeClass.Spec.Role, name, err)
		}
		return "", fmt.Errorf("adding role %s of spec.role to instance profile %s, %w", nodeClass.Spec.Role, name, err)
	}
	return name, nil
}

func (p *Provider) getOrCreate(ctx context.Context, name string, nodeClass *awsv1.EC2NodeClass) (*iamtypes.InstanceProfile, error) {
	out, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err == nil {
		return out.InstanceProfile, nil
	}
	var notFound *iamtypes.NoSuchEntityException
	if !errors.As(err, &notFound) {
		return nil, fmt.Errorf("getting instance profile %s, %w", name, err)
	}
	tags := []iamtypes.Tag{
		{Key: aws.String(awsv1.TagKeyPrefixCluster + p.clusterName), Value: aws.String("owned")},
		{Key: aws.String(awsv1.TagKeyNodeClass), Value: aws.String(nodeClass.Name)},
		{Key: aws.String(awsv1.TagKeyEKSClusterName), Value: aws.String(p.clusterName)},
		// The region, as Karpenter tags its profiles: IAM is global, and the controller's policy
		// (iampolicy) lets it change only the profiles of its own region.
		{Key: aws.String(corev1.LabelTopologyRegion), Value: aws.String(p.region)},
	}
	for _, k := range slices.Sorted(maps.Keys(nodeClass.Spec.Tags)) {
		if k == corev1.LabelTopologyRegion {
			continue // ours wins: IAM refuses a key given twice
		}
		tags = append(tags, iamtypes.Tag{Key: aws.String(k), Value: aws.String(nodeClass.Spec.Tags[k])})
	}
	created, err := p.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name), Tags: tags})
	if err != nil {
		return nil, fmt.Errorf("creating instance profile %s, %w", name, err)
	}
	return created.InstanceProfile, nil
}

// Delete removes the instance profile Joiner owns for a spec.role node class, after taking its
// roles out. A profile already gone is success; for spec.instanceProfile it does nothing.
func (p *Provider) Delete(ctx context.Context, nodeClass *awsv1.EC2NodeClass) error {
	if nodeClass.Spec.InstanceProfile != nil {
		return nil
	}
	name := Name(p.clusterName, p.region, nodeClass)
	out, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	var notFound *iamtypes.NoSuchEntityException
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting instance profile %s, %w", name, err)
	}
	for _, r := range out.InstanceProfile.Roles {
		if _, err := p.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: r.RoleName}); err != nil {
			return fmt.Errorf("removing role %s from instance profile %s, %w", aws.ToString(r.RoleName), name, err)
		}
	}
	if _, err := p.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil && !errors.As(err, &notFound) {
		return fmt.Errorf("deleting instance profile %s, %w", name, err)
	}
	return nil
}

// RoleOfInstanceProfile returns the ARN of the role in the instance profile of that ARN (the name
// is its last path segment, which GetInstanceProfile takes), or "" when it holds no role. It
// needs iam:GetInstanceProfile, which the controller's policy grants.
func (p *Provider) RoleOfInstanceProfile(ctx context.Context, profileARN string) (string, error) {
	_, resource, ok := strings.Cut(profileARN, ":instance-profile/")
	if !ok || resource == "" {
		return "", fmt.Errorf("reading instance profile %q, not an instance profile ARN", profileARN)
	}
	name := resource[strings.LastIndex(resource, "/")+1:]
	out, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("getting instance profile %s, %w", name, err)
	}
	if out.InstanceProfile == nil || len(out.InstanceProfile.Roles) == 0 {
		return "", nil
	}
	return aws.ToString(out.InstanceProfile.Roles[0].Arn), nil
}
