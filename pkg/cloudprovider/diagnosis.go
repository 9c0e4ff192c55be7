package cloudprovider

import (
	"context"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Reasons a Diagnosis gives for a node that does not join. Each becomes the reason of the
// NodeClaim's Registered=False condition and of its NodePool's NodeRegistrationHealthy=False, and
// a label value of joiner_nodeclaims_join_failed_total.
const (
	// ReasonNodeRoleNotAuthorized: the API server refused the kubelet, 401 Unauthorized (its IAM
	// role maps to no identity: neither kube-system/aws-auth nor an EKS access entry) or 403
	// Forbidden (the role maps to an identity that may not register this Node).
	ReasonNodeRoleNotAuthorized = "NodeRoleNotAuthorized"
	// ReasonInvalidKubeletArguments: the kubelet exited at startup because a flag it was given
	// does not parse (an unknown flag, a taint list it cannot read).
	ReasonInvalidKubeletArguments = "InvalidKubeletArguments"
	// ReasonBootstrapFailed: the bootstrap (bootstrap.sh, nodeadm) failed, so no kubelet started.
	ReasonBootstrapFailed = "BootstrapFailed"
	// ReasonBootstrapArgumentsIgnored: the bootstrap dropped arguments it was given.
	ReasonBootstrapArgumentsIgnored = "BootstrapArgumentsIgnored"
	// ReasonClusterCertificateMismatch: the kubelet does not trust the API server's certificate
	// (the CA it was given is not the cluster's).
	ReasonClusterCertificateMismatch = "ClusterCertificateMismatch"
	// ReasonInstanceTerminated: the instance stopped or terminated before its Node joined.
	ReasonInstanceTerminated = "InstanceTerminated"
)

// JoinDiagnoser is an optional capability of a CloudProvider: it looks at a launched instance
// whose Node has not registered and says why, from what the cloud shows (the instance's state,
// its console output). The lifecycle controller uses it when the provider implements it.
//
// DiagnoseJoin is called repeatedly while the NodeClaim's Registered condition is not True; the
// caller limits how often. It must not change anything. An error means the evidence could not be
// read (throttled, not permitted): the caller keeps waiting and may try again later.
type JoinDiagnoser interface {
	DiagnoseJoin(ctx context.Context, nodeClaim *v1.NodeClaim) (Diagnosis, error)
}

// Diagnosis is what the cloud shows about a node that has not joined.
type Diagnosis struct {
	// Certain is true when the evidence proves the node will never join as launched: launching
	// another instance from the same inputs would fail the same way. Only then is Reason set.
	Certain bool
	// InstanceOnly is true when the cause is this instance's fate (it was terminated), not the
	// inputs it was launched from: another launch would not fail the same way, so the NodePool is
	// not held back.
	InstanceOnly bool
	// Reason is one of the Reason* constants when Certain, else empty.
	Reason string
	// Message says what was seen and, when Certain, the exact fix.
	Message string
	// Evidence is the line of the console (or the state) the diagnosis rests on, quoted; for an
	// uncertain diagnosis, the last relevant thing seen, or empty when nothing was.
	Evidence string
}
