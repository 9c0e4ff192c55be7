package v1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Validation is declared here as kubebuilder markers and enforced by the API server from the
// generated CRD: there is no webhook. Every CEL message names the field it refuses and says how to
// fix it, because the message is all an operator sees from `kubectl apply`.
//
// Every list, map and string that a CEL rule walks carries maxItems, maxProperties or maxLength:
// without them the API server estimates the rule's cost for the largest possible request and
// refuses to install the CRD.

// EC2NodeClass is the AWS half of a NodePool's node template: which AMIs, subnets, security groups
// and IAM identity instances get, what userData and kubelet settings they boot with, and how their
// disks and instance metadata service are set up. NodePools refer to it by name through
// spec.template.spec.nodeClassRef. It is cluster-scoped.
//
// Joiner resolves the selectors into status (subnets, securityGroups, amis, capacityReservations,
// instanceProfile) and sets the Ready condition once every selector matched something. A NodePool
// whose EC2NodeClass is not Ready launches nothing.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ec2nodeclasses,scope=Cluster,categories=karpenter,shortName={ec2nc,ec2ncs}
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether every selector resolved and the node class can launch nodes"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Role",type="string",JSONPath=".spec.role",description="IAM role Joiner wraps in an instance profile; empty when spec.instanceProfile is used"
// +kubebuilder:printcolumn:name="InstanceProfile",type="string",JSONPath=".status.instanceProfile",priority=1,description="Instance profile attached to launched instances"
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired configuration of the instances launched with this node class.
	// +required
	Spec EC2NodeClassSpec `json:"spec,omitempty"`
	// Status is what Joiner resolved the spec's selectors to, and whether the node class is ready.
	// +optional
	Status EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassList is a list of EC2NodeClasses.
//
// +kubebuilder:object:root=true
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the EC2NodeClasses.
	Items []EC2NodeClass `json:"items"`
}

