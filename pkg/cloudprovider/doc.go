// Package cloudprovider is the seam between Joiner's controllers and the cloud. It owns the
// CloudProvider interface, the InstanceType and Offering values that scheduling reads, and the
// typed errors through which a provider tells a controller what went wrong and what to do next.
//
// Controllers reach the cloud only through CloudProvider. The package must not know AWS (that is
// pkg/aws) and must not make decisions: it describes what a provider promises, nothing more.
//
// Errors: a provider wraps every failure it can classify in one of the typed errors below, and
// callers test them with the Is* helpers, which see through fmt.Errorf("...: %w") wrapping:
//
//   - NodeClaimNotFoundError: the instance is gone; the caller treats the NodeClaim as deleted.
//   - InsufficientCapacityError: nothing the NodeClaim allows could be launched now; the caller
//     deletes the NodeClaim and lets provisioning choose again.
//   - NodeClassNotReadyError: the NodeClaim's node class cannot launch yet; the caller waits for
//     the node class to turn Ready and retries.
//   - CreateError: launching failed for a reason worth a condition on the NodeClaim; its
//     ConditionReason and ConditionMessage go to the Launched condition.
//
// Any other error is transient: the caller retries with backoff.
//
// Optional capabilities are small interfaces of their own, which a provider may implement:
// JoinDiagnoser says why a launched instance's Node does not join (a Diagnosis, certain or not).
//
// The fake in the fake sub-package stands in for a provider in controller tests.
package cloudprovider
