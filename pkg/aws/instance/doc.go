// Package instance owns launching, finding and terminating EC2 instances for NodeClaims: choosing
// the capacity type and building the CreateFleet overrides (instance type × subnet × launch
// template) from the instance types a NodeClaim allows; the tags of launched instances; the
// choice of leaked instances to garbage-collect (tagged for the cluster, no NodeClaim, past a
// grace period). Provider makes the calls behind EC2API, which the SDK's EC2 client satisfies:
// CreateFleet type instant (FleetInput), feeding insufficient-capacity errors to the
// unavailable-offerings cache and classifying failures into cloudprovider errors, with launches
// alike merged into one fleet (fleet.go, over pkg/aws/batcher) and the ledger (ledger.go) mapping
// launched instances to NodeClaims until their status does, adopting after a restart what an
// earlier controller left; DescribeInstances, with Recent answering from the last descriptions
// of bounded age so that reads for every NodeClaim share one List, and Gets merged by ID;
// TerminateInstances, merged by ID (calls.go); CreateTags of a NodeClaim's own tags once its
// node is known (tagging.go). Diagnose (diagnose.go) is the
// instance's side of join diagnosis: its state, state reason and console output
// (GetConsoleOutput), which pkg/aws/nodejoin reads into a cause.
//
// It must not pick instance types (scheduling did) nor resolve AMIs, subnets or launch templates
// (their own packages do); it combines what it is given, and never requests an instance type with
// a launch template of another architecture.
package instance