// EC2NodeClassSpec is the desired configuration of the EC2 instances launched for a NodePool.
//
// Changing a field that shapes the instance (AMIs, userData, kubelet, block devices, metadata
// options, tags, role...) marks existing nodes as drifted, and Joiner replaces them according to
// the NodePool's disruption budgets. Selector changes drift only the nodes whose subnet, security
// group or AMI is no longer selected.
//
// +kubebuilder:validation:XValidation:rule="has(self.role) || has(self.instanceProfile)",message="must set exactly one of spec.role or spec.instanceProfile, and neither is set: set role to an IAM role name for Joiner to wrap in an instance profile it owns, or instanceProfile to one you manage"
// +kubebuilder:validation:XValidation:rule="!(has(self.role) && has(self.instanceProfile))",message="must set exactly one of spec.role or spec.instanceProfile, and both are set: keep role to let Joiner create and own the instance profile, or keep instanceProfile to use one you manage"
// +kubebuilder:validation:XValidation:rule="has(self.role) == has(oldSelf.role)",message="cannot switch an existing EC2NodeClass between spec.role and spec.instanceProfile: create a new EC2NodeClass that uses the other field and point your NodePools at it"
// +kubebuilder:validation:XValidation:rule="has(self.amiFamily) || (has(self.amiSelectorTerms) && self.amiSelectorTerms.exists(t, has(t.alias)))",fieldPath=".amiFamily",reason="FieldValueRequired",message="spec.amiFamily is required when spec.amiSelectorTerms has no alias term: set it to AL2, AL2023, Bottlerocket or Custom to say which userData format the selected AMIs expect"
// +kubebuilder:validation:XValidation:rule="!has(self.amiFamily) || self.amiFamily == 'Custom' || !has(self.amiSelectorTerms) || self.amiSelectorTerms.all(t, !has(t.alias) || t.alias.startsWith(self.amiFamily.lowerAscii() + '@'))",fieldPath=".amiFamily",message="spec.amiFamily does not match the alias family in spec.amiSelectorTerms (al2 is AL2, al2023 is AL2023, bottlerocket is Bottlerocket): correct amiFamily, remove it to follow the alias, or set Custom to pass userData verbatim"
type EC2NodeClassSpec struct {
	// AMIFamily selects the bootstrap format of the node's operating system: AL2, AL2023,
	// Bottlerocket or Custom. It decides how Joiner builds userData (see userData), the default
	// root volume and the kubelet flags it passes.
	//
	// It may be omitted when amiSelectorTerms is an alias, which then implies the family. When both
	// are set, amiFamily must be the alias's family, or Custom to boot the aliased AMI with your
	// userData untouched. Without an alias, amiFamily is required and must describe the AMIs the
	// other terms select; Joiner cannot detect a mismatch, and a node booted with the wrong
	// format never joins the cluster.
	// +kubebuilder:validation:Enum:={AL2,AL2023,Bottlerocket,Custom}
	// +optional
	AMIFamily *string `json:"amiFamily,omitempty"`

	// AMISelectorTerms chooses the AMIs instances boot from. Terms are ORed: an AMI matching any
	// term is a candidate. Within a term, fields are ANDed.
	//
	// The simplest term is an alias naming an EKS-optimized AMI release, for example
	// {alias: al2023@latest}; it must be the only term. Otherwise select by id, by name (with an
	// optional owner), by tags, or by an SSM parameter holding an AMI ID. Among candidates Joiner
	// picks, per architecture and accelerator requirement, the newest AMI by creation date, so
	// terms may match AMIs for both amd64 and arm64.
	//
	// Between 1 and 30 terms.
	// +kubebuilder:validation:XValidation:rule="self.size() > 0",message="spec.amiSelectorTerms must list at least one term: use an alias such as al2023@latest, or select AMIs by id, name, tags or ssmParameter"
	// +kubebuilder:validation:XValidation:rule="!self.exists(t, has(t.alias)) || self.size() == 1",message="an alias term must be the only entry in spec.amiSelectorTerms: remove the other terms, or replace the alias with id, name, tags or ssmParameter terms"
	// +kubebuilder:validation:MaxItems=30
	// +required
	AMISelectorTerms []AMISelectorTerm `json:"amiSelectorTerms"`

	// SubnetSelectorTerms chooses the subnets instances launch into. Terms are ORed; within a
	// term, fields are ANDed. Joiner spreads instances across the zones of the matched subnets
	// and, within a zone, prefers the subnet with the most free IP addresses.
	//
	// Between 1 and 30 terms; each needs tags or id.
	// +kubebuilder:validation:XValidation:rule="self.size() > 0",message="spec.subnetSelectorTerms must list at least one term: select subnets by tags (for example karpenter.sh/discovery: <cluster-name>) or by id"
	// +kubebuilder:validation:MaxItems=30
	// +required
	SubnetSelectorTerms []SubnetSelectorTerm `json:"subnetSelectorTerms"`

	// SecurityGroupSelectorTerms chooses the security groups attached to every instance's primary
	// network interface. Terms are ORed; within a term, fields are ANDed. All matched groups are
	// attached, so they must belong to the VPC of the selected subnets.
	//
	// Between 1 and 30 terms; each needs tags, id or name.
	// +kubebuilder:validation:XValidation:rule="self.size() > 0",message="spec.securityGroupSelectorTerms must list at least one term: select security groups by tags (for example karpenter.sh/discovery: <cluster-name>), id or name"
	// +kubebuilder:validation:MaxItems=30
	// +required
	SecurityGroupSelectorTerms []SecurityGroupSelectorTerm `json:"securityGroupSelectorTerms"`

	// CapacityReservationSelectorTerms chooses the EC2 On-Demand Capacity Reservations (and
	// Capacity Blocks) Joiner may launch into. Terms are ORed; within a term, fields are ANDed.
	// Launches for NodePools allowing the "reserved" capacity type use a matched reservation while
	// it has room. Leave empty to never target a reservation; open reservations may still be
	// consumed by EC2 on its own.
	//
	// At most 30 terms.
	// +kubebuilder:validation:MaxItems=30
	// +optional
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`

	// AssociatePublicIPAddress sets whether instances get a public IPv4 address. When omitted the
	// subnet's own "auto-assign public IPv4" setting applies. Set false to keep nodes private even
	// in public subnets.
	// +optional
	AssociatePublicIPAddress *bool `json:"associatePublicIPAddress,omitempty"`

	// Role is the name of the IAM role nodes run as (for example KarpenterNodeRole-demo). Joiner
	// creates an instance profile for it, owns that profile's lifecycle and deletes it with the
	// EC2NodeClass. Joiner needs iam:PassRole on the role. The role must be allowed to join the
	// cluster (an EKS access entry of type EC2_LINUX, or an aws-auth mapping).
	//
	// Set exactly one of role and instanceProfile. The choice is fixed for the life of the
	// EC2NodeClass; the role name itself may be changed, which drifts the nodes.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="spec.role must not be empty: set the name of the IAM role nodes should use, or remove role and set spec.instanceProfile"
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Role string `json:"role,omitempty"`

	// InstanceProfile is the name of an existing IAM instance profile to attach to instances, for
	// operators who manage IAM outside the cluster. Joiner neither creates nor deletes it; it must
	// already contain a role that Joiner has iam:PassRole on and that may join the cluster.
	//
	// Set exactly one of role and instanceProfile. The choice is fixed for the life of the
	// EC2NodeClass.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="spec.instanceProfile must not be empty: set the name of an existing instance profile, or remove instanceProfile and set spec.role"
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	InstanceProfile *string `json:"instanceProfile,omitempty"`

	// Tags are added to every EC2 resource Joiner creates for this node class: instances, their
	// volumes and network interfaces, launch templates, and the instance profile. Joiner adds its
	// own tags next to them (karpenter.sh/nodepool, karpenter.sh/nodeclaim,
	// karpenter.k8s.aws/ec2nodeclass, eks:eks-cluster-name, kubernetes.io/cluster/<name>), so
	// those keys are refused here, as are keys starting with the AWS-reserved "aws:". A Name tag
	// set here replaces the default, the node name.
	//
	// At most 50 tags; keys up to 128 characters, values up to 256.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != '')",message="spec.tags keys must not be empty: remove the entry with the empty key"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 128 && self[k].size() <= 256)",message="spec.tags keys may be at most 128 characters and values at most 256 (the EC2 limits): shorten the entry"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('kubernetes.io/cluster/'))",message="spec.tags may not set a key starting with kubernetes.io/cluster/: Joiner tags instances with kubernetes.io/cluster/<cluster-name> itself; remove the key"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'karpenter.sh/nodepool')",message="spec.tags may not set karpenter.sh/nodepool: Joiner tags each instance with its NodePool itself; remove the key"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'karpenter.sh/nodeclaim')",message="spec.tags may not set karpenter.sh/nodeclaim: Joiner tags each instance with its NodeClaim itself; remove the key"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'karpenter.k8s.aws/ec2nodeclass')",message="spec.tags may not set karpenter.k8s.aws/ec2nodeclass: Joiner tags each instance with its EC2NodeClass itself; remove the key"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'eks:eks-cluster-name')",message="spec.tags may not set eks:eks-cluster-name: Joiner sets it to the cluster name itself; remove the key"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('aws:'))",message="spec.tags may not set a key starting with aws: (reserved by AWS, EC2 refuses it): rename or remove the key"
	// +kubebuilder:validation:MaxProperties=50
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// UserData is operator-supplied boot configuration. What Joiner does with it depends on the
	// AMI family, because Joiner must still add the settings that make the node join this cluster
	// (API server endpoint, cluster CA, DNS address, max pods, labels, and the
	// karpenter.sh/unregistered:NoExecute startup taint that keeps pods off the node until Joiner
	// has registered it):
	//
	// AL2: give a shell script or a MIME multi-part document. Joiner wraps it in a MIME
	// multi-part document and appends its own part, which calls /etc/eks/bootstrap.sh with the
	// cluster's settings. Your parts run first, so they may prepare the host or write files
	// bootstrap.sh reads, but must not call bootstrap.sh themselves.
	//
	// AL2023: give a MIME multi-part document whose parts are shell scripts and/or nodeadm
	// NodeConfig YAML (apiVersion node.eks.aws/v1alpha1), or a bare NodeConfig. Joiner adds its
	// own NodeConfig part, and nodeadm merges all of them. Your kubelet config, flags, labels and
	// taints are unioned with the ones Joiner requires; Joiner's values for the cluster connection
	// (API server, CA, cluster name, DNS) win, and nothing you set can overwrite or remove the
	// karpenter.sh/unregistered:NoExecute taint. Your scripts run before nodeadm starts the
	// kubelet.
	//
	// Bottlerocket: give TOML settings. Joiner parses them and writes the cluster settings
	// (settings.kubernetes.api-server, cluster-certificate, cluster-name, cluster-dns-ip,
	// max-pods and the kubelet fields of spec.kubelet) over yours; every other table and key,
	// including ones Joiner does not know, is kept as written. Your node-labels and node-taints
	// are merged with the required ones, and the karpenter.sh/unregistered:NoExecute taint is
	// always added. TOML that does not parse cannot be merged, so nothing launches with it.
	//
	// Custom: passed to the instance verbatim; Joiner adds nothing. You are responsible for
	// registering the node with the cluster, with the karpenter.sh/unregistered:NoExecute taint
	// and the karpenter.sh/nodepool label (and the NodePool's template labels and taints) set at
	// kubelet start; otherwise Joiner never recognises the node and replaces the instance once the
	// registration timeout passes.
	//
	// UserData is stored in launch templates, which any principal allowed to describe them can read:
	// do not put secrets here. EC2 limits the final userData to 16 KiB before base64 encoding,
	// Joiner's additions included.
	// +optional
	UserData *string `json:"userData,omitempty"`

	// Kubelet overrides kubelet settings on the launched nodes: any field of the kubelet's
	// KubeletConfiguration (kubelet.config.k8s.io/v1beta1), as in Karpenter v1.15. Joiner also uses
	// maxPods, podsPerCore, systemReserved, kubeReserved and evictionHard to compute each instance
	// type's allocatable capacity before launching, so set them here rather than in userData, or
	// the scheduling simulation will be wrong. Omitted fields keep the AMI's defaults.
	//
	// AL2023 passes every field to nodeadm's NodeConfig. AL2 passes the fields declared in this
	// schema (as bootstrap.sh kubelet flags), Bottlerocket those it has a settings.kubernetes key
	// for. A field the AMI family cannot pass, one that is not a kubelet field or has the wrong
	// type, and registerWithTaints (Joiner sets it) make ValidationSucceeded False with reason
	// InvalidKubeletConfiguration or UnsupportedKubeletConfiguration and a message naming the
	// field; nothing launches from the class until it is removed. See docs/userdata.md.
	// +optional
	Kubelet *KubeletConfiguration `json:"kubelet,omitempty"`

	// BlockDeviceMappings replaces the AMI family's default volumes (a 20Gi gp3 root volume, or for
	// Bottlerocket a 4Gi OS volume plus a 20Gi data volume). Mark the volume that holds the
	// kubelet and container runtime state with rootVolume: true; its size becomes the node's
	// ephemeral-storage capacity in scheduling. When this list is set, only these volumes are
	// created.
	//
	// At most 50 mappings, at most one with rootVolume: true.
	// +kubebuilder:validation:XValidation:rule="self.filter(m, has(m.rootVolume) && m.rootVolume).size() <= 1",message="at most one entry in spec.blockDeviceMappings may set rootVolume: true: keep it only on the volume that holds kubelet and container runtime state"
	// +kubebuilder:validation:MaxItems=50
	// +optional
	BlockDeviceMappings []BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`

	// InstanceStorePolicy says what to do with the local NVMe instance-store disks of instance
	// types that have them. RAID0 stripes all of them into one array and puts the kubelet and
	// container runtime state on it, so the node's ephemeral-storage capacity is the instance
	// store's size rather than the root volume's; the data is lost when the instance stops. When
	// omitted, instance-store disks are left unformatted for the operator to use.
	// +optional
	InstanceStorePolicy *InstanceStorePolicy `json:"instanceStorePolicy,omitempty"`

	// MetadataOptions configures the Instance Metadata Service (IMDS) of the launched instances.
	// The default requires IMDSv2 tokens and a hop limit of 1, so pods on the pod network cannot
	// reach the node's IAM credentials; raise httpPutResponseHopLimit to 2 only if pods must use
	// IMDS. When omitted, or when a field is omitted, it defaults to {httpEndpoint: enabled,
	// httpProtocolIPv6: disabled, httpPutResponseHopLimit: 1, httpTokens: required}.
	// +kubebuilder:default={"httpEndpoint":"enabled","httpProtocolIPv6":"disabled","httpPutResponseHopLimit":1,"httpTokens":"required"}
	// +optional
	MetadataOptions *MetadataOptions `json:"metadataOptions,omitempty"`

	// DetailedMonitoring turns on one-minute CloudWatch metrics for the instances (billed by AWS).
	// When omitted or false, EC2's free five-minute metrics apply.
	// +optional
	DetailedMonitoring *bool `json:"detailedMonitoring,omitempty"`

	// Context is passed unchanged as the Context parameter of EC2 CreateFleet calls. It is reserved
	// by AWS for specific programs; leave it unset unless AWS has told you to set it.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Context *string `json:"context,omitempty"`
}

