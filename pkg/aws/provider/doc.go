// Package provider is the AWS implementation of cloudprovider.CloudProvider. It reads node
// classes and nothing else from the API server, and composes the AWS packages along the one path
// of a launch (docs/design/aws-provider.md): instance types and offerings (pkg/aws/instancetype,
// pkg/aws/pricing), the NodeClaim's requirements, the capacity type and AMI per instance type
// (never across architectures), userData (pkg/aws/userdata), launch templates
// (pkg/aws/launchtemplate) and CreateFleet (pkg/aws/instance).
//
// It must not write Kubernetes objects: the NodeClaim it returns is a copy the caller persists.
package provider
