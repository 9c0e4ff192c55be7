// Package schedulinginput builds the scheduling simulation's input from the cluster view and the
// cloud provider: every NodePool that can launch with its instance types and per-node cost (or
// the reason it cannot), the DaemonSet pods, and every node as the solver sees it (starting
// nodes with their ephemeral taints ignored, nodes being deleted counted against limits but
// taking no pod). Provisioning solves a Batch of the pending pods (NewBatch); disruption, `joiner
// explain`, `joiner simulate --cluster` and the console simulate over the same Snapshot, so that
// what they show is what provisioning would launch.
//
// It reads; it must not write to the API server, launch, or decide what to disrupt. Which
// NodePools are held is the caller's HoldFunc.
package schedulinginput
