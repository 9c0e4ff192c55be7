// Package e2estack is the harness the end-to-end suites (test/e2e, test/chaos) share: it builds
// the joiner and awsemu programs once per test binary (Build), starts the local stack with the
// controller at least privilege (Start), builds the objects the suites apply (NodePool,
// Deployment, EKSDaemonSets), polls with a deadline (Eventually), checks the cloud against the
// cluster (CheckOneInstancePerNodeClaim, CheckNothingLeft), asks `joiner simulate` for a plan's
// cost (Simulate) and drives the emulator's fault and event knobs (PutFaults, InjectedFaults,
// PostEvent).
//
// It is a test harness: its functions take a *testing.T and fail the test; production code
// never imports it.
package e2estack
