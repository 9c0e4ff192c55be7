// Package lifetime counts nodes and NodeClaims coming and going, named and labelled as Karpenter
// v1.15's:
//
//   - karpenter_nodes_created_total{nodepool,zone}: a NodeClaim's Registered condition turned
//     True (its Node joined), as Karpenter counts a node created at registration;
//   - karpenter_nodes_terminated_total{nodepool,zone}, karpenter_nodes_termination_duration_seconds
//     {nodepool} (summary, Karpenter's objectives) and karpenter_nodes_lifetime_duration_seconds
//     {nodepool} (histogram, Karpenter's buckets): a Node of a NodePool left the API server, after
//     how long since its deletion was asked (when it was) and since its creation;
//   - karpenter_nodeclaims_terminated_total{nodepool,capacity_type,zone} and
//     karpenter_nodeclaims_termination_duration_seconds{nodepool} (histogram): a NodeClaim left
//     the API server, and how long since its deletion was asked.
//
// It counts what the leader's informers deliver (a Node or NodeClaim gone while no leader
// watched is not counted), on the leader only so that replicas do not count twice, timed on the
// injected clock. It must not write anything.
package lifetime
