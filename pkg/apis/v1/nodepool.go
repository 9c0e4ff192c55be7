package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePoolSpec is what an operator asks of a group of nodes: what they may be, how many resources
// they may add up to, and when Joiner may take them away.
type NodePoolSpec struct {
	// Template of the NodeClaims (and so the nodes) this NodePool creates.
	// +required
	Template NodeClaimTemplate `json:"template"`
	// Disruption says when Joiner may remove or replace this NodePool's nodes.
	// +kubebuilder:default:={consolidateAfter: "0s"}
	// +optional
	Disruption Disruption `json:"disruption"`
	// Limits cap the total resources of this NodePool's nodes (launched and launching), such as
	// cpu: 1000 or memory: 1000Gi. Joiner never launches a node that would exceed them.
	// +optional
	Limits Limits `json:"limits,omitempty"`
	// Weight orders NodePools: pods go to the highest weight NodePool they fit. From 1 to 100;
	// unset is the lowest.
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=100
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// Limits are caps on the summed capacity of a NodePool's nodes, by resource name.
type Limits corev1.ResourceList

// ConsolidationPolicy says which nodes consolidation may remove.
// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized;Balanced
type ConsolidationPolicy string

// Consolidation policies.
const (
	// ConsolidationPolicyWhenEmpty removes nodes with no pods other than daemonset pods.
	ConsolidationPolicyWhenEmpty ConsolidationPolicy = "WhenEmpty"
	// ConsolidationPolicyWhenEmptyOrUnderutilized also removes or replaces nodes whose pods fit
	// elsewhere, or on a cheaper node.
	ConsolidationPolicyWhenEmptyOrUnderutilized ConsolidationPolicy = "WhenEmptyOrUnderutilized"
	// ConsolidationPolicyBalanced consolidates as WhenEmptyOrUnderutilized, but takes a move that
	// deletes or replaces nodes with pods only when its savings, as a fraction of the NodePool's
	// cost, are at least half its disruption, as a fraction of the NodePool's (Karpenter v1.14's
	// Balanced with its default threshold of 2).
	ConsolidationPolicyBalanced ConsolidationPolicy = "Balanced"
)

// DisruptionReason is why Joiner disrupts a node, as budgets select it.
// +kubebuilder:validation:Enum=Underutilized;Empty;Drifted
type DisruptionReason string

// Disruption reasons that a budget may name.
const (
	DisruptionReasonUnderutilized DisruptionReason = "Underutilized"
	DisruptionReasonEmpty         DisruptionReason = "Empty"
	DisruptionReasonDrifted       DisruptionReason = "Drifted"
)

// Disruption says when Joiner may voluntarily remove or replace a NodePool's nodes.
type Disruption struct {
	// ConsolidateAfter is how long a node must have had no pod scheduled or removed before
	// consolidation considers it, such as 30s or 10m, or Never to turn consolidation off.
	// +kubebuilder:default:="0s"
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	// +optional
	ConsolidateAfter NillableDuration `json:"consolidateAfter,omitzero"`
	// ConsolidationPolicy is WhenEmpty (remove only empty nodes), WhenEmptyOrUnderutilized (also
	// remove or replace nodes whose pods fit elsewhere more cheaply) or Balanced (those moves only
	// when they save enough for the pods they disrupt).
	// +kubebuilder:default:=WhenEmptyOrUnderutilized
	// +optional
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	// Budgets limit how many nodes may be disrupted at once. The most restrictive active budget
	// applies; with none, at most 10% of the NodePool's nodes.
	// +kubebuilder:default:={{nodes: "10%"}}
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule="self.all(b, has(b.schedule) == has(b.duration))",message="a budget's schedule and duration go together: set both (for example schedule: \"0 9 * * 1-5\" with duration: 8h) or neither"
	// +optional
	Budgets []Budget `json:"budgets,omitempty"`
}

// Budget caps the number of nodes being disrupted, optionally only for some reasons and only
// during a recurring window.
type Budget struct {
	// Reasons this budget applies to (Underutilized, Empty, Drifted); unset means all reasons.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Reasons []DisruptionReason `json:"reasons,omitempty"`
	// Nodes is how many of the NodePool's nodes may be disrupted at once: a number such as 5, or a
	// percentage of the NodePool's nodes such as 10%. 0 stops disruption.
	// +kubebuilder:default:="10%"
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="self.matches('^((100|[0-9]{1,2})%|[0-9]+)$')",messageExpression="'nodes ' + self + ' is neither a whole number of nodes (for example 5) nor a percentage from 0% to 100% (for example 10%)'"
	// +optional
	Nodes string `json:"nodes"`
	// Schedule is when the budget's window starts, in cron syntax with five fields (minute hour
	// day-of-month month day-of-week, in UTC) or a macro such as @daily. Needs duration.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+)$')",messageExpression="'schedule ' + self + ' is not a cron expression: use five fields (minute hour day-of-month month day-of-week, for example \"0 9 * * 1-5\") or a macro such as @daily'"
	// +optional
	Schedule *string `json:"schedule,omitempty"`
	// Duration of the window that starts at each schedule time, in hours and minutes such as 8h or
	// 1h30m. Needs schedule.
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Pattern=`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// NodePoolStatus is what Joiner observed of a NodePool.
type NodePoolStatus struct {
	// Resources is the summed capacity of the NodePool's nodes, launched and launching, which
	// limits are checked against; "nodes" counts them.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Nodes is the number of the NodePool's NodeClaims.
	// +optional
	Nodes *int64 `json:"nodes,omitempty"`
	// Conditions: NodeClassReady, ValidationSucceeded, NodeRegistrationHealthy and Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodePool condition types.
const (
	// ConditionTypeNodeClassReady is the Ready condition of the NodePool's EC2NodeClass.
	ConditionTypeNodeClassReady = "NodeClassReady"
	// ConditionTypeValidationSucceeded reports checks beyond admission, such as requirements that
	// no instance type can meet.
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
	// ConditionTypeNodeRegistrationHealthy is False when the NodePool's recent launches fail to
	// register, with the cause Joiner found.
	ConditionTypeNodeRegistrationHealthy = "NodeRegistrationHealthy"
)

// NodePool is a group of nodes that Joiner launches and removes on demand: the nodes' template,
// how large the group may grow, and when its nodes may be disrupted.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodepools,scope=Cluster,categories=karpenter,shortName={np,nps}
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.template.spec.nodeClassRef.name",description="The EC2NodeClass of the nodes"
// +kubebuilder:printcolumn:name="Nodes",type="integer",JSONPath=".status.nodes",description="How many nodes the NodePool has"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the NodePool can launch nodes"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight",priority=1
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.resources.cpu",priority=1
// +kubebuilder:printcolumn:name="Memory",type="string",JSONPath=".status.resources.memory",priority=1
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NodePoolSpec `json:"spec"`
	// +optional
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolList is a list of NodePools.
//
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}
