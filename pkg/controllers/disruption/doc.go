// Package disruption takes capacity away safely: Karpenter's disruption controller. It runs on
// the leader, a pass at once and then every Interval on the injected clock (sooner when a
// command waits), and owns the decision, the karpenter.sh/disrupted taint of the nodes it
// decided on, the replacement NodeClaims it launches, and the NodeClaims' DisruptionReason.
//
// A pass builds its view (pass): every node sorted into its NodePool's counts and candidates,
// the pending pods, the PodDisruptionBudgets, and provisioning's Snapshot (NodePools, instance
// types and prices, nodes as the solver sees them). The snapshot leaves out, as provisioning
// does, the NodePools whose launches are held because their nodes do not join (no replacement
// is planned there), and counts the per-node cost (the cloud provider's and the operator's
// --node-cost, WithNodeCost) on every node: a node's cost is its offering's price plus it, so a
// deleted node saves it and a replacement costs it, in savings, MinReplacementSavings and the
// Balanced policy alike. A node is a candidate when its NodeClaim is
// initialized, neither it nor its Node is being deleted, tainted karpenter.sh/disrupted or in a
// command already, neither carries karpenter.sh/do-not-disrupt=true, no running pod on it does,
// and no pod to move is covered by a PodDisruptionBudget allowing no disruption (or by more than
// one: the Eviction API refuses both); and it is Drifted, or consolidation may take it (policy,
// consolidateAfter not Never, Consolidatable). As Karpenter's eventual disruption, the pods'
// do-not-disrupt and PodDisruptionBudgets do not keep a Drifted node whose NodeClaim has a
// terminationGracePeriod from drift (termination drains it within that time); they still keep
// it from consolidation.
//
// Methods, in Karpenter's order, the first that finds something wins: Empty (every empty
// consolidatable node the Empty budgets allow); Drifted (every empty drifted node the budgets
// allow, else the first drifted node whose pods find room, on other nodes or new NodeClaims at
// any price); multi-node consolidation (among the first MaxMultiNodeCandidates, several nodes
// that can be deleted or replaced by cheaper nodes: Karpenter's longest prefix, or a set grown
// one node at a time where each adds savings, whichever saves more; see multi); single-node consolidation (the first node that can be deleted or replaced
// by cheaper nodes). "Room" is scheduling.Solve over the snapshot without the candidates,
// with their pods, the pods of nodes already leaving and the pending pods (those marked
// unschedulable, and those kube-scheduler has not tried yet): the candidates' pods must all be
// placed, none on a node not initialized yet (in flight or registered: kube-scheduler cannot
// bind there now, and such a node was launched for other pods), and the other pods must need
// no more new capacity than they need with no candidate removed (else provisioning would buy
// back what consolidation took); a pending pod that fits nowhere blocks nothing. Replacements
// are the new NodeClaims the solve plans for the candidates' pods, one or several (a node may
// be split into smaller ones, several merged or re-packed); together they must save at least
// MinReplacementSavings of the candidates' price, so a cluster at rest makes no moves; a spot
// node's spot replacement needs the SpotToSpotConsolidation feature gate
// (WithSpotToSpotConsolidation, off by default as upstream), is one NodeClaim, and needs
// MinSpotToSpotOptions cheaper types and keeps that many.
// Candidates are ordered by the least summed eviction cost of their pods (1 each, adjusted by
// pod-deletion-cost and priority, as Karpenter), then longest quiet. A NodePool with the Balanced
// policy takes a consolidation move with pods only when its savings, as a fraction of the
// NodePool's cost, are at least 1/BalancedThreshold of its disruption (1 per node plus the
// pods' eviction costs) as a fraction of the NodePool's, each NodePool of the move scored on its
// own.
//
// Budgets: per NodePool and reason, the smallest nodes value among the budgets whose reasons
// include it (or are unset) and whose schedule window is open (schedule.go); a percentage is of
// the NodePool's initialized nodes, rounded up; an empty list limits nothing (the API server
// defaults an absent list to one 10% budget, as upstream); a budget that cannot be read allows
// nothing. Nodes being deleted, not Ready or tainted karpenter.sh/disrupted count against it.
//
// Safety: a decided command waits ValidationPeriod and is decided again on the cluster then
// (same candidates, budgets, same kind of decision at no higher price); if it holds, the
// candidates are tainted karpenter.sh/disrupted:NoSchedule, then read again from the API server
// (not the cache) and checked again, including that no pod was bound to them that the decision
// did not plan for. Any failure untaints them. Deletes then go through DisruptionReason (a
// status patch with optimistic locking) and a delete with a resourceVersion precondition.
// Replacements are created as provisioning creates NodeClaims; once all are Initialized the
// candidates are deleted; if one is gone, or ReplacementTimeout passes, the candidates are
// untainted and kept. A command is recorded on its candidates' NodeClaims (record.go): when it
// was decided, and, once tainted, its replacements; a new leader validates the same decision
// ValidationPeriod after the first, and its first pass takes the recorded in-flight commands
// back and untaints the nodes an earlier leader left tainted with no record.
//
// Expired: a NodeClaim older than its expireAfter is deleted forcefully, whatever the budgets,
// do-not-disrupt or PodDisruptionBudgets; termination drains it within terminationGracePeriod.
//
// Reasons: each pass, a NodeClaim that is kept gets a DisruptionBlocked event when its reason
// changes (do-not-disrupt, the PodDisruptionBudget named, the budget named with its schedule,
// the cheapest option's price, the pod that fits nowhere, the time left to consolidateAfter).
// Decisions put DisruptionTerminating / DisruptionLaunching events with the savings per hour on
// the NodeClaim, its Node and its NodePool. Metrics, as Karpenter's: karpenter_nodeclaims_disrupted_total,
// karpenter_voluntary_disruption_decisions_total, karpenter_voluntary_disruption_eligible_nodes,
// karpenter_voluntary_disruption_decision_evaluation_duration_seconds and
// karpenter_nodepools_allowed_disruptions.
//
// The package must not drain pods or call the cloud beyond reading instance types: draining is
// node/termination's, launching nodeclaim/lifecycle's, the Drifted condition nodeclaim/drift's.
package disruption
