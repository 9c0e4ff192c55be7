// Package instance owns launching, finding and terminating EC2 instances for NodeClaims. Today it
// holds the pure part of a launch: choosing the capacity type and building the CreateFleet
// overrides (instance type × subnet × launch template) from the instance types a NodeClaim allows;
// the tags of launched instances; and the choice of leaked instances to garbage-collect (tagged for the cluster, no NodeClaim,
// past a grace period).
// The CreateFleet, DescribeInstances and TerminateInstances calls are planned here, behind small
// interfaces the SDK clients satisfy.
//
// It must not pick instance types (scheduling did) nor resolve AMIs, subnets or launch templates
// (their own packages do); it combines what it is given, and never requests an instance type with
// a launch template of another architecture.
package instance
