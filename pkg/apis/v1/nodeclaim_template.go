package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSelectorOperator is the operator of a requirement: the Kubernetes node selector operators
// plus Gte and Lte, the inclusive forms of Gt and Lt.
// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
type NodeSelectorOperator string

// Requirement operators. Gt, Lt, Gte and Lte compare the label value as a non-negative integer.
const (
	NodeSelectorOpIn           NodeSelectorOperator = "In"
	NodeSelectorOpNotIn        NodeSelectorOperator = "NotIn"
	NodeSelectorOpExists       NodeSelectorOperator = "Exists"
	NodeSelectorOpDoesNotExist NodeSelectorOperator = "DoesNotExist"
	NodeSelectorOpGt           NodeSelectorOperator = "Gt"
	NodeSelectorOpLt           NodeSelectorOperator = "Lt"
	NodeSelectorOpGte          NodeSelectorOperator = "Gte"
	NodeSelectorOpLte          NodeSelectorOperator = "Lte"
)

// NodeSelectorRequirementWithMinValues is a node selector requirement on a label key, optionally
// with the least number of distinct values that the launch decision must keep open (minValues),
// for example at least 5 instance types so that spot capacity has room to choose.
//
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : true",messageExpression="'operator ' + self.operator + ' on key ' + self.key + ' needs at least one entry in values'"
// +kubebuilder:validation:XValidation:rule="self.operator in ['Exists', 'DoesNotExist'] ? (!has(self.values) || size(self.values) == 0) : true",messageExpression="'operator ' + self.operator + ' on key ' + self.key + ' takes no values: remove values, or use In or NotIn'"
// +kubebuilder:validation:XValidation:rule="self.operator in ['Gt', 'Lt', 'Gte', 'Lte'] ? (has(self.values) && size(self.values) == 1 && self.values[0].matches('^[0-9]{1,18}$')) : true",messageExpression="'operator ' + self.operator + ' on key ' + self.key + ' takes exactly one non-negative integer value, for example values: [\"5\"]'"
// +kubebuilder:validation:XValidation:rule="self.operator == 'In' && has(self.minValues) ? (has(self.values) && size(self.values) >= self.minValues) : true",messageExpression="'minValues on key ' + self.key + ' is larger than the number of values listed for operator In: list at least minValues values or lower minValues'"
// +kubebuilder:validation:XValidation:rule="self.operator == 'DoesNotExist' ? !has(self.minValues) : true",messageExpression="'minValues on key ' + self.key + ' cannot be used with operator DoesNotExist: remove minValues'"
// +kubebuilder:validation:XValidation:rule="self.key != 'kubernetes.io/hostname'",message="key kubernetes.io/hostname is restricted: a hostname is not known before launch; use a topology spread or anti-affinity on the pods instead"
// +kubebuilder:validation:XValidation:rule="self.key.startsWith('karpenter.sh/') ? self.key in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] : true",messageExpression="'key ' + self.key + ' is in the restricted domain karpenter.sh: only karpenter.sh/capacity-type and karpenter.sh/nodepool may be used; use a label of your own domain'"
// +kubebuilder:validation:XValidation:rule="!self.key.contains('/') || !self.key.find('^[^/]+').endsWith('karpenter.k8s.aws') || self.key in ['karpenter.k8s.aws/instance-category', 'karpenter.k8s.aws/instance-family', 'karpenter.k8s.aws/instance-generation', 'karpenter.k8s.aws/instance-size', 'karpenter.k8s.aws/instance-cpu', 'karpenter.k8s.aws/instance-cpu-manufacturer', 'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz', 'karpenter.k8s.aws/instance-memory', 'karpenter.k8s.aws/instance-ebs-bandwidth', 'karpenter.k8s.aws/instance-network-bandwidth', 'karpenter.k8s.aws/instance-hypervisor', 'karpenter.k8s.aws/instance-encryption-in-transit-supported', 'karpenter.k8s.aws/instance-local-nvme', 'karpenter.k8s.aws/instance-gpu-name', 'karpenter.k8s.aws/instance-gpu-manufacturer', 'karpenter.k8s.aws/instance-gpu-count', 'karpenter.k8s.aws/instance-gpu-memory', 'karpenter.k8s.aws/instance-accelerator-name', 'karpenter.k8s.aws/instance-accelerator-manufacturer', 'karpenter.k8s.aws/instance-accelerator-count', 'karpenter.k8s.aws/instance-capability-flex', 'karpenter.k8s.aws/instance-tenancy', 'karpenter.k8s.aws/capacity-reservation-id', 'karpenter.k8s.aws/capacity-reservation-type', 'karpenter.k8s.aws/ec2nodeclass']",messageExpression="self.key in ['karpenter.k8s.aws/capacity-reservation-interruptible', 'karpenter.k8s.aws/nitro-sandbox', 'karpenter.k8s.aws/placement-group-id', 'karpenter.k8s.aws/placement-group-partition'] ? 'key ' + self.key + ' is a Karpenter label Joiner does not set on its nodes, so a requirement on it could not be met: remove the requirement' : 'key ' + self.key + ' is in the restricted domain karpenter.k8s.aws and is not one of its well-known labels: use one such as karpenter.k8s.aws/instance-family, or a label of your own domain'"
// +kubebuilder:validation:XValidation:rule="!self.key.contains('/') || !self.key.find('^[^/]+').endsWith('kubernetes.io') || self.key in ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'kubernetes.io/arch', 'kubernetes.io/os', 'beta.kubernetes.io/arch', 'beta.kubernetes.io/os', 'beta.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region'] || self.key.find('^[^/]+').endsWith('node.kubernetes.io') || self.key.find('^[^/]+').endsWith('node-restriction.kubernetes.io')",messageExpression="'key ' + self.key + ' is in the restricted domain kubernetes.io: use a well-known label such as topology.kubernetes.io/zone, kubernetes.io/arch or node.kubernetes.io/instance-type, or a label of your own domain'"
// +kubebuilder:validation:XValidation:rule="!self.key.contains('/') || !self.key.find('^[^/]+').endsWith('k8s.io') || self.key.find('^[^/]+').endsWith('kops.k8s.io')",messageExpression="'key ' + self.key + ' is in the restricted domain k8s.io: use a label of your own domain'"
type NodeSelectorRequirementWithMinValues struct {
	// Key is the node label the requirement is on.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	// +required
	Key string `json:"key"`
	// Operator relates the key to the values: In, NotIn, Exists, DoesNotExist, and the integer
	// comparisons Gt, Lt, Gte and Lte.
	// +required
	Operator NodeSelectorOperator `json:"operator"`
	// Values of the label. In and NotIn need at least one; Exists and DoesNotExist take none; Gt,
	// Lt, Gte and Lte take exactly one non-negative integer.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
	// MinValues is the least number of distinct values of this key that a launch must keep among
	// its instance-type options. With operator In it may not exceed the number of values listed.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	MinValues *int `json:"minValues,omitempty"`
}