// AMISelectorTerm selects AMIs. Its fields are ANDed; set alias alone, id alone, or a
// combination of name, owner, tags and ssmParameter.
//
// +kubebuilder:validation:XValidation:rule="has(self.alias) || has(self.tags) || has(self.id) || has(self.name) || has(self.ssmParameter)",message="each spec.amiSelectorTerms entry must set at least one of alias, tags, id, name or ssmParameter: owner alone would match every AMI of that owner"
// +kubebuilder:validation:XValidation:rule="!has(self.id) || !(has(self.alias) || has(self.tags) || has(self.name) || has(self.owner) || has(self.ssmParameter))",message="id must be the only field in its spec.amiSelectorTerms entry: move tags, name, owner, alias or ssmParameter to a separate term"
// +kubebuilder:validation:XValidation:rule="!has(self.alias) || !(has(self.tags) || has(self.id) || has(self.name) || has(self.owner) || has(self.ssmParameter))",message="alias must be the only field in its spec.amiSelectorTerms entry: remove the other fields, or drop the alias and select AMIs by id, name, tags or ssmParameter"
// +kubebuilder:validation:XValidation:rule="!has(self.owner) || has(self.name) || has(self.tags)",message="owner in spec.amiSelectorTerms only narrows a name or tags selection: add name or tags to this term, or remove owner"
type AMISelectorTerm struct {
	// Alias selects an EKS-optimized AMI release, written family@version. The family is al2,
	// al2023 or bottlerocket. The version is "latest", which follows each new release and drifts
	// nodes when one is published, or a pinned release: the AMI release version for al2 and
	// al2023 (al2023@v20240807) and the Bottlerocket OS version for bottlerocket
	// (bottlerocket@v1.20.3). Pin versions in production and move the pin deliberately.
	//
	// Joiner resolves the alias through the public EKS SSM parameters for the cluster's Kubernetes
	// version, for both amd64 and arm64 (and the accelerated variants). An alias must be the only
	// field of the only term; it implies spec.amiFamily.
	// +kubebuilder:validation:XValidation:rule="self.matches('^(al2|al2023|bottlerocket)(@|$)')",message="spec.amiSelectorTerms[].alias family must be al2, al2023 or bottlerocket (written family@version, for example al2023@latest): use one of these families, or select the AMI by id, name or tags and set amiFamily"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+@(latest|v[0-9]+([.][0-9]+)*)$')",message="spec.amiSelectorTerms[].alias version must be latest or a release such as v20240807 or v1.20.3 (family@version, for example al2023@v20240807): fix the part after the @"
	// +kubebuilder:validation:MaxLength=30
	// +optional
	Alias string `json:"alias,omitempty"`

	// Tags selects AMIs carrying all of these tags. A value of "*" matches any value of the key.
	// At most 20 tags; keys and values must not be empty.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != '' && self[k] != '')",message="tag keys and values in spec.amiSelectorTerms[].tags must not be empty: use '*' as the value to match any value of a key"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// ID selects one AMI by its ID (ami-0123456789abcdef0). It must be the only field of its term.
	// An AMI is built for one architecture, so list one id term per architecture the NodePools
	// allow.
	// +kubebuilder:validation:Pattern="^ami-[0-9a-z]+$"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ID string `json:"id,omitempty"`

	// Name selects AMIs by their EC2 name (not the Name tag). "*" and "?" are wildcards. Without
	// owner, only AMIs owned by this account or by Amazon match, so that a look-alike public AMI
	// is never picked up.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Name string `json:"name,omitempty"`

	// Owner narrows name or tags to AMIs of one owner: an AWS account ID, "self", "amazon" or
	// "aws-marketplace". It cannot be used alone.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Owner string `json:"owner,omitempty"`

	// SSMParameter is the name or ARN of an SSM parameter whose value is an AMI ID, such as a
	// parameter your image pipeline updates. Joiner re-reads it periodically; a new value drifts
	// the nodes.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	SSMParameter string `json:"ssmParameter,omitempty"`
}

