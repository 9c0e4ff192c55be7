package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of EC2NodeClass status. Each of the *Ready and ValidationSucceeded conditions
// gates Ready: the node class is Ready, and NodePools using it may launch, only when all of them are
// True.
const (
	// ConditionTypeSubnetsReady is True when spec.subnetSelectorTerms matched at least one subnet.
	ConditionTypeSubnetsReady = "SubnetsReady"
	// ConditionTypeSecurityGroupsReady is True when spec.securityGroupSelectorTerms matched at least
	// one security group.
	ConditionTypeSecurityGroupsReady = "SecurityGroupsReady"
	// ConditionTypeAMIsReady is True when spec.amiSelectorTerms resolved to at least one usable AMI.
	ConditionTypeAMIsReady = "AMIsReady"
	// ConditionTypeInstanceProfileReady is True when the instance profile exists: created for
	// spec.role, or found for spec.instanceProfile.
	ConditionTypeInstanceProfileReady = "InstanceProfileReady"
	// ConditionTypeCapacityReservationsReady is True when spec.capacityReservationSelectorTerms
	// were resolved (an empty result is still True: reservations are optional).
	ConditionTypeCapacityReservationsReady = "CapacityReservationsReady"
	// ConditionTypeValidationSucceeded is True when Joiner's dry-run checks against the AWS APIs
	// (for example that it may launch with this configuration) passed.
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
	// ConditionTypeNodeJoinReady says whether nodes of the class can join the cluster, as far as
	// Joiner can tell before any launch (pkg/aws/nodejoin): the node role mapped for the cluster's
	// authentication mode, userData that registers the required taint with valid kubelet flags,
	// an AMI for the NodePools' architectures. It is False only for a certain failure (an Error
	// finding), with the finding's reason and its fix in the message; it is True otherwise, and
	// then its reason and message carry the top warning or advice, if any.
	ConditionTypeNodeJoinReady = "NodeJoinReady"
	// ConditionTypeReady is the summary: True when every condition above is True.
	ConditionTypeReady = "Ready"
)

// EC2NodeClassStatus is what Joiner resolved an EC2NodeClass's selectors to. Joiner launches only
// with what is listed here, so it is the place to check why a node got, or did not get, a subnet,
// security group or AMI.
type EC2NodeClassStatus struct {
	// Subnets are the subnets spec.subnetSelectorTerms currently matches.
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`

	// SecurityGroups are the security groups spec.securityGroupSelectorTerms currently matches.
	// +optional
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`

	// CapacityReservations are the capacity reservations spec.capacityReservationSelectorTerms
	// currently matches.
	// +optional
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`

	// AMIs are the AMIs spec.amiSelectorTerms currently resolves to, each with the node
	// requirements (architecture, accelerators) an instance type must meet to boot it.
	// +optional
	AMIs []AMI `json:"amis,omitempty"`

	// InstanceProfile is the name of the instance profile attached to launched instances: the one
	// Joiner created for spec.role, or spec.instanceProfile.
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`

	// Conditions report whether each selector resolved and whether the node class is Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Subnet is a subnet that spec.subnetSelectorTerms matched.
type Subnet struct {
	// ID is the subnet ID.
	// +required
	ID string `json:"id"`
	// Zone is the subnet's availability zone name, such as us-west-2a.
	// +required
	Zone string `json:"zone"`
	// ZoneID is the subnet's availability zone ID, such as usw2-az1, which names the same physical
	// zone in every account.
	// +optional
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroup is a security group that spec.securityGroupSelectorTerms matched.
type SecurityGroup struct {
	// ID is the security group ID.
	// +required
	ID string `json:"id"`
	// Name is the security group's group name.
	// +optional
	Name string `json:"name,omitempty"`
}

// AMI is an AMI that spec.amiSelectorTerms resolved to.
type AMI struct {
	// ID is the AMI ID.
	// +required
	ID string `json:"id"`
	// Name is the AMI's EC2 name.
	// +optional
	Name string `json:"name,omitempty"`
	// Deprecated is true when the AMI is past its EC2 deprecation time. Joiner uses a deprecated
	// AMI only when no other AMI fits, and drifts nodes off it once a replacement exists.
	// +optional
	Deprecated bool `json:"deprecated,omitempty"`
	// Requirements are the node requirements an instance type must satisfy to boot this AMI,
	// such as kubernetes.io/arch In [arm64].
	// +required
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// CapacityReservationType is the kind of an EC2 capacity reservation.
type CapacityReservationType string

const (
	// CapacityReservationTypeDefault is an On-Demand Capacity Reservation, held until cancelled.
	CapacityReservationTypeDefault CapacityReservationType = "default"
	// CapacityReservationTypeCapacityBlock is a Capacity Block: reserved capacity for a fixed
	// window, after which EC2 reclaims the instances.
	CapacityReservationTypeCapacityBlock CapacityReservationType = "capacity-block"
)

// CapacityReservationState is where a capacity reservation is in its life.
type CapacityReservationState string

const (
	// CapacityReservationStateActive reservations accept launches.
	CapacityReservationStateActive CapacityReservationState = "active"
	// CapacityReservationStateExpiring reservations are Capacity Blocks near their end time;
	// Joiner launches nothing new into them and starts moving their nodes off.
	CapacityReservationStateExpiring CapacityReservationState = "expiring"
)

// CapacityReservation is a capacity reservation that spec.capacityReservationSelectorTerms matched.
type CapacityReservation struct {
	// AvailabilityZone is the zone the reservation's capacity is in.
	// +required
	AvailabilityZone string `json:"availabilityZone"`
	// EndTime is when the reservation ends and its capacity is released. Absent for reservations
	// without an end date.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// ID is the reservation ID.
	// +kubebuilder:validation:Pattern="^cr-[0-9a-z]+$"
	// +required
	ID string `json:"id"`
	// InstanceMatchCriteria is "open" or "targeted", as in the selector term.
	// +kubebuilder:validation:Enum:={open,targeted}
	// +required
	InstanceMatchCriteria string `json:"instanceMatchCriteria"`
	// InstanceType is the instance type the reservation holds capacity for.
	// +required
	InstanceType string `json:"instanceType"`
	// OwnerID is the 12-digit ID of the AWS account that owns the reservation.
	// +kubebuilder:validation:Pattern="^[0-9]{12}$"
	// +required
	OwnerID string `json:"ownerID"`
	// ReservationType is "default" for an On-Demand Capacity Reservation or "capacity-block".
	// +kubebuilder:validation:Enum:={default,capacity-block}
	// +kubebuilder:default=default
	// +optional
	ReservationType CapacityReservationType `json:"reservationType,omitempty"`
	// State is "active", or "expiring" for a Capacity Block close to its end time.
	// +kubebuilder:validation:Enum:={active,expiring}
	// +kubebuilder:default=active
	// +optional
	State CapacityReservationState `json:"state,omitempty"`
}
