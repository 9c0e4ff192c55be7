// Package authz decides whether the caller of an emulated operation may do it: it finds the role
// behind the caller's access key, evaluates the role's policies with package policy for every
// (action, resource, context) the operation needs, and turns a denial into EC2's
// UnauthorizedOperation (or IAM's AccessDenied) with an encoded authorization failure message
// that it records for STS DecodeAuthorizationMessage.
//
// It must not know HTTP or any operation: services describe what they need as Requests.
package authz
