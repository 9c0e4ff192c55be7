// Package doctor is `joiner doctor`: it gathers what can be known about whether the nodes of a
// cluster's EC2NodeClasses can join, from manifests (offline) or from the cluster and AWS (live),
// runs every check of pkg/aws/nodejoin on each EC2NodeClass, adds the NodePool and pod findings
// that need no launch (a nodeClassRef naming no EC2NodeClass, a NodePool spanning architectures
// its class's AMIs do not, pods selecting labels or refusing taints so that no NodePool can take
// them), and ranks the findings by severity.
//
// Offline (ReadManifests) nothing is contacted: the account id comes from the controller
// ServiceAccount's IRSA annotation (eks.amazonaws.com/role-arn), from an ACK PodIdentityAssociation
// in the manifests, or from Options.AccountID; access entries are never visible, so a node role
// is never called unmapped at Error severity unless kube-system/aws-auth is in the manifests and
// names a known mistake. Live (ReadLive) reads the API server with a client.Reader and AWS with
// the SDK clients it is given; what it is refused is reported as not visible, never as absent.
//
// Diagnose is pure: it reads Observations and returns a Report. The package writes nothing,
// neither to the cluster nor to AWS.
package doctor
