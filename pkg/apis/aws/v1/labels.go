package v1

import "strings"

// Well-known node labels in the karpenter.k8s.aws domain. Joiner sets them on every node it
// launches from the EC2 instance type's description, and NodePool requirements may select on them
// before a node exists. The keys and their value formats are part of the Karpenter wire contract:
// a NodePool written for Karpenter must select the same instances here, so never rename one.
const (
	// LabelInstanceCategory is the letters before the generation digit of the instance type:
	// "m" for m7i.large, "c" for c6gn.xlarge, "inf" for inf2.xlarge.
	LabelInstanceCategory = Group + "/instance-category"
	// LabelInstanceFamily is the part of the instance type before the dot: "m7i" for m7i.large.
	LabelInstanceFamily = Group + "/instance-family"
	// LabelInstanceGeneration is the generation digit(s) as a decimal string: "7" for m7i.large.
	LabelInstanceGeneration = Group + "/instance-generation"
	// LabelInstanceSize is the part of the instance type after the dot: "large", "metal-48xl".
	LabelInstanceSize = Group + "/instance-size"
	// LabelInstanceCPU is the number of vCPUs as a decimal string.
	LabelInstanceCPU = Group + "/instance-cpu"
	// LabelInstanceCPUManufacturer is the lower-case CPU vendor reported by EC2: "intel", "amd", "aws".
	LabelInstanceCPUManufacturer = Group + "/instance-cpu-manufacturer"
	// LabelInstanceCPUSustainedClockSpeedMhz is the sustained all-core clock speed in MHz.
	LabelInstanceCPUSustainedClockSpeedMhz = Group + "/instance-cpu-sustained-clock-speed-mhz"
	// LabelInstanceMemory is the instance memory in MiB as a decimal string.
	LabelInstanceMemory = Group + "/instance-memory"
	// LabelInstanceEBSBandwidth is the maximum EBS bandwidth in Mbps.
	LabelInstanceEBSBandwidth = Group + "/instance-ebs-bandwidth"
	// LabelInstanceNetworkBandwidth is the baseline network bandwidth in Mbps.
	LabelInstanceNetworkBandwidth = Group + "/instance-network-bandwidth"
	// LabelInstanceHypervisor is the hypervisor ("nitro", "xen"). Bare-metal types have none.
	LabelInstanceHypervisor = Group + "/instance-hypervisor"
	// LabelInstanceEncryptionInTransitSupported is "true" or "false": whether traffic between two
	// such instances is encrypted by the hardware.
	LabelInstanceEncryptionInTransitSupported = Group + "/instance-encryption-in-transit-supported"
	// LabelInstanceLocalNVME is the total local NVMe instance-store capacity in GB, as EC2 reports
	// it.
	LabelInstanceLocalNVME = Group + "/instance-local-nvme"
	// LabelInstanceGPUName is the lower-case GPU model, such as "t4" or "a10g".
	LabelInstanceGPUName = Group + "/instance-gpu-name"
	// LabelInstanceGPUManufacturer is the lower-case GPU vendor, such as "nvidia".
	LabelInstanceGPUManufacturer = Group + "/instance-gpu-manufacturer"
	// LabelInstanceGPUCount is the number of GPUs.
	LabelInstanceGPUCount = Group + "/instance-gpu-count"
	// LabelInstanceGPUMemory is the memory of one GPU in MiB.
	LabelInstanceGPUMemory = Group + "/instance-gpu-memory"
	// LabelInstanceAcceleratorName is the lower-case name of a non-GPU accelerator, such as "inferentia".
	LabelInstanceAcceleratorName = Group + "/instance-accelerator-name"
	// LabelInstanceAcceleratorManufacturer is the lower-case accelerator vendor, such as "aws".
	LabelInstanceAcceleratorManufacturer = Group + "/instance-accelerator-manufacturer"
	// LabelInstanceAcceleratorCount is the number of non-GPU accelerators.
	LabelInstanceAcceleratorCount = Group + "/instance-accelerator-count"
	// LabelNodeClass names the EC2NodeClass a node was launched from. It is also a tag on the
	// instance, which is why operators may not set it in spec.tags.
	LabelNodeClass = Group + "/ec2nodeclass"
	// LabelCapacityReservationID is the ID (cr-...) of the capacity reservation the instance was
	// launched into; absent for instances outside a reservation.
	LabelCapacityReservationID = Group + "/capacity-reservation-id"
	// LabelCapacityReservationType is the reservation's type, "default" or "capacity-block".
	LabelCapacityReservationType = Group + "/capacity-reservation-type"
	// LabelInstanceTenancy is the instance's tenancy: "default" (shared hardware), the only one
	// Joiner launches.
	LabelInstanceTenancy = Group + "/instance-tenancy"
	// LabelInstanceCapabilityFlex is "true" for the flex instance types (c7i-flex.large), whose
	// CPU may be throttled below its baseline, and "false" for the others.
	LabelInstanceCapabilityFlex = Group + "/instance-capability-flex"
	// LabelTopologyZoneID is the AWS zone ID ("use1-az1"), which, unlike the zone name, means the
	// same physical zone in every account.
	LabelTopologyZoneID = "topology.k8s.aws/zone-id"
)

