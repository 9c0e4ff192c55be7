// Package instanceprofile owns the IAM instance profiles of EC2NodeClasses: for spec.role, a
// profile Joiner creates, names deterministically (Name), tags as its own, keeps holding the
// role, and deletes with the class; for spec.instanceProfile, a check that the operator's profile
// exists and holds a role. It depends on IAMAPI, which the SDK's IAM client satisfies, and must
// not touch roles or their policies.
package instanceprofile
