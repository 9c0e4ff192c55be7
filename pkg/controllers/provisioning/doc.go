// Package provisioning turns pending pods into NodeClaims.
//
// It watches pods that kube-scheduler marked unschedulable, and what changes what fits (NodePools,
// node classes, DaemonSets, deleted Nodes and NodeClaims). Each such event opens or extends a
// batch; the batch closes BatchIdleDuration after the last event or BatchMaxDuration after the
// first, whichever comes first, measured on the injected clock and waited for with RequeueAfter.
// Then the controller builds a scheduling.Input (pkg/schedulinginput) from the cluster view (existing Nodes, in-flight
// NodeClaims and their pods, one pod per DaemonSet), the NodePools that may launch (those whose
// NodeClassReady is not False) and each NodePool's instance types from the cloud provider; runs
// scheduling.Solve; creates the plan's NodeClaims; and records Nominated and FailedScheduling
// events on the pods.
//
// Restarts and repeated batches are safe: pods already covered by in-flight NodeClaims are placed
// on them by the solver and lead to no new NodeClaim, and a batch does not start until the cache
// shows every NodeClaim the previous batch created. NodePool limits are enforced by the solver,
// counting existing and in-flight capacity.
//
// The controller is a singleton (one request key for the whole cluster), so its Reconcile is the
// plain reconcile.Reconciler, not a typed per-object one. It creates NodeClaims and events only;
// launching them is the NodeClaim lifecycle controller's job.
package provisioning
