// Package disruption removes empty nodes and nodes whose pods fit on the other nodes: Karpenter's
// empty-node consolidation and its single-node consolidation when the replacement is none. It
// runs on the leader, a pass at once and then every Interval on the injected clock.
//
// A node is disruptable when its NodeClaim is initialized, Consolidatable (nodeclaim/
// consolidatable: quiet for the NodePool's consolidateAfter), neither it nor its Node is being
// deleted, neither is annotated karpenter.sh/do-not-disrupt=true, and its NodePool's
// consolidateAfter is not Never. The pods to move are those that are not DaemonSet pods, mirror
// pods, finished or terminating.
//
// Empty: a disruptable node of a WhenEmpty or WhenEmptyOrUnderutilized NodePool with no pod to
// move and no running pod annotated karpenter.sh/do-not-disrupt=true is deleted with reason
// Empty, as many per NodePool as its budgets allow, the longest quiet first.
//
// Underutilized: after that, of the disruptable nodes of WhenEmptyOrUnderutilized NodePools that
// have pods to move, at most one per pass is deleted with reason Underutilized: the one with the
// fewest pods to move (then the longest quiet) whose pods all fit on the other nodes. No running
// pod may carry do-not-disrupt, and no pod to move may be covered by a PodDisruptionBudget
// (same namespace, matching selector) whose status.disruptionsAllowed is 0, or by more than one
// (the Eviction API refuses both). "Fit" is scheduling.Solve with the pods to move, plus the pods
// still on nodes being deleted (or deleted earlier in the pass), as Pods, the other initialized,
// Ready, schedulable Nodes that are not being deleted as Nodes, and no NodePool, so that nothing
// new may be launched: every pod must be placed, with the solver's affinity, anti-affinity and
// topology spread rules. Node prices are not known here, so they play no part in the order.
//
// Budgets: per NodePool and reason (Empty or Underutilized), the smallest nodes value among the
// budgets whose reasons include it (or are unset) and whose schedule window is open at now
// (five-field cron in UTC plus duration, parsed here as robfig/cron's standard parser does); a
// percentage is of the NodePool's initialized nodes, rounded up; an empty budgets list means
// 10%; a budget that cannot be read allows nothing. From it are subtracted the NodePool's nodes
// already being deleted or not Ready, and those deleted earlier in the pass.
//
// Before deleting, the NodeClaim, Node and pods (and, for Underutilized, the
// PodDisruptionBudgets) are read again from the API server (not the cache) and checked again,
// the fit simulated again with the fresh pods; the NodeClaim gets DisruptionReason=True/<reason>
// by a patch with optimistic locking and is deleted with a resourceVersion precondition, so a
// NodeClaim change in between stops it. Events DisruptionTerminating ("Disrupting NodeClaim:
// <reason>") go on the NodeClaim and the Node; the metrics are karpenter_nodeclaims_disrupted_total,
// karpenter_voluntary_disruption_decisions_total (consolidation_type "empty" or "single") and
// karpenter_voluntary_disruption_eligible_nodes, with reason "empty" or "underutilized".
// Draining (through the Eviction API) and terminating are node/termination's and
// nodeclaim/lifecycle's.
//
// Left out: replacing a node with a cheaper one, multi-node consolidation, price-aware ordering,
// keeping room for pending pods in the fit, drift, expiry, tainting the node before the last
// check. The package must not create NodeClaims, drain pods or call the cloud.
package disruption