// SubnetSelectorTerm selects subnets. Its fields are ANDed; set tags or id, not both.
//
// +kubebuilder:validation:XValidation:rule="has(self.tags) || has(self.id)",message="each spec.subnetSelectorTerms entry must set tags or id: add one of them, or remove the empty term"
// +kubebuilder:validation:XValidation:rule="!(has(self.id) && has(self.tags))",message="id must be the only field in its spec.subnetSelectorTerms entry: put tags in a separate term (terms are ORed)"
type SubnetSelectorTerm struct {
	// Tags selects subnets carrying all of these tags. A value of "*" matches any value of the key.
	// At most 20 tags; keys and values must not be empty.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != '' && self[k] != '')",message="tag keys and values in spec.subnetSelectorTerms[].tags must not be empty: use '*' as the value to match any value of a key"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// ID selects one subnet by its ID (subnet-0123456789abcdef0).
	// +kubebuilder:validation:Pattern="^subnet-[0-9a-z]+$"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ID string `json:"id,omitempty"`
}

// SecurityGroupSelectorTerm selects security groups by one of tags, id or name. As in Karpenter,
// id and name are each alone in their term: a group name is unique in its VPC, so ANDing it with
// tags would only hide a typo.
//
// +kubebuilder:validation:XValidation:rule="has(self.tags) || has(self.id) || has(self.name)",message="each spec.securityGroupSelectorTerms entry must set tags, id or name: add one of them, or remove the empty term"
// +kubebuilder:validation:XValidation:rule="!has(self.id) || !(has(self.tags) || has(self.name))",message="id must be the only field in its spec.securityGroupSelectorTerms entry: put tags and name in a separate term (terms are ORed)"
// +kubebuilder:validation:XValidation:rule="!has(self.name) || !has(self.tags)",message="name must be the only field in its spec.securityGroupSelectorTerms entry: put tags in a separate term (terms are ORed)"
type SecurityGroupSelectorTerm struct {
	// Tags selects security groups carrying all of these tags. A value of "*" matches any value of
	// the key. At most 20 tags; keys and values must not be empty.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != '' && self[k] != '')",message="tag keys and values in spec.securityGroupSelectorTerms[].tags must not be empty: use '*' as the value to match any value of a key"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// ID selects one security group by its ID (sg-0123456789abcdef0).
	// +kubebuilder:validation:Pattern="^sg-[0-9a-z]+$"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ID string `json:"id,omitempty"`

	// Name selects security groups by their group name (the GroupName field, not the Name tag).
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
}

