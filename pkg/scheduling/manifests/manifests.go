package manifests

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// Input builds the scheduling input of objs with the given instance types. Pods with
// spec.nodeName naming a Node in objs are bound to it; other pods are pending. Unknown kinds are
// an error, so that a typo does not silently drop capacity or pods.
func Input(objs []*unstructured.Unstructured, types []*scheduling.InstanceType) (*scheduling.Input, error) {
	in := &scheduling.Input{InstanceTypes: types}
	nodes := map[string]*scheduling.Node{}
	var pods []*corev1.Pod
	for _, u := range objs {
		if err := add(in, nodes, &pods, u); err != nil {
			return nil, fmt.Errorf("reading %s %s, %w", u.GetKind(), u.GetName(), err)
		}
	}
	for _, p := range pods {
		if n, ok := nodes[p.Spec.NodeName]; ok && p.Spec.NodeName != "" {
			n.Pods = append(n.Pods, p)
			continue
		}
		in.Pods = append(in.Pods, p)
	}
	return in, nil
}

func add(in *scheduling.Input, nodes map[string]*scheduling.Node, pods *[]*corev1.Pod, u *unstructured.Unstructured) error {
	conv := runtime.DefaultUnstructuredConverter
	switch u.GetKind() {
	case "NodePool":
		np := &v1.NodePool{}
		if err := conv.FromUnstructured(u.Object, np); err != nil {
			return err
		}
		in.NodePools = append(in.NodePools, np)
	case "EC2NodeClass":
	case "Pod":
		p := &corev1.Pod{}
		if err := conv.FromUnstructured(u.Object, p); err != nil {
			return err
		}
		defaultNamespace(&p.Namespace)
		*pods = append(*pods, p)
	case "Deployment", "ReplicaSet", "StatefulSet":
		replicas, tmpl, err := replicated(u)
		if err != nil {
			return err
		}
		*pods = append(*pods, expand(u, replicas, tmpl)...)
	case "Job":
		j := &batchv1.Job{}
		if err := conv.FromUnstructured(u.Object, j); err != nil {
			return err
		}
		n := int32(1)
		if j.Spec.Parallelism != nil {
			n = *j.Spec.Parallelism
		}
		*pods = append(*pods, expand(u, n, &j.Spec.Template)...)
	case "DaemonSet":
		ds := &appsv1.DaemonSet{}
		if err := conv.FromUnstructured(u.Object, ds); err != nil {
			return err
		}
		in.DaemonSetPods = append(in.DaemonSetPods, expand(u, 1, &ds.Spec.Template)...)
	case "Node":
		n := &corev1.Node{}
		if err := conv.FromUnstructured(u.Object, n); err != nil {
			return err
		}
		sn := &scheduling.Node{Name: n.Name, NodePool: n.Labels[v1.NodePoolLabelKey], Labels: n.Labels, Allocatable: n.Status.Allocatable, Capacity: n.Status.Capacity}
		for _, t := range n.Spec.Taints {
			if t.Key != v1.UnregisteredTaintKey {
				sn.Taints = append(sn.Taints, t)
			}
		}
		nodes[n.Name] = sn
		in.Nodes = append(in.Nodes, sn)
	default:
		return fmt.Errorf("kind %s is not one simulate reads (NodePool, EC2NodeClass, Pod, Deployment, ReplicaSet, StatefulSet, Job, DaemonSet, Node)", u.GetKind())
	}
	return nil
}

func replicated(u *unstructured.Unstructured) (int32, *corev1.PodTemplateSpec, error) {
	conv := runtime.DefaultUnstructuredConverter
	switch u.GetKind() {
	case "Deployment":
		d := &appsv1.Deployment{}
		if err := conv.FromUnstructured(u.Object, d); err != nil {
			return 0, nil, err
		}
		return replicas(d.Spec.Replicas), &d.Spec.Template, nil
	case "ReplicaSet":
		r := &appsv1.ReplicaSet{}
		if err := conv.FromUnstructured(u.Object, r); err != nil {
			return 0, nil, err
		}
		return replicas(r.Spec.Replicas), &r.Spec.Template, nil
	default:
		s := &appsv1.StatefulSet{}
		if err := conv.FromUnstructured(u.Object, s); err != nil {
			return 0, nil, err
		}
		return replicas(s.Spec.Replicas), &s.Spec.Template, nil
	}
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1 // the API default
	}
	return *r
}

func defaultNamespace(ns *string) {
	if *ns == "" {
		*ns = corev1.NamespaceDefault
	}
}

// expand makes n pods from tmpl, named after the owner.
func expand(owner *unstructured.Unstructured, n int32, tmpl *corev1.PodTemplateSpec) []*corev1.Pod {
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		p := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
		p.Name = owner.GetName() + "-" + strconv.Itoa(int(i))
		p.Namespace = owner.GetNamespace()
		defaultNamespace(&p.Namespace)
		pods = append(pods, p)
	}
	return pods
}
