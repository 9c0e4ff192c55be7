// Package workload reads the benchmark workload files of shared/bench (instance types, NodePools
// and pod groups in one JSON document) into a scheduling.Input, and summarises a plan in the JSON
// fields those benchmarks compare.
//
// It owns that file format and nothing else: it must not schedule, and it must not read
// Kubernetes manifests (that is pkg/manifest's job).
package workload
