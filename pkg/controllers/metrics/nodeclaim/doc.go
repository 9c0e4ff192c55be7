// Package nodeclaim counts NodeClaims through their lifecycle for alerting:
// karpenter_nodeclaims_launched_total, _registered_total and _initialized_total by NodePool (the
// counters Karpenter v0.3x had, without the _total suffix, and v1 dropped), and
// joiner_nodeclaims_join_failed_total by NodePool and reason: launched NodeClaims whose node did
// not join. docs/metrics.md has the PromQL.
//
// It counts condition transitions as the NodeClaim informer delivers them (old and new object),
// so it needs nothing from the controllers that set the conditions and counts the reasons they
// will add. It runs on the leader only, like the writers, so that replicas do not count twice.
// It must not write anything.
package nodeclaim
