// Package iam emulates the IAM query API for roles and instance profiles: GetRole, Create/Get/
// Delete/ListInstanceProfiles, Add/RemoveRoleFromInstanceProfile and TagInstanceProfile. Calls
// are authorized against the caller's policies (AccessDenied on refusal).
//
// It must not evaluate policies itself (package authz does) nor know other services' formats.
package iam
