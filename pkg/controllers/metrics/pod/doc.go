// Package pod keeps Karpenter's per-pod metrics, named as Karpenter names them:
//
//   - karpenter_pods_state (gauge, always 1): one series per pod, labelled as Karpenter v1.15
//     labels it: name, namespace, owner (the first owner reference as a self link,
//     /apis/apps/v1/namespaces/NS/replicasets/NAME), node, scheduled (bound to a node), phase,
//     ready (Ready condition True), the node's nodepool, zone, arch, capacity_type and
//     instance_type labels, and managed (the node has a NodePool). The series goes when the pod
//     does, and is replaced when any label changes.
//   - karpenter_pods_startup_duration_seconds (summary): from a pod's creationTimestamp to the
//     lastTransitionTime of its Ready condition, observed once per pod, and only for pods this
//     controller saw not Ready first. A pod already Ready when first seen (every running pod
//     after a restart or a leader change) is not observed, so restarts do not count pods twice;
//     a pod whose readiness flips later is not observed again.
//   - karpenter_pods_current_unbound_time_seconds (gauge), and the same as Karpenter v1 names it,
//     karpenter_pods_unbound_time_seconds: for each pod not bound to a node and not finished, the
//     time since its creation, computed on the injected clock at scrape time.
//
// The controller reconciles each pod on its changes, and the pods of a node whose labels change.
// It remembers per pod only what the metrics need (UID, labels, whether startup was observed)
// and forgets it when the pod is gone. It reads pods and nodes and writes nothing to the cluster.
package pod
