package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaimSpec is one node that Joiner has decided to launch: the NodePool template's spec,
// narrowed to the instance types that fit the pods it was made for, plus those pods' requests.
// It never changes after creation; a different node is a different NodeClaim.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: a NodeClaim stands for one launch; delete it and let Joiner create another"
type NodeClaimSpec struct {
	// Taints the node registers with.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="taint effect must be one of NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.key.size() > 0 && t.key.size() <= 316)",message="taint keys must be 1 to 316 characters: an optional DNS prefix and '/', then a name (for example example.com/dedicated)"
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints the node registers with and some agent removes when it is ready.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="taint effect must be one of NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.key.size() > 0 && t.key.size() <= 316)",message="taint keys must be 1 to 316 characters: an optional DNS prefix and '/', then a name (for example example.com/dedicated)"
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements the launched instance must meet (instance types, zones, capacity types...).
	// +kubebuilder:validation:MaxItems=100
	// +required
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// Resources the node must have room for: the requests of the pods it was made for.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty"`
	// NodeClassRef names the EC2NodeClass the node is launched with.
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// TerminationGracePeriod is the longest a drain of this node may take.
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
	// ExpireAfter is how long the node may live before Joiner replaces it, or Never.
	// +kubebuilder:default:="720h"
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitzero"`
}

// ResourceRequirements are the resources a NodeClaim must provide.
type ResourceRequirements struct {
	// Requests is the least capacity the node must have, by resource name.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClaimStatus is what Joiner observed of a NodeClaim's instance and node.
type NodeClaimStatus struct {
	// NodeName is the name of the Node the instance registered as.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// ProviderID of the instance, such as aws:///us-west-2a/i-0123456789abcdef0.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// ImageID is the AMI the instance was launched from.
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// Capacity of the launched instance.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Allocatable is the capacity left for pods after system and kubelet reservations.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Conditions: Launched, Registered, Initialized, Ready, and the disruption signals Drifted,
	// Consolidatable, Drained, DisruptionReason and others.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastPodEventTime is when a pod was last scheduled on or removed from the node; consolidation
	// waits consolidateAfter from it.
	// +optional
	LastPodEventTime metav1.Time `json:"lastPodEventTime,omitzero"`
}

// NodeClaim condition types.
const (
	// ConditionTypeLaunched is True once the cloud provider has created the instance.
	ConditionTypeLaunched = "Launched"
	// ConditionTypeRegistered is True once a Node with the instance's providerID has joined the
	// cluster with the karpenter.sh/unregistered taint, and Joiner has synced labels and taints.
	ConditionTypeRegistered = "Registered"
	// ConditionTypeInitialized is True once the node is Ready, its startup taints are gone and its
	// requested extended resources are advertised.
	ConditionTypeInitialized = "Initialized"
	// ConditionTypeDrifted is True when the node no longer matches its NodePool or EC2NodeClass.
	ConditionTypeDrifted = "Drifted"
	// ConditionTypeConsolidatable is True when the node has been quiet for consolidateAfter.
	ConditionTypeConsolidatable = "Consolidatable"
	// ConditionTypeDrained is True once every evictable pod has left the node during termination.
	ConditionTypeDrained = "Drained"
	// ConditionTypeVolumesDetached is True once the node's volume attachments are gone.
	ConditionTypeVolumesDetached = "VolumesDetached"
	// ConditionTypeInstanceTerminating is True once the instance's deletion has been requested.
	ConditionTypeInstanceTerminating = "InstanceTerminating"
	// ConditionTypeConsistentStateFound is False when the node and its NodeClaim disagree (for
	// example on capacity) in a way Joiner cannot reconcile.
	ConditionTypeConsistentStateFound = "ConsistentStateFound"
	// ConditionTypeDisruptionReason names, in its reason, why Joiner is disrupting the node.
	ConditionTypeDisruptionReason = "DisruptionReason"
)

// NodeClaim is one node Joiner launches: its requirements and the requests of the pods it was made
// for, and in status the instance and Node it became.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodeclaims,scope=Cluster,categories=karpenter,shortName={nc,ncs}
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".metadata.labels.node\\.kubernetes\\.io/instance-type",description="Instance type"
// +kubebuilder:printcolumn:name="Capacity",type="string",JSONPath=".metadata.labels.karpenter\\.sh/capacity-type",description="spot, on-demand or reserved"
// +kubebuilder:printcolumn:name="Zone",type="string",JSONPath=".metadata.labels.topology\\.kubernetes\\.io/zone"
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".status.nodeName"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="ImageID",type="string",JSONPath=".status.imageID",priority=1
// +kubebuilder:printcolumn:name="ID",type="string",JSONPath=".status.providerID",priority=1
// +kubebuilder:printcolumn:name="NodePool",type="string",JSONPath=".metadata.labels.karpenter\\.sh/nodepool",priority=1
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.nodeClassRef.name",priority=1
// +kubebuilder:printcolumn:name="Drifted",type="string",JSONPath=".status.conditions[?(@.type==\"Drifted\")].status",priority=1
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NodeClaimSpec `json:"spec"`
	// +optional
	Status NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimList is a list of NodeClaims.
//
// +kubebuilder:object:root=true
type NodeClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeClaim `json:"items"`
}
