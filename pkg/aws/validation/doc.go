// Package validation owns what Joiner tells an operator when AWS refuses an EC2NodeClass's launch
// parameters. Today it holds the reading of STS DecodeAuthorizationMessage output into the denied
// action, resource and principal, and the IAM statement that would allow the call; the DryRun
// calls of CreateLaunchTemplate, CreateFleet and RunInstances that produce the encoded messages
// are planned here, behind small interfaces the SDK clients satisfy.
//
// It must not change IAM policies, only say what to change, and must not set conditions itself:
// the node class status controller does.
package validation
