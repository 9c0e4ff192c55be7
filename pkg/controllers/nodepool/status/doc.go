// Package status keeps NodePool status true to what is observed: resources and nodes summed
// from the NodePool's NodeClaims, NodeClassReady mirroring the Ready condition of the node class
// that spec.template.spec.nodeClassRef names, NodeRegistrationHealthy from the join failure
// recorded on the NodePool (pkg/joinfailure: the record, the fingerprint of its inputs, and Held,
// which tells provisioning when to stop launching), and Ready. Status is rebuilt from observation on
// every reconcile and patched once, with optimistic locking.
//
// It writes NodePool status only; it must not touch NodeClaims, node classes or the cloud.
package status
