package launchtemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

// NamePrefix starts the name of every launch template Joiner creates.
const NamePrefix = "joiner/"

// Options are the resolved contents of a launch template.
type Options struct {
	// ClusterName is part of the identity, so two clusters in one account never share templates.
	ClusterName              string
	ImageID                  string
	UserData                 string
	InstanceProfile          string
	SecurityGroupIDs         []string
	BlockDeviceMappings      []awsv1.BlockDeviceMapping
	MetadataOptions          *awsv1.MetadataOptions
	AssociatePublicIPAddress *bool
	DetailedMonitoring       bool
	// Tags tag the template itself and the network interfaces (and, for Spot, the Spot
	// requests) its launches create.
	Tags                  map[string]string
	CapacityReservationID string
	// CapacityType is the capacity type the template launches: with v1.CapacityTypeSpot its
	// launches tag their Spot requests too.
	CapacityType string
}

// Name is the launch template name for the options: NamePrefix and 32 hex digits of a SHA-256
// of the options, with security groups in any order hashing the same. EC2 allows 128 characters;
// this is 39.
func Name(o Options) (string, error) {
	o.SecurityGroupIDs = slices.Sorted(slices.Values(o.SecurityGroupIDs))
	b, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("naming launch template, %w", err)
	}
	sum := sha256.Sum256(b)
	return NamePrefix + hex.EncodeToString(sum[:16]), nil
}

// NewOptions are the launch template options of a node class, for the NodePool nodePool and
// capacityType (v1.CapacityTypeSpot or on-demand), for one image and userData: its resolved
// instance profile and security groups, its volumes (BlockDeviceMappings), metadata options,
// public address choice, monitoring, and tags: spec.tags with the cluster's, the NodePool's and
// the node class's own, as Karpenter tags its launch templates (pkg/utils GetTags: the cluster
// tag owned, karpenter.sh/nodepool, eks:eks-cluster-name, karpenter.k8s.aws/ec2nodeclass).
// Karpenter's documented controller policy allows launching from, and deleting, only launch
// templates with a karpenter.sh/nodepool tag, so the NodePool is part of the template's identity
// (as it already is of its userData, whose node labels name it), and so is the capacity type,
// which decides whether the template tags Spot requests.
func NewOptions(clusterName string, nodeClass *awsv1.EC2NodeClass, nodePool, capacityType, imageID, userData string) Options {
	groups := make([]string, 0, len(nodeClass.Status.SecurityGroups))
	for _, g := range nodeClass.Status.SecurityGroups {
		groups = append(groups, g.ID)
	}
	tags := maps.Clone(nodeClass.Spec.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[awsv1.TagKeyPrefixCluster+clusterName] = "owned"
	tags[awsv1.TagKeyEKSClusterName] = clusterName
	tags[awsv1.TagKeyNodePool] = nodePool
	tags[awsv1.TagKeyNodeClass] = nodeClass.Name
	return Options{
		ClusterName: clusterName, ImageID: imageID, UserData: userData, InstanceProfile: nodeClass.Status.InstanceProfile,
		SecurityGroupIDs: groups, BlockDeviceMappings: BlockDeviceMappings(nodeClass), MetadataOptions: nodeClass.Spec.MetadataOptions,
		AssociatePublicIPAddress: nodeClass.Spec.AssociatePublicIPAddress,
		DetailedMonitoring:       nodeClass.Spec.DetailedMonitoring != nil && *nodeClass.Spec.DetailedMonitoring,
		Tags:                     tags, CapacityType: capacityType,
	}
}

// BlockDeviceMappings are the node class's volumes, or its AMI family's defaults: a 20Gi gp3
// encrypted root volume /dev/xvda, and for Bottlerocket a 4Gi OS volume /dev/xvda plus the 20Gi
// data volume /dev/xvdb as root volume.
func BlockDeviceMappings(nodeClass *awsv1.EC2NodeClass) []awsv1.BlockDeviceMapping {
	if len(nodeClass.Spec.BlockDeviceMappings) > 0 {
		return nodeClass.Spec.BlockDeviceMappings
	}
	volume := func(device, size string, root bool) awsv1.BlockDeviceMapping {
		q := resource.MustParse(size)
		gp3, yes := "gp3", true
		return awsv1.BlockDeviceMapping{DeviceName: &device, RootVolume: root, EBS: &awsv1.BlockDevice{
			VolumeSize: &q, VolumeType: &gp3, Encrypted: &yes, DeleteOnTermination: &yes,
		}}
	}
	if userdata.FamilyOf(nodeClass) == awsv1.AMIFamilyBottlerocket {
		return []awsv1.BlockDeviceMapping{volume("/dev/xvda", "4Gi", false), volume("/dev/xvdb", "20Gi", true)}
	}
	return []awsv1.BlockDeviceMapping{volume("/dev/xvda", "20Gi", true)}
}