// LabelsNotSet returns the karpenter.k8s.aws labels Karpenter documents and may set on its nodes
// that Joiner never sets: interruptible capacity reservations, Nitro Enclaves support and
// placement groups are not implemented. The CRDs refuse a NodePool or NodeClaim requirement on
// them, which could never be met, saying so; keep the list in the requirement rule of
// pkg/apis/v1/nodeclaim_template.go in step (pkg/apis's admission tests check both). A fresh slice
// is returned on every call.
func LabelsNotSet() []string {
	return []string{
		Group + "/capacity-reservation-interruptible",
		Group + "/nitro-sandbox",
		Group + "/placement-group-id",
		Group + "/placement-group-partition",
	}
}

// Annotations Joiner writes on EC2NodeClasses and NodeClaims. They are Joiner's bookkeeping;
// operators should read them, not write them.
const (
	// AnnotationEC2NodeClassHash holds a hash of the EC2NodeClass spec fields that affect a launched
	// instance. A NodeClaim whose value differs from its EC2NodeClass's is drifted.
	AnnotationEC2NodeClassHash = Group + "/ec2nodeclass-hash"
	// AnnotationEC2NodeClassHashVersion is the version of the hashing scheme behind
	// AnnotationEC2NodeClassHash. Hashes of different versions are never compared, so a change of
	// scheme does not mark every node drifted.
	AnnotationEC2NodeClassHashVersion = Group + "/ec2nodeclass-hash-version"
	// AnnotationInstanceProfileName records the name of the instance profile Joiner created for
	// spec.role, so that it can be found and deleted again.
	AnnotationInstanceProfileName = Group + "/instance-profile-name"
	// AnnotationInstanceTagged is set on a NodeClaim once the instance carries its Name and
	// NodeClaim tags, so tagging is done once.
	AnnotationInstanceTagged = Group + "/tagged"
)

// TerminationFinalizer holds an EC2NodeClass until the instance profile Joiner made for it is
// deleted and no NodeClaim refers to it any more.
const TerminationFinalizer = Group + "/termination"

// AMI families: values of spec.amiFamily. The family decides the userData format Joiner generates
// and the default block device mappings.
const (
	// AMIFamilyAL2 is Amazon Linux 2 (bootstrap.sh, MIME multi-part userData).
	AMIFamilyAL2 = "AL2"
	// AMIFamilyAL2023 is Amazon Linux 2023 (nodeadm NodeConfig in MIME multi-part userData).
	AMIFamilyAL2023 = "AL2023"
	// AMIFamilyBottlerocket is Bottlerocket (TOML settings userData).
	AMIFamilyBottlerocket = "Bottlerocket"
	// AMIFamilyCustom means Joiner generates nothing: userData is passed to the instance verbatim.
	AMIFamilyCustom = "Custom"
)