// CapacityReservationSelectorTerm selects capacity reservations. Its fields are ANDed; set id
// alone, or a combination of tags, ownerID and instanceMatchCriteria.
//
// +kubebuilder:validation:XValidation:rule="has(self.tags) || has(self.id) || has(self.instanceMatchCriteria)",message="each spec.capacityReservationSelectorTerms entry must set tags, id or instanceMatchCriteria: ownerID alone would match every reservation of that account"
// +kubebuilder:validation:XValidation:rule="!has(self.id) || !(has(self.tags) || has(self.ownerID) || has(self.instanceMatchCriteria))",message="id must be the only field in its spec.capacityReservationSelectorTerms entry: put tags, ownerID and instanceMatchCriteria in a separate term (terms are ORed)"
type CapacityReservationSelectorTerm struct {
	// Tags selects reservations carrying all of these tags. A value of "*" matches any value of
	// the key. At most 20 tags; keys and values must not be empty.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != '' && self[k] != '')",message="tag keys and values in spec.capacityReservationSelectorTerms[].tags must not be empty: use '*' as the value to match any value of a key"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// ID selects one reservation by its ID (cr-0123456789abcdef0).
	// +kubebuilder:validation:Pattern="^cr-[0-9a-z]+$"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ID string `json:"id,omitempty"`

	// OwnerID narrows the selection to reservations owned by this 12-digit AWS account ID, for
	// reservations shared with this account through AWS RAM.
	// +kubebuilder:validation:Pattern="^[0-9]{12}$"
	// +optional
	OwnerID string `json:"ownerID,omitempty"`

	// InstanceMatchCriteria narrows the selection to "open" reservations (which any matching
	// instance may use) or "targeted" ones (which only launches naming them may use).
	// +kubebuilder:validation:Enum:={open,targeted}
	// +optional
	InstanceMatchCriteria string `json:"instanceMatchCriteria,omitempty"`
}

