// Package policy evaluates IAM identity policies the way AWS does for one principal: an explicit
// Deny wins, then any Allow, else the implicit deny. It supports Action/NotAction and
// Resource/NotResource with `*` and `?` wildcards (actions case-insensitive, resources
// case-sensitive), and Condition blocks with the string, ARN, numeric, Bool and Null operators,
// their `IfExists` forms and the ForAnyValue/ForAllValues set qualifiers — which covers the
// condition keys Karpenter-style controller policies use (aws:RequestTag/…, aws:ResourceTag/…,
// aws:TagKeys, ec2:… and iam:PassedToService, and the global keys package authz adds such as
// aws:RequestedRegion).
//
// It must not know HTTP, the emulator's state or any service: callers build the Request.
// Not supported: policy variables (${aws:username}), Principal/NotPrincipal (identity policies
// have none), resource-based policies, permission boundaries, SCPs, Date and IP operators.
package policy
