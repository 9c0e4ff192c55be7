// Package consolidatable keeps a NodeClaim's Consolidatable condition: True once the NodeClaim is
// Initialized and its node has been quiet for its NodePool's consolidateAfter, that is once
//
//	now >= max(status.lastPodEventTime, Initialized's lastTransitionTime) + consolidateAfter
//
// and absent otherwise (not initialized, still within the wait, consolidateAfter Never, no
// NodePool), as Karpenter does. While waiting it asks to be reconciled again when the wait ends
// (RequeueAfter on the injected clock). A change of lastPodEventTime or of the NodePool brings the
// NodeClaim back.
//
// The condition says only that the node has been quiet; whether it may be removed (empty, not
// do-not-disrupt, within budgets) is decided by pkg/controllers/disruption. The package must not
// write anything but this condition.
package consolidatable
