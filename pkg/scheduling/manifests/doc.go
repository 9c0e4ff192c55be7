// Package manifests turns decoded Kubernetes objects (NodePools, workloads, Nodes) into a
// scheduling.Input for `joiner simulate -f`.
//
// It owns the mapping from kinds to pods and capacity: Pods as they are; Deployments,
// ReplicaSets and StatefulSets as replicas copies of their template; Jobs as parallelism copies;
// DaemonSets as daemonset overhead; Nodes as existing capacity (with the Pods bound to them by
// spec.nodeName). EC2NodeClasses are accepted and ignored. It must not decode YAML (pkg/manifest
// does) or schedule.
package manifests
