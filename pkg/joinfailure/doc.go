// Package joinfailure owns the join-failure record of a NodePool and the hold it puts on launches:
// the certain cause for which the NodePool's nodes failed to join (Failure, kept in the
// v1.JoinFailureAnnotationKey annotation), the fingerprint of the inputs that decide a join
// (Inputs: the node class's spec, kube-system/aws-auth, the NodePool's template), and Held, true
// once MaxLaunchesPerCause NodeClaims failed for one cause with unchanged inputs and until
// DefaultHold has passed.
//
// The NodeClaim lifecycle controller writes the record, the NodePool status controller mirrors it
// into NodeRegistrationHealthy, and provisioning, disruption, explain, simulate and the console
// read it, so it lives in none of them. It reads; it must not write the NodePool.
package joinfailure
