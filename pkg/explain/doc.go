// Package explain answers the operator's "why" questions from what Joiner reads:
//
//   - Pod: why a pod fits each NodePool or not (each requirement, taint, limit and label value,
//     with the values each NodePool offers for every label the pod asks for), which instance
//     types would hold it and at what price, and what the scheduling simulation decides for it.
//   - NodeClaim: a NodeClaim's timeline (created, launched, registered, initialized, each with
//     its time and reason, and the events about it) and its diagnosis, from whatever conditions
//     it carries.
//
// Pod and NodeClaim compute reports from data already read (a scheduling.Input as provisioning
// builds it, a NodeClaim and its events); ReadPod and ReadNodeClaim read that data through the
// client and cloud provider the caller gives. The package must not write anything, and must not
// decide anything the controllers act on. Its per-NodePool analysis is its own, independent of
// the solver's first failing check, so that every problem is named, not only the first.
package explain