// KubeletConfiguration is the kubelet's configuration of a node class: any field of the upstream
// KubeletConfiguration (kubelet.config.k8s.io/v1beta1), named and typed as there, as in Karpenter
// v1.15. The fields declared below are the ones Joiner reads itself (for scheduling and every
// family's bootstrap); the API server checks them. Every other field is kept as written in Other
// and checked by Joiner (ValidateOther, per AMI family by pkg/aws/userdata), which reports a
// field it cannot pass to the family's bootstrap on the ValidationSucceeded condition, naming it.
//
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!has(self.imageGCHighThresholdPercent) || !has(self.imageGCLowThresholdPercent) || self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent",message="spec.kubelet.imageGCHighThresholdPercent must be greater than spec.kubelet.imageGCLowThresholdPercent: raise the high threshold or lower the low one"
// +kubebuilder:validation:XValidation:rule="!has(self.evictionSoft) || self.evictionSoft.all(k, has(self.evictionSoftGracePeriod) && k in self.evictionSoftGracePeriod)",message="every signal in spec.kubelet.evictionSoft needs a grace period: add the same key to spec.kubelet.evictionSoftGracePeriod"
// +kubebuilder:validation:XValidation:rule="!has(self.evictionSoftGracePeriod) || self.evictionSoftGracePeriod.all(k, has(self.evictionSoft) && k in self.evictionSoft)",message="every signal in spec.kubelet.evictionSoftGracePeriod needs a threshold: add the same key to spec.kubelet.evictionSoft, or remove the grace period"
type KubeletConfiguration struct {
	// ClusterDNS lists the IP addresses of the cluster DNS servers written into pods' resolv.conf.
	// When omitted, Joiner uses the kube-dns Service's cluster IP. At most 3 addresses, each an
	// IPv4 or IPv6 address.
	// +kubebuilder:validation:XValidation:rule="self.all(a, isIP(a))",message="spec.kubelet.clusterDNS entries must be IP addresses such as 10.100.0.10 or fd00::a (not host names or CIDRs): correct the entry"
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:items:MaxLength=45
	// +optional
	ClusterDNS []string `json:"clusterDNS,omitempty"`

	// MaxPods caps the pods a node runs. When omitted, the AMI family's default applies (for the
	// AWS VPC CNI, the number of IP addresses the instance type's network interfaces hold).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxPods *int32 `json:"maxPods,omitempty"`

	// PodsPerCore caps the pods per vCPU. The node's limit is the lower of podsPerCore times its
	// vCPUs and maxPods. 0 means no per-core limit.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PodsPerCore *int32 `json:"podsPerCore,omitempty"`

	// SystemReserved reserves resources for the operating system's daemons, taken out of the
	// node's allocatable capacity. Keys are cpu, memory, ephemeral-storage and pid; values are
	// non-negative quantities (100m, 200Mi, 1Gi, 1000).
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage', 'pid'])",message="spec.kubelet.systemReserved keys must be cpu, memory, ephemeral-storage or pid: remove or rename the other keys"
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0')))",message="spec.kubelet.systemReserved values must be non-negative quantities such as 100m, 200Mi or 1Gi: correct the value"
	// +kubebuilder:validation:MaxProperties=4
	// +optional
	SystemReserved map[string]ReservedQuantity `json:"systemReserved,omitempty"`

	// KubeReserved reserves resources for the kubelet and container runtime, taken out of the
	// node's allocatable capacity. Keys are cpu, memory, ephemeral-storage and pid; values are
	// non-negative quantities. When omitted, Joiner computes cpu, memory and ephemeral-storage
	// reservations from the instance type the way the EKS AMIs do.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage', 'pid'])",message="spec.kubelet.kubeReserved keys must be cpu, memory, ephemeral-storage or pid: remove or rename the other keys"
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0')))",message="spec.kubelet.kubeReserved values must be non-negative quantities such as 100m, 200Mi or 1Gi: correct the value"
	// +kubebuilder:validation:MaxProperties=4
	// +optional
	KubeReserved map[string]ReservedQuantity `json:"kubeReserved,omitempty"`

	// EvictionHard sets thresholds at which the kubelet evicts pods at once. Keys are the
	// eviction signals memory.available, nodefs.available, nodefs.inodesFree, imagefs.available,
	// imagefs.inodesFree and pid.available; values are quantities (500Mi) or percentages (10%).
	// The memory.available threshold is also subtracted from allocatable memory.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])",message="spec.kubelet.evictionHard keys must be memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree or pid.available: remove or rename the other keys"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].endsWith('%') || (isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0'))))",message="spec.kubelet.evictionHard values must be non-negative quantities such as 500Mi, or percentages such as 10%: correct the value"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !self[k].endsWith('%') || self[k].matches('^([1-9]?[0-9]([.][0-9]+)?|100)%$'))",message="spec.kubelet.evictionHard percentages must be between 0% and 100%, such as 10% or 7.5%: correct the value"
	// +kubebuilder:validation:MaxProperties=6
	// +optional
	EvictionHard map[string]EvictionThreshold `json:"evictionHard,omitempty"`

	// EvictionSoft sets thresholds at which the kubelet evicts pods once the signal has stayed
	// past the threshold for the signal's evictionSoftGracePeriod. Same keys and values as
	// evictionHard; every key needs a matching evictionSoftGracePeriod entry.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])",message="spec.kubelet.evictionSoft keys must be memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree or pid.available: remove or rename the other keys"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].endsWith('%') || (isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0'))))",message="spec.kubelet.evictionSoft values must be non-negative quantities such as 500Mi, or percentages such as 10%: correct the value"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !self[k].endsWith('%') || self[k].matches('^([1-9]?[0-9]([.][0-9]+)?|100)%$'))",message="spec.kubelet.evictionSoft percentages must be between 0% and 100%, such as 10% or 7.5%: correct the value"
	// +kubebuilder:validation:MaxProperties=6
	// +optional
	EvictionSoft map[string]EvictionThreshold `json:"evictionSoft,omitempty"`

	// EvictionSoftGracePeriod is, per evictionSoft signal, how long the threshold must be exceeded
	// before pods are evicted, as a duration such as 1m30s. Every key needs a matching
	// evictionSoft entry.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])",message="spec.kubelet.evictionSoftGracePeriod keys must be memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree or pid.available: remove or rename the other keys"
	// +kubebuilder:validation:MaxProperties=6
	// +optional
	EvictionSoftGracePeriod map[string]metav1.Duration `json:"evictionSoftGracePeriod,omitempty"`

	// EvictionMaxPodGracePeriod is the longest termination grace period, in seconds, the kubelet
	// grants a pod evicted for a soft threshold. A pod asking for less gets what it asks for.
	// +optional
	EvictionMaxPodGracePeriod *int32 `json:"evictionMaxPodGracePeriod,omitempty"`

	// ImageGCHighThresholdPercent is the disk usage, in percent (0 to 100), above which the
	// kubelet always garbage-collects unused images. It must be greater than
	// imageGCLowThresholdPercent.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ImageGCHighThresholdPercent *int32 `json:"imageGCHighThresholdPercent,omitempty"`

	// ImageGCLowThresholdPercent is the disk usage, in percent (0 to 100), that image garbage
	// collection frees space down to; below it, collection never runs. It must be less than
	// imageGCHighThresholdPercent.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ImageGCLowThresholdPercent *int32 `json:"imageGCLowThresholdPercent,omitempty"`

	// CPUCFSQuota sets whether CPU limits are enforced with CFS quota. Defaults to the kubelet's
	// default, true. Setting false makes CPU limits advisory.
	// +optional
	CPUCFSQuota *bool `json:"cpuCFSQuota,omitempty"`

	// Other holds the fields of spec.kubelet not declared above, by their upstream JSON names
	// (registryPullQPS, containerLogMaxSize, featureGates...), each as its JSON value. It is
	// read and written inline with the declared fields (see MarshalJSON), not as a field of its
	// own.
	Other map[string]apiextensionsv1.JSON `json:"-"`
}

