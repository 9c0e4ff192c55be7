// Package check re-verifies a scheduling.Plan against its scheduling.Input from scratch: every
// pod accounted for once, node selection, taints, resources, host ports, pod affinity and
// anti-affinity, topology spread, NodePool requirements and limits, and launch pricing.
//
// It owns only verification. It must not call the solver's helpers (requirement algebra,
// resource arithmetic, topology counting), so that a bug in the solver cannot hide in the checker;
// it uses only the scheduling package's exported data types and PodRequests is reimplemented
// here on purpose.
package check