// Alias families are the lower-case names accepted before the "@" in amiSelectorTerms[].alias.
const (
	AliasFamilyAL2          = "al2"
	AliasFamilyAL2023       = "al2023"
	AliasFamilyBottlerocket = "bottlerocket"
	// AliasVersionLatest follows the newest release of the family. Each new release drifts the
	// nodes, so pin a version (al2023@v20240807) where unplanned replacements are unwelcome.
	AliasVersionLatest = "latest"
)

// Tag keys Joiner puts on the EC2 resources it creates. The CRD refuses them in spec.tags because
// Joiner finds its own instances, launch templates and instance profiles by them; an operator value
// would make Joiner adopt or orphan resources.
const (
	// TagKeyNodePool names the NodePool that owns an instance.
	TagKeyNodePool = "karpenter.sh/nodepool"
	// TagKeyNodeClaim names the NodeClaim of an instance.
	TagKeyNodeClaim = "karpenter.sh/nodeclaim"
	// TagKeyNodeClass names the EC2NodeClass an instance or instance profile belongs to.
	TagKeyNodeClass = LabelNodeClass
	// TagKeyEKSClusterName is the tag EKS uses to attribute resources to a cluster.
	TagKeyEKSClusterName = "eks:eks-cluster-name"
	// TagKeyPrefixCluster is followed by the cluster name ("kubernetes.io/cluster/demo": "owned")
	// and is read by the cloud provider and load balancer controllers.
	TagKeyPrefixCluster = "kubernetes.io/cluster/"
	// TagKeyName is the EC2 console's display name; Joiner sets it to the node name unless
	// spec.tags sets it.
	TagKeyName = "Name"
)

// WellKnownLabels returns the karpenter.k8s.aws (and topology.k8s.aws) label keys that Joiner
// derives from an instance type or its capacity reservation, and that NodePool requirements may
// therefore select on. LabelNodeClass is not among them: it names where a node came from, not a
// property to choose instances by. A fresh slice is returned on every call, so callers may sort or
// append to it.
func WellKnownLabels() []string {
	return []string{
		LabelInstanceCategory,
		LabelInstanceFamily,
		LabelInstanceGeneration,
		LabelInstanceSize,
		LabelInstanceCPU,
		LabelInstanceCPUManufacturer,
		LabelInstanceCPUSustainedClockSpeedMhz,
		LabelInstanceMemory,
		LabelInstanceEBSBandwidth,
		LabelInstanceNetworkBandwidth,
		LabelInstanceHypervisor,
		LabelInstanceEncryptionInTransitSupported,
		LabelInstanceLocalNVME,
		LabelInstanceGPUName,
		LabelInstanceGPUManufacturer,
		LabelInstanceGPUCount,
		LabelInstanceGPUMemory,
		LabelInstanceAcceleratorName,
		LabelInstanceAcceleratorManufacturer,
		LabelInstanceAcceleratorCount,
		LabelInstanceTenancy,
		LabelInstanceCapabilityFlex,
		LabelCapacityReservationID,
		LabelCapacityReservationType,
		LabelTopologyZoneID,
	}
}

// RestrictedTagKeys returns the exact tag keys that spec.tags may not contain. Together with
// TagKeyPrefixCluster it is the Go twin of the CEL rules on spec.tags; keep the two in step.
// A fresh slice is returned on every call.
func RestrictedTagKeys() []string {
	return []string{
		TagKeyNodePool,
		TagKeyNodeClaim,
		TagKeyNodeClass,
		TagKeyEKSClusterName,
	}
}

// IsRestrictedTagKey reports whether key is one Joiner owns and spec.tags must not set: one of
// RestrictedTagKeys, or any key under TagKeyPrefixCluster.
func IsRestrictedTagKey(key string) bool {
	if strings.HasPrefix(key, TagKeyPrefixCluster) {
		return true
	}
	for _, k := range RestrictedTagKeys() {
		if key == k {
			return true
		}
	}
	return false
}