// ReservedQuantity is a value of kubelet systemReserved or kubeReserved: a non-negative resource
// quantity as Kubernetes spells it (250m, 1, 512Mi, 10Gi). It is a named type only so that the CRD
// can bound its length, which keeps the cost of the CEL rules that parse it low.
//
// +kubebuilder:validation:MaxLength=32
type ReservedQuantity string

// EvictionThreshold is a value of kubelet evictionHard or evictionSoft: a non-negative resource
// quantity (500Mi, 10Gi) or a percentage of the signal's capacity (10%, 7.5%). It is a named type
// only so that the CRD can bound its length, which keeps the cost of the CEL rules that parse it
// low.
//
// +kubebuilder:validation:MaxLength=32
type EvictionThreshold string

// MetadataOptions configures the EC2 Instance Metadata Service of launched instances.
type MetadataOptions struct {
	// HTTPEndpoint turns the metadata service on ("enabled") or off ("disabled"). Nodes of the AL2,
	// AL2023 and Bottlerocket families read their configuration from it while booting, so
	// "disabled" only suits Custom AMIs that do not.
	// +kubebuilder:default=enabled
	// +kubebuilder:validation:Enum:={enabled,disabled}
	// +optional
	HTTPEndpoint *string `json:"httpEndpoint,omitempty"`

	// HTTPProtocolIPv6 serves the metadata service on its IPv6 address (fd00:ec2::254) as well,
	// "enabled" or "disabled". Enable it for nodes that reach the metadata service over IPv6, as
	// in IPv6 clusters.
	// +kubebuilder:default=disabled
	// +kubebuilder:validation:Enum:={enabled,disabled}
	// +optional
	HTTPProtocolIPv6 *string `json:"httpProtocolIPv6,omitempty"`

	// HTTPPutResponseHopLimit is the IP hop limit of the metadata service's token responses, 1 to
	// 64. With 1, only processes in the host network namespace get a token; containers on the pod
	// network need 2.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	HTTPPutResponseHopLimit *int64 `json:"httpPutResponseHopLimit,omitempty"`

	// HTTPTokens is "required" to accept only IMDSv2 (session token) requests, or "optional" to
	// also answer IMDSv1 requests without a token. Keep "required" unless a workload on the node
	// cannot use IMDSv2.
	// +kubebuilder:default=required
	// +kubebuilder:validation:Enum:={required,optional}
	// +optional
	HTTPTokens *string `json:"httpTokens,omitempty"`
}

