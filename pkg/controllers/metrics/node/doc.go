// Package node keeps Karpenter's per-node gauges, named and labelled as Karpenter v1.15's
// (pkg/controllers/metrics/node upstream), measured on the leader from the cluster view at
// each scrape:
//
//   - karpenter_nodes_allocatable: the Node's status.allocatable;
//   - karpenter_nodes_total_pod_requests and karpenter_nodes_total_pod_limits: the requests
//     (as kube-scheduler counts them, one "pods" each) and limits of the unfinished pods bound to
//     the Node, DaemonSet pods included;
//   - karpenter_nodes_total_daemon_requests and karpenter_nodes_total_daemon_limits: those of
//     its DaemonSet pods alone;
//   - karpenter_nodes_system_overhead: status.capacity minus status.allocatable;
//
// each labelled with resource_type (the resource name in lower case, "-" as "_": cpu in cores,
// memory and ephemeral_storage in bytes, pods in pods), node_name, phase (the Node's
// status.phase, empty on current Kubernetes), managed (Joiner launched it), and one label per
// well-known node label key given to NewController, named by the key's part after "/" in snake
// case (karpenter.sh/nodepool is nodepool, topology.kubernetes.io/zone is zone,
// topology.k8s.aws/zone-id is zone_id), empty when the Node lacks it;
//
//   - karpenter_nodes_current_lifetime_seconds: the Node's age, with the same labels but
//     resource_type;
//   - karpenter_cluster_utilization_percent{resource_type}: 100 × the summed pod requests over
//     the summed allocatable of every Node, for each resource some Node has allocatable of.
//
// Only Nodes count (a NodeClaim still launching has no Node yet). A Node that goes has no series
// after the next measurement. The package reads the cluster and writes nothing.
package node
