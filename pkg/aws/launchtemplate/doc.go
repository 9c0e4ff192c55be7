// Package launchtemplate owns the launch templates instances are created from. A launch template
// is named by a hash of its resolved options (Name), so equal options share one template and any
// change makes a new one. NewOptions resolves a node class's options (instance profile, security
// groups, volumes with the family defaults, metadata options, tags); CreateInput is the
// CreateLaunchTemplate request (also dry-run by validation). Provider creates templates on
// demand behind EC2API, which the SDK's EC2 client satisfies, caches which exist, and
// garbage-collects the cluster's templates unused for UnusedTTL on an injected clock.
//
// It must not choose the AMI, subnets or instance types; it is given them.
package launchtemplate
