// Package authz decides whether the caller of an emulated operation may do it: it finds the role
// behind the caller's access key, evaluates the role's policies (inline, then the AWS managed
// ones attached that the emulator knows) with package policy for every (action, resource,
// context) the operation needs, and turns a denial into EC2's UnauthorizedOperation (or IAM's
// AccessDenied) with an encoded authorization failure message that it records for STS
// DecodeAuthorizationMessage.
//
// Policies are read from the world at each call, never cached, so a change through
// iam:PutRolePolicy applies to the next call. Every request carries the global condition keys
// aws:RequestedRegion (the region the call is signed for), aws:PrincipalArn,
// aws:PrincipalAccount and aws:PrincipalType. The administrator (AdminAccessKey) is known in
// every world and allowed everything. Every decision, allowed or denied, is appended to the
// world's authorization log (state.IAM.Decisions), which the inspection endpoint serves.
//
// It must not know HTTP or any operation: services describe what they need as Requests.
package authz
