// Package iam emulates the IAM query API for roles and instance profiles: CreateRole, GetRole;
// the inline policies of a role (PutRolePolicy, GetRolePolicy, DeleteRolePolicy,
// ListRolePolicies) and its managed ones (AttachRolePolicy, DetachRolePolicy,
// ListAttachedRolePolicies, for the AWS managed policies the emulator knows); Create/Get/
// Delete/ListInstanceProfiles, Add/RemoveRoleFromInstanceProfile and TagInstanceProfile. Calls
// are authorized against the caller's policies (AccessDenied on refusal), and validated as IAM
// does (MalformedPolicyDocument, NoSuchEntity, EntityAlreadyExists, LimitExceeded).
//
// A role's policies are stored in the world and read by package authz at every call, so a
// PutRolePolicy applies from the role's next call.
//
// It must not evaluate policies itself (package authz does) nor know other services' formats.
package iam
