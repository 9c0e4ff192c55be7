// Package scheduling is Joiner's scheduling simulation: a pure function, Solve, from pending pods,
// NodePools, instance types, existing nodes and daemonset overhead to a Plan (pods placed on
// existing nodes, new NodeClaims with their pods and instance-type options, and unschedulable pods
// with a reason per NodePool).
//
// It owns the requirement algebra (Requirements), pod resource arithmetic, topology bookkeeping
// and the solver. It must not import a Kubernetes client, call a cloud, read the clock or keep
// package-level mutable state. The design is in docs/design/scheduling.md; the independent plan
// checker is the check subpackage, and the benchmark workload format is the workload subpackage.
package scheduling
