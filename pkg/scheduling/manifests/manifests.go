package manifests

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/manifest"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// Input builds the scheduling input of the decoded documents with the given instance types.
// Typing and the expansion of workloads into pods are pkg/manifest's (ObjectsFrom); this maps
// them onto the solver's input. Pods with spec.nodeName naming a Node in the documents are bound
// to it; other pods are pending. Kinds that hold neither pods nor capacity (ConfigMap, Service,
// RBAC... see inert) are skipped; any other kind simulate does not read is an error, so that a
// typo does not silently drop capacity or pods.
func Input(docs []*unstructured.Unstructured, types []*scheduling.InstanceType) (*scheduling.Input, error) {
	objects, err := manifest.ObjectsFrom(docs)
	if err != nil {
		return nil, err
	}
	return FromObjects(objects, types)
}

// inert are the kinds, by group/kind, that make no pod and no capacity: a manifest set that
// holds them (an aws-auth ConfigMap beside a NodePool) simulates as if they were absent.
var inert = map[string]bool{
	"/ConfigMap": true, "/Secret": true, "/Service": true, "/ServiceAccount": true, "/Namespace": true,
	"/Endpoints": true, "/LimitRange": true, "/ResourceQuota": true, "/PersistentVolumeClaim": true,
	"rbac.authorization.k8s.io/Role": true, "rbac.authorization.k8s.io/RoleBinding": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"policy/PodDisruptionBudget": true, "scheduling.k8s.io/PriorityClass": true, "storage.k8s.io/StorageClass": true,
	"networking.k8s.io/Ingress": true, "networking.k8s.io/NetworkPolicy": true, "autoscaling/HorizontalPodAutoscaler": true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, "discovery.k8s.io/EndpointSlice": true,
}

// FromObjects is Input over documents already typed.
func FromObjects(objects *manifest.Objects, types []*scheduling.InstanceType) (*scheduling.Input, error) {
	for _, u := range objects.Ignored {
		gvk := u.GroupVersionKind()
		if !inert[gvk.Group+"/"+gvk.Kind] {
			return nil, fmt.Errorf("reading %s %s, kind %s is not one simulate reads (NodePool, EC2NodeClass, Pod, Deployment, ReplicaSet, StatefulSet, Job, DaemonSet, Node, and kinds that make no pods such as ConfigMap): remove it or check its apiVersion and kind", u.GetKind(), u.GetName(), u.GetKind())
		}
	}
	in := &scheduling.Input{InstanceTypes: types, NodePools: objects.NodePools}
	nodes := map[string]*scheduling.Node{}
	for _, n := range objects.Nodes {
		sn := &scheduling.Node{Name: n.Name, NodePool: n.Labels[v1.NodePoolLabelKey], Labels: n.Labels, Allocatable: n.Status.Allocatable, Capacity: n.Status.Capacity}
		for _, t := range n.Spec.Taints {
			// Joiner removes this taint at registration, and agents theirs when they start; they
			// do not keep pods off for good.
			if t.Key != v1.UnregisteredTaintKey && !agenttaint.Is(t) {
				sn.Taints = append(sn.Taints, t)
			}
		}
		nodes[n.Name] = sn
		in.Nodes = append(in.Nodes, sn)
	}
	for _, p := range objects.Pods {
		if n, ok := nodes[p.Spec.NodeName]; ok && p.Spec.NodeName != "" {
			n.Pods = append(n.Pods, p)
			continue
		}
		in.Pods = append(in.Pods, p)
	}
	// One pod per DaemonSet stands for the requests every new node must reserve.
	for _, ds := range objects.DaemonSets {
		pod := &corev1.Pod{ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy(), Spec: *ds.Spec.Template.Spec.DeepCopy()}
		pod.Name = ds.Name + "-0"
		pod.Namespace = ds.Namespace
		if pod.Namespace == "" {
			pod.Namespace = corev1.NamespaceDefault
		}
		in.DaemonSetPods = append(in.DaemonSetPods, pod)
	}
	return in, nil
}
