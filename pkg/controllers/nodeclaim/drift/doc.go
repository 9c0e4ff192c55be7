// Package drift keeps a NodeClaim's Drifted condition, as Karpenter's nodeclaim disruption
// controller does: True, with the first reason found, when the launched node no longer matches
// what its NodePool and node class would launch now, and absent otherwise. Reasons, in order:
//
//   - NodePoolDrifted: the karpenter.sh/nodepool-hash annotation differs from the NodePool's
//     template hash now (NodePool.Hash), when both carry the same hash version;
//   - RequirementsDrifted: a label of the NodeClaim is no longer allowed by the NodePool's
//     requirements (a requirement on a key the NodeClaim has no label for is left alone);
//   - InstanceTypeNotFound: the NodeClaim's instance type is no longer among those the cloud
//     provider offers the NodePool;
//   - the cloud provider's IsDrifted reason (for AWS: NodeClassDrift, AMIDrift, SubnetDrift,
//     SecurityGroupDrift; see pkg/aws/drift).
//
// Only launched NodeClaims (with a provider ID) that are not being deleted are checked. A
// NodeClaim is reconciled when it, its NodePool or its node class changes, and every
// PollInterval for what only the cloud knows. The package must not write anything but this
// condition; replacing drifted nodes is pkg/controllers/disruption's.
package drift
