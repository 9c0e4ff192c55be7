// Package simulate builds the input `joiner simulate` solves without a cluster: manifests (or a
// benchmark workload) with instance types from a shared/bench-schema file or the built-in
// catalogue (pkg/catalog) of a region, and the cost of each new node beyond its instance: the EBS
// volumes of its NodePool's EC2NodeClass and an operator's per-node cost (a per-host licence).
//
// It reads files and the catalogue only: no cluster, no AWS. Solving and printing stay with the
// caller.
package simulate
