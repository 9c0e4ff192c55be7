// Package disruption removes empty nodes: Karpenter's empty-node consolidation. It runs on the
// leader, a pass at once and then every Interval on the injected clock.
//
// A pass lists, through the cluster view, the nodes whose NodeClaim is initialized, Consolidatable
// (nodeclaim/consolidatable: quiet for the NodePool's consolidateAfter), not being deleted and not
// annotated karpenter.sh/do-not-disrupt=true (Node or NodeClaim), whose NodePool's
// consolidationPolicy is WhenEmpty or WhenEmptyOrUnderutilized (both remove empty nodes) and
// whose consolidateAfter is not Never, and that are empty: no pod that would have to be
// rescheduled (DaemonSet pods, mirror pods, finished and terminating pods do not count) and no
// running pod annotated karpenter.sh/do-not-disrupt=true.
//
// Budgets: per NodePool, the smallest nodes value among the budgets whose reasons include Empty
// (or are unset) and whose schedule window is open at now (five-field cron in UTC plus duration,
// parsed here as robfig/cron's standard parser does); a percentage is of the NodePool's
// initialized nodes, rounded up; an empty budgets list means 10%; a budget that cannot be read
// allows nothing. From it are subtracted the NodePool's nodes already being deleted or not Ready.
// Candidates that have been quiet longest go first.
//
// Before deleting, the NodeClaim, Node and pods are read again from the API server (not the
// cache) and checked again; the NodeClaim gets DisruptionReason=True/Empty by a patch with
// optimistic locking and is deleted with a resourceVersion precondition, so a pod event in
// between stops it. Events DisruptionTerminating go on the NodeClaim and the Node; the metrics are
// karpenter_nodeclaims_disrupted_total, karpenter_voluntary_disruption_decisions_total and
// karpenter_voluntary_disruption_eligible_nodes. Draining and terminating are
// node/termination's and nodeclaim/lifecycle's.
//
// Left out: underutilized consolidation (deleting or replacing nodes whose pods fit elsewhere),
// multi-node consolidation, drift, expiry, PodDisruptionBudget checks (an empty node's remaining
// pods are DaemonSet pods), tainting the node before the last check. The package must not create
// NodeClaims, drain pods or call the cloud.
package disruption
