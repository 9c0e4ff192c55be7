// Package validation owns what Joiner tells an operator when AWS refuses an EC2NodeClass's launch
// parameters. Today it holds the reading of STS DecodeAuthorizationMessage output into the denied
// action, resource and principal, and the IAM statement that would allow the call (DecodeDenial);
// the DryRun calls of CreateLaunchTemplate, CreateFleet and RunInstances with a node class's real
// parameters (Validator, behind EC2API), and the decoding of an UnauthorizedOperation through
// STS (Explainer, behind STSAPI), both for the SDK clients to satisfy.
//
// It must not change IAM policies, only say what to change, and must not set conditions itself:
// the node class status controller does.
package validation