// BlockDeviceMapping attaches one volume to launched instances.
type BlockDeviceMapping struct {
	// DeviceName is the device the volume is exposed as, for example /dev/xvda. The root volume's
	// name depends on the AMI (AL2 and AL2023 use /dev/xvda; Bottlerocket's OS volume is /dev/xvda
	// and its data volume /dev/xvdb).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	DeviceName *string `json:"deviceName,omitempty"`

	// RootVolume marks the volume holding the kubelet and container runtime state; its size is
	// the node's ephemeral-storage capacity in scheduling. At most one mapping may set it.
	// +optional
	RootVolume bool `json:"rootVolume,omitempty"`

	// EBS describes the EBS volume created for this device.
	// +optional
	EBS *BlockDevice `json:"ebs,omitempty"`
}

// BlockDevice is an EBS volume created with each instance.
//
// +kubebuilder:validation:XValidation:rule="has(self.snapshotID) || has(self.volumeSize)",message="spec.blockDeviceMappings[].ebs must set volumeSize or snapshotID: add volumeSize (for example 20Gi), or a snapshotID to create the volume from"
// +kubebuilder:validation:XValidation:rule="!has(self.volumeInitializationRate) || has(self.snapshotID)",message="spec.blockDeviceMappings[].ebs.volumeInitializationRate only applies to volumes created from a snapshot: set snapshotID or remove volumeInitializationRate"
type BlockDevice struct {
	// DeleteOnTermination deletes the volume when the instance terminates. EC2 defaults it to true
	// for volumes created at launch. Set false to keep the volume, which Joiner will then never
	// clean up.
	// +optional
	DeleteOnTermination *bool `json:"deleteOnTermination,omitempty"`

	// Encrypted encrypts the volume, with kmsKeyID or else the account's default EBS key. A volume
	// created from an encrypted snapshot is always encrypted.
	// +optional
	Encrypted *bool `json:"encrypted,omitempty"`

	// IOPS is the provisioned I/O operations per second, for gp3, io1 and io2 volumes only. gp3
	// includes 3000 at no charge; the allowed range depends on the volume type and size.
	// +optional
	IOPS *int64 `json:"iops,omitempty"`

	// KMSKeyID is the KMS key (ID, alias or ARN) used to encrypt the volume. The IAM identity
	// Joiner runs as must be allowed to use the key, or launches fail.
	// +optional
	KMSKeyID *string `json:"kmsKeyID,omitempty"`

	// SnapshotID is an EBS snapshot (snap-0123456789abcdef0) to create the volume from. With a
	// snapshot, volumeSize may be omitted to use the snapshot's size.
	// +kubebuilder:validation:Pattern="^snap-[0-9a-z]+$"
	// +optional
	SnapshotID *string `json:"snapshotID,omitempty"`

	// Throughput is the provisioned throughput in MiB/s, for gp3 volumes only (125 is included).
	// +optional
	Throughput *int64 `json:"throughput,omitempty"`

	// VolumeInitializationRate is the rate, in MiB/s from 100 to 300, at which EBS fetches the
	// snapshot's blocks, so a volume created from snapshotID is fully readable after a predictable
	// time. Requires snapshotID.
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=300
	// +optional
	VolumeInitializationRate *int32 `json:"volumeInitializationRate,omitempty"`

	// VolumeSize is the size of the volume: a whole number followed by Gi or G (for example 20Gi
	// or 100G), or Ti or T (1Ti), at most 64Ti (65536Gi, 70368G, 70T), the largest EBS volume.
	// Each volume type has its own minimum and maximum (gp2 and gp3 1Gi, io1 and io2 4Gi, st1
	// and sc1 125Gi, standard at most 1Ti), which EC2 enforces at launch. Either volumeSize or
	// snapshotID is required.
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-6])Gi|(?:[1-9][0-9]{0,3}|[1-6][0-9]{4}|70[0-2][0-9]{2}|703[0-5][0-9]|7036[0-8])G|(?:[1-9]|[1-5][0-9]|6[0-4])Ti|(?:[1-9]|[1-6][0-9]|70)T)$')",message="spec.blockDeviceMappings[].ebs.volumeSize must be a whole number of Gi, G, Ti or T between 1Gi and 64Ti (for example 20Gi, 100G or 1Ti): correct the size"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=8
	// +optional
	VolumeSize *resource.Quantity `json:"volumeSize,omitempty"`

	// VolumeType is the EBS volume type: standard, io1, io2, gp2, sc1, st1 or gp3. EC2 defaults to
	// gp2; gp3 is cheaper for the same baseline performance.
	// +kubebuilder:validation:Enum:={standard,io1,io2,gp2,sc1,st1,gp3}
	// +optional
	VolumeType *string `json:"volumeType,omitempty"`
}

// InstanceStorePolicy says how Joiner sets up local NVMe instance-store disks.
//
// +kubebuilder:validation:Enum:={RAID0}
type InstanceStorePolicy string

const (
	// InstanceStorePolicyRAID0 stripes every instance-store disk into one RAID-0 array and moves
	// the kubelet and container runtime state onto it.
	InstanceStorePolicyRAID0 InstanceStorePolicy = "RAID0"
)
