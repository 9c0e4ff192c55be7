package scheduling

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// MaxInstanceTypes is the most instance-type options a NodeClaim of the plan carries.
const MaxInstanceTypes = 60

// Offering is one way to buy an instance type: a zone and a capacity type at a price.
type Offering struct {
	Zone string
	// ZoneID is the zone's ID (topology.k8s.aws/zone-id), when the cloud has one: constraints on
	// it are read as constraints on Zone.
	ZoneID       string
	CapacityType string
	// Price in dollars per hour.
	Price float64
	// Available is false when the offering is known to have no capacity; it is never chosen.
	Available bool
}

// InstanceType is a launchable machine shape.
type InstanceType struct {
	// Name is also the node.kubernetes.io/instance-type label value.
	Name string
	// Labels are the single-valued labels every node of this type carries, such as
	// kubernetes.io/arch and karpenter.k8s.aws/instance-family. Zone and capacity type come from
	// the offerings, the instance-type label from Name; neither needs to be listed.
	Labels map[string]string
	// Capacity is counted against NodePool limits.
	Capacity corev1.ResourceList
	// Allocatable is what pods may request (capacity minus system reservations).
	Allocatable corev1.ResourceList
	// Offerings in preference order for ties.
	Offerings []Offering
}

// ResourceNodes is the NodePool limit on its number of nodes (`limits: {nodes: "10"}`, as
// Karpenter counts it): each node, existing, in flight or new, counts one.
const ResourceNodes corev1.ResourceName = "nodes"

// Node is an existing or in-flight node that pods may be placed on.
type Node struct {
	Name string
	// NodePool that owns the node ("" for nodes Joiner does not manage). Its Capacity counts
	// against that NodePool's limits.
	NodePool string
	Labels   map[string]string
	// Taints of the node (startup taints should be left out by the caller).
	Taints      []corev1.Taint
	Allocatable corev1.ResourceList
	Capacity    corev1.ResourceList
	// Pods bound to the node, daemonset pods included.
	Pods []*corev1.Pod
}

// Input is everything Solve reads. Solve does not modify it, and the Plan points into it.
type Input struct {
	// Pods to schedule.
	Pods []*corev1.Pod
	// NodePools that may launch nodes, in any order (Solve orders them by weight, then name).
	NodePools []*v1.NodePool
	// InstanceTypes that every NodePool may launch, subject to its requirements.
	InstanceTypes []*InstanceType
	// Nodes that exist or are being launched.
	Nodes []*Node
	// DaemonSetPods are one pod per DaemonSet; each new node reserves the requests of those
	// that tolerate its NodePool's taints and whose node affinity its requirements allow.
	DaemonSetPods []*corev1.Pod
	// NodeCosts are, per NodePool name, what every new node of the pool costs per hour beyond
	// its instance (its root volume, per-host licences of agents it runs), in dollars. The
	// solver minimises instance price plus this cost, so a plan of many small nodes pays for
	// each; the cheapest offering to launch does not depend on it.
	NodeCosts map[string]float64
	// MinValuesPolicy is how minValues binds new NodeClaims ("": Strict).
	MinValuesPolicy MinValuesPolicy
	// PreferencePolicy is how preferences are treated ("": Respect).
	PreferencePolicy PreferencePolicy
	// DefaultSpread, when set, gives pods without topology spread constraints the cluster's
	// default ones.
	DefaultSpread *DefaultSpread
}

// Placement is a pod placed on an existing node.
type Placement struct {
	Pod  *corev1.Pod
	Node string
}

// Launch is the offering a NodeClaim is priced at: the cheapest available one over its options.
type Launch struct {
	InstanceType string
	Zone         string
	CapacityType string
	Price        float64
}

// NodeClaim is a node the plan launches.
type NodeClaim struct {
	// Name is a placeholder that also serves as the node's hostname in the simulation.
	Name     string
	NodePool string
	// Requirements are the NodePool's, narrowed by the pods' and pinned topology domains, with
	// node.kubernetes.io/instance-type In InstanceTypes.
	Requirements []v1.NodeSelectorRequirementWithMinValues
	Labels       map[string]string
	Taints       []corev1.Taint
	Pods         []*corev1.Pod
	// InstanceTypes are the options that hold every pod (plus daemonset overhead), cheapest first,
	// at most MaxInstanceTypes.
	InstanceTypes []string
	// Requests are the summed requests of Pods plus the daemonset overhead.
	Requests corev1.ResourceList
	Launch   Launch
	// NodeCost is what the node costs per hour beyond Launch.Price (its NodePool's
	// Input.NodeCosts).
	NodeCost float64
	// MinValuesRelaxed is set when, under MinValuesBestEffort, a minValues of the NodePool could
	// not be met and Requirements carry the lower number the options keep (Karpenter annotates
	// such a NodeClaim karpenter.sh/nodeclaim-min-values-relaxed: "true").
	MinValuesRelaxed bool
}

// ReasonCode classifies why a pod cannot go to a NodePool.
type ReasonCode string

// Reason codes of Unschedulable.
const (
	ReasonRequirements ReasonCode = "IncompatibleRequirements"
	ReasonTaints       ReasonCode = "TaintNotTolerated"
	ReasonNoFit        ReasonCode = "NoInstanceTypeFits"
	ReasonLimits       ReasonCode = "LimitsExceeded"
	ReasonTopology     ReasonCode = "TopologyOrAffinity"
	ReasonInvalid      ReasonCode = "InvalidPod"
)

// Reason is why a pod cannot go to one NodePool (NodePool "" stands for existing nodes and
// pod-level problems).
type Reason struct {
	NodePool string
	Code     ReasonCode
	Message  string
}

// Unschedulable is a pod that no node can take, with a reason per NodePool.
type Unschedulable struct {
	Pod     *corev1.Pod
	Reasons []Reason
}

// Plan is the outcome of Solve.
type Plan struct {
	Placements    []Placement
	NodeClaims    []NodeClaim
	Unschedulable []Unschedulable
	// Order lists every placed pod (on existing nodes and NodeClaims) in the order the solver
	// placed it; replaying the placements in this order, each pod's constraints held when it
	// was placed, as they would for kube-scheduler binding the pods one at a time.
	Order []*corev1.Pod
}

// HourlyPrice is the summed Launch price of the plan's NodeClaims: the instances alone.
func (p *Plan) HourlyPrice() float64 {
	total := 0.0
	for i := range p.NodeClaims {
		total += p.NodeClaims[i].Launch.Price
	}
	return total
}

// HourlyNodeCost is the summed NodeCost of the plan's NodeClaims.
func (p *Plan) HourlyNodeCost() float64 {
	total := 0.0
	for i := range p.NodeClaims {
		total += p.NodeClaims[i].NodeCost
	}
	return total
}
