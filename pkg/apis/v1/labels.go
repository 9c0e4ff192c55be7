package v1

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Labels that Joiner sets on the nodes it launches and that pods and NodePools may select on.
const (
	// NodePoolLabelKey names the NodePool that a node or NodeClaim came from.
	NodePoolLabelKey = Group + "/nodepool"
	// CapacityTypeLabelKey is the purchase option of the node's instance: spot, on-demand or reserved.
	CapacityTypeLabelKey = Group + "/capacity-type"
	// NodeRegisteredLabelKey is set once the kubelet's Node object has been matched to its NodeClaim.
	NodeRegisteredLabelKey = Group + "/registered"
	// NodeInitializedLabelKey is set once the node is Ready, its startup taints are gone and its
	// requested extended resources are advertised.
	NodeInitializedLabelKey = Group + "/initialized"
	// NodeDoNotSyncTaintsLabelKey on a Node stops Joiner from copying NodeClaim taints onto it.
	NodeDoNotSyncTaintsLabelKey = Group + "/do-not-sync-taints"
)

// NodeClassLabelKey is the label that names the node class a node was launched from, as
// Karpenter writes it: the reference's group and its kind in lower case
// (karpenter.k8s.aws/ec2nodeclass). "" for a nil reference.
func NodeClassLabelKey(ref *NodeClassReference) string {
	if ref == nil {
		return ""
	}
	return ref.Group + "/" + strings.ToLower(ref.Kind)
}

// Values of CapacityTypeLabelKey.
const (
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeReserved = "reserved"
)

// Annotations that Joiner reads or writes.
const (
	// DoNotDisruptAnnotationKey set to "true" on a pod, Node or NodeClaim stops voluntary
	// disruption of that node (consolidation, drift, expiry); on a pod a Go duration ("4h")
	// does so until the pod is that old (PodDoNotDisrupt). A node's terminationGracePeriod still
	// bounds a drain.
	DoNotDisruptAnnotationKey = Group + "/do-not-disrupt"
	// NodePoolHashAnnotationKey records the hash of the NodePool template a NodeClaim was made from,
	// so that a change to the template is detected as drift.
	NodePoolHashAnnotationKey = Group + "/nodepool-hash"
	// NodePoolHashVersionAnnotationKey records how NodePoolHashAnnotationKey was computed.
	NodePoolHashVersionAnnotationKey = Group + "/nodepool-hash-version"
	// NodeClaimTerminationTimestampAnnotationKey is when a draining node is forcibly terminated
	// (deletion time + terminationGracePeriod).
	NodeClaimTerminationTimestampAnnotationKey = Group + "/nodeclaim-termination-timestamp"
	// NodeClaimMinValuesRelaxedAnnotationKey is "true" when minValues had to be relaxed to launch.
	NodeClaimMinValuesRelaxedAnnotationKey = Group + "/nodeclaim-min-values-relaxed"
	// RegistrationTimeoutAnnotationKey on a NodePool overrides how long its NodeClaims may take to
	// register (a Go duration, default 15m) before Joiner replaces them.
	RegistrationTimeoutAnnotationKey = Group + "/registration-timeout"
)

// TerminationFinalizer holds NodeClaims and Nodes until their drain and instance deletion finish.
const TerminationFinalizer = Group + "/termination"

// Taint keys that Joiner owns.
const (
	// UnregisteredTaintKey is the taint every node Joiner launches must register with. It keeps
	// pods off a node until Joiner has synced the NodeClaim's labels and taints onto it, and Joiner
	// removes it at registration. A node that registers without it is refused
	// (UnregisteredTaintNotFound), because pods may already have landed on an unsynced node.
	UnregisteredTaintKey = Group + "/unregistered"
	// DisruptedTaintKey marks a node that Joiner is draining.
	DisruptedTaintKey = Group + "/disrupted"
)

// UnregisteredNoExecuteTaint returns the taint that every launched node must register with.
func UnregisteredNoExecuteTaint() corev1.Taint {
	return corev1.Taint{Key: UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}
}

// DisruptedNoScheduleTaint returns the taint that Joiner puts on a node it is draining.
func DisruptedNoScheduleTaint() corev1.Taint {
	return corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}
}

// Architecture values of corev1.LabelArchStable on the nodes Joiner launches.
const (
	ArchitectureAmd64 = "amd64"
	ArchitectureArm64 = "arm64"
)

// WellKnownLabels returns the label keys, beyond provider-specific ones, that Joiner knows the
// values of before a node exists, so NodePool requirements and pod selectors on them are honoured
// when choosing instance types. The slice is fresh on every call.
func WellKnownLabels() []string {
	return []string{
		NodePoolLabelKey,
		CapacityTypeLabelKey,
		corev1.LabelTopologyZone,
		corev1.LabelTopologyRegion,
		corev1.LabelInstanceTypeStable,
		corev1.LabelArchStable,
		corev1.LabelOSStable,
		corev1.LabelWindowsBuild,
	}
}

// RestrictedLabelDomains returns the label domains that NodePool template labels and requirements
// may not use, except for the well-known labels in them. The slice is fresh on every call.
func RestrictedLabelDomains() []string {
	return []string{"kubernetes.io", "k8s.io", Group, "karpenter.k8s.aws"}
}

// ConditionTypeReady is the root condition of NodePools, NodeClaims and EC2NodeClasses: True when
// every other condition that matters for the object is in its healthy state.
const ConditionTypeReady = "Ready"

// JoinFailureAnnotationKey holds, on a NodePool, the last certain cause for which one of its
// nodes failed to join (a joinfailure.Failure in JSON). The NodeClaim lifecycle controller writes
// it when it fails a NodeClaim for a certain cause and removes it when one of the NodePool's
// nodes registers; the NodePool status controller mirrors it into NodeRegistrationHealthy, and
// provisioning and disruption read it through joinfailure.Held.
const JoinFailureAnnotationKey = "joiner.dev/join-failure"