// NodeClassReference names the provider-specific class of a node: for Joiner, an EC2NodeClass.
type NodeClassReference struct {
	// Kind of the node class. Joiner launches EC2 capacity, so this is EC2NodeClass.
	// +kubebuilder:validation:XValidation:rule="self == 'EC2NodeClass'",messageExpression="'kind ' + self + ' is not a node class Joiner knows: use kind: EC2NodeClass'"
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`
	// Name of the EC2NodeClass.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="name may not be empty: set it to the metadata.name of an EC2NodeClass"
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// Group of the node class: karpenter.k8s.aws.
	// +kubebuilder:validation:XValidation:rule="self == 'karpenter.k8s.aws'",messageExpression="'group ' + self + ' is not a node class group Joiner knows: use group: karpenter.k8s.aws'"
	// +kubebuilder:validation:MaxLength=253
	// +required
	Group string `json:"group"`
}

// NodeClaimTemplate is the template of the NodeClaims that a NodePool creates.
type NodeClaimTemplate struct {
	// Metadata given to every NodeClaim and its Node.
	// +optional
	ObjectMeta `json:"metadata,omitempty"`
	// Spec of every NodeClaim made from this template.
	// +required
	Spec NodeClaimTemplateSpec `json:"spec"`
}

// ObjectMeta is the subset of object metadata that a template may set.
type ObjectMeta struct {
	// Labels put on every node of the NodePool, which pods may select with nodeSelector or node
	// affinity. Labels in the kubernetes.io, k8s.io, karpenter.sh and karpenter.k8s.aws domains
	// are reserved for the well-known labels that Joiner or the kubelet set. Values follow the
	// Kubernetes label syntax, at most 63 characters (that schema rule is added by hack/crdpatch:
	// markers cannot reach the values of a map).
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 316 && k.matches('^(([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\\\\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*)/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$'))",message="label keys must be qualified names: an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' or '.' (for example example.com/team)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'karpenter.sh/nodepool')",message="label karpenter.sh/nodepool is restricted: Joiner sets it to the NodePool's name; remove it"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != 'kubernetes.io/hostname')",message="label kubernetes.io/hostname is restricted: the kubelet sets it; remove it"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('karpenter.sh/') || k == 'karpenter.sh/capacity-type')",message="labels in the karpenter.sh domain are restricted: Joiner sets them; use a label of your own domain (for example example.com/team)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('karpenter.k8s.aws/'))",message="labels in the karpenter.k8s.aws domain are restricted: Joiner sets them from the instance type; select on them with requirements instead"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.contains('/') || !k.find('^[^/]+').endsWith('kubernetes.io') || k in ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'kubernetes.io/arch', 'kubernetes.io/os', 'node.kubernetes.io/windows-build'] || k.find('^[^/]+').endsWith('node.kubernetes.io') || k.find('^[^/]+').endsWith('node-restriction.kubernetes.io'))",message="labels in the kubernetes.io domain are restricted: use requirements on well-known labels, or a label of your own domain (for example example.com/team)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.contains('/') || !k.find('^[^/]+').endsWith('k8s.io') || k.find('^[^/]+').endsWith('kops.k8s.io'))",message="labels in the k8s.io domain are restricted: use a label of your own domain (for example example.com/team)"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations put on every NodeClaim and its Node.
	// +kubebuilder:validation:MaxProperties=100
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec describes the nodes a NodePool may launch.
type NodeClaimTemplateSpec struct {
	// Taints put on every node. Pods must tolerate them to be scheduled there.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="taint effect must be one of NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.key != 'karpenter.sh/unregistered')",message="taint karpenter.sh/unregistered is added and removed by Joiner itself: remove it from taints"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.key.size() > 0 && t.key.size() <= 316)",message="taint keys must be 1 to 316 characters: an optional DNS prefix and '/', then a name (for example example.com/dedicated)"
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are taints a node starts with that some agent (a CNI such as Cilium, a GPU
	// driver) removes when it is ready. Joiner registers nodes with them, ignores them when
	// deciding where pods fit, and waits for them to be removed before the node is Initialized.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="taint effect must be one of NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.key != 'karpenter.sh/unregistered')",message="taint karpenter.sh/unregistered is added and removed by Joiner itself: remove it from startupTaints"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.key.size() > 0 && t.key.size() <= 316)",message="taint keys must be 1 to 316 characters: an optional DNS prefix and '/', then a name (for example example.com/dedicated)"
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements narrow the instance types, zones, capacity types and architectures a node may
	// have, as node selector requirements on well-known or template labels.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(r, r.key != 'karpenter.sh/nodepool')",message="requirement key karpenter.sh/nodepool is restricted: a NodePool's nodes always carry its own name; remove the requirement"
	// +required
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// NodeClassRef names the EC2NodeClass with the AWS settings (AMI, subnets, role, userData) of
	// these nodes. Its group and kind cannot change once set.
	// +kubebuilder:validation:XValidation:rule="self.group == oldSelf.group",message="nodeClassRef.group is immutable: create a new NodePool to change it"
	// +kubebuilder:validation:XValidation:rule="self.kind == oldSelf.kind",message="nodeClassRef.kind is immutable: create a new NodePool to change it"
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// TerminationGracePeriod is the longest a node may take to drain once its deletion starts,
	// after which remaining pods are deleted (PDBs and karpenter.sh/do-not-disrupt no longer hold
	// it). Unset means a drain may wait for ever.
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
	// ExpireAfter is how long a node may live before Joiner replaces it, such as 720h, or Never.
	// +kubebuilder:default:="720h"
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitzero"`
}
