// Package lifecycle owns a NodeClaim from creation to the removal of its finalizer: it launches
// the instance, registers the Node that the instance becomes, waits for that Node to initialise,
// replaces NodeClaims that take too long, and on deletion waits for the Node to be drained and the
// instance to be terminated.
//
// Reconcile runs four phases in order (launch, registration, initialization, liveness) on one copy
// of the NodeClaim. Each phase observes the cloud and the cluster and writes its condition
// (Launched, Registered, Initialized); Ready is computed from them at the end, every condition
// transition is reported as an event, and the NodeClaim's metadata and status are each patched at
// most once per reconcile. Conditions are rebuilt from observation every time: a Node that already
// carries karpenter.sh/registered=true is registered, whatever the NodeClaim last said.
//
// While a launched NodeClaim has no Node, registration asks the cloud why (JoinDiagnoser, at most
// every DiagnosisInterval): a certain cause sets Registered=False with the fix, is recorded on the
// NodePool (nodepool/status.JoinFailureAnnotationKey) unless it is the instance's own, and the
// NodeClaim is deleted at once; uncertain evidence is shown on Registered=Unknown
// (docs/design/join-diagnosis.md).
//
// A NodeClaim with a providerID is never launched again. Time is read from the injected clock
// only; time-based work (launch and registration timeouts) is scheduled with RequeueAfter.
//
// The package must not drain nodes or evict pods (that is node/termination), decide what to launch
// (provisioning) or call the cloud except through cloudprovider.CloudProvider.
package lifecycle
