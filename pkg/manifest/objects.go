package manifest

import (
	"fmt"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Objects are the manifests that matter to a scheduling decision, typed, with workload
// controllers expanded into the pods they would create.
type Objects struct {
	NodePools   []*v1.NodePool
	NodeClasses []*awsv1.EC2NodeClass
	// Pods are the bare Pods of the manifests followed by the pods that their Deployments,
	// ReplicaSets, StatefulSets and Jobs would create, in manifest order.
	Pods []*corev1.Pod
	// DaemonSets run a pod on every node, so their requests are overhead on any new node.
	DaemonSets []*appsv1.DaemonSet
	// Nodes are existing capacity.
	Nodes []*corev1.Node
	// Owners are the controllers the pods of Deployments, ReplicaSets and StatefulSets would
	// have (the pods carry no owner reference themselves).
	Owners []Owner
	// Ignored are the documents of other kinds (Services, ConfigMaps...), for the caller to
	// mention.
	Ignored []*unstructured.Unstructured
}

// Owner is the controller of expanded pods: a ReplicaSet (also standing for a Deployment's,
// whose selector is the Deployment's) or a StatefulSet, with its selector.
type Owner struct {
	Kind      string
	Namespace string
	Name      string
	Selector  *metav1.LabelSelector
	Pods      []*corev1.Pod
}

// ObjectsFrom types the decoded documents. A document of a known kind with a field its type does
// not have is an error naming the document and field, as kubectl's strict validation would be.
func ObjectsFrom(docs []*unstructured.Unstructured) (*Objects, error) {
	out := &Objects{}
	for _, doc := range docs {
		if err := out.add(doc); err != nil {
			return nil, fmt.Errorf("reading %s %s, %w", doc.GetKind(), doc.GetName(), err)
		}
	}
	return out, nil
}

func (o *Objects) add(doc *unstructured.Unstructured) error {
	switch gk := doc.GroupVersionKind().GroupKind(); gk {
	case v1.SchemeGroupVersion.WithKind("NodePool").GroupKind():
		return typed(doc, &v1.NodePool{}, func(np *v1.NodePool) { o.NodePools = append(o.NodePools, np) })
	case awsv1.SchemeGroupVersion.WithKind("EC2NodeClass").GroupKind():
		return typed(doc, &awsv1.EC2NodeClass{}, func(nc *awsv1.EC2NodeClass) { o.NodeClasses = append(o.NodeClasses, nc) })
	case schema.GroupKind{Kind: "Pod"}:
		return typed(doc, &corev1.Pod{}, func(p *corev1.Pod) { o.Pods = append(o.Pods, defaultNamespace(p)) })
	case schema.GroupKind{Kind: "Node"}:
		return typed(doc, &corev1.Node{}, func(n *corev1.Node) { o.Nodes = append(o.Nodes, n) })
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		return typed(doc, &appsv1.DaemonSet{}, func(ds *appsv1.DaemonSet) { o.DaemonSets = append(o.DaemonSets, ds) })
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		return typedChecked(doc, &appsv1.Deployment{}, func(d *appsv1.Deployment) error {
			return o.expandOwned("ReplicaSet", d.ObjectMeta, d.Spec.Selector, d.Spec.Template, replicas(d.Spec.Replicas), nil)
		})
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		return typedChecked(doc, &appsv1.ReplicaSet{}, func(rs *appsv1.ReplicaSet) error {
			return o.expandOwned("ReplicaSet", rs.ObjectMeta, rs.Spec.Selector, rs.Spec.Template, replicas(rs.Spec.Replicas), nil)
		})
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		return typedChecked(doc, &appsv1.StatefulSet{}, func(ss *appsv1.StatefulSet) error {
			return o.expandOwned("StatefulSet", ss.ObjectMeta, ss.Spec.Selector, ss.Spec.Template, replicas(ss.Spec.Replicas), func(p *corev1.Pod) {
				// The StatefulSet controller labels each pod with its own name, which
				// anti-affinity and spread rules may select on.
				p.Labels[appsv1.StatefulSetPodNameLabel] = p.Name
			})
		})
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return typedChecked(doc, &batchv1.Job{}, func(j *batchv1.Job) error {
			if j.Spec.Completions != nil && *j.Spec.Completions < 0 {
				return fmt.Errorf("spec.completions is %d, want 0 or more", *j.Spec.Completions)
			}
			return o.expand(j.ObjectMeta, j.Spec.Template, "spec.parallelism", jobPods(j.Spec), nil)
		})
	default:
		o.Ignored = append(o.Ignored, doc)
		return nil
	}
}

// typed converts doc strictly into obj and hands it to keep.
func typed[T kruntime.Object](doc *unstructured.Unstructured, obj T, keep func(T)) error {
	return typedChecked(doc, obj, func(o T) error { keep(o); return nil })
}

// typedChecked is typed with a keep that may refuse the object.
func typedChecked[T kruntime.Object](doc *unstructured.Unstructured, obj T, keep func(T) error) error {
	if err := kruntime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(doc.Object, obj, true); err != nil {
		return err
	}
	return keep(obj)
}

// MaxPods is the most pods the documents of one ObjectsFrom call may expand to: a replica count
// beyond it is a typo (or hostile), and expanding it would exhaust memory before simulating.
const MaxPods = 100_000

// expand appends the pods a controller would create, refusing a negative count, which the API
// server refuses too, and a total beyond MaxPods. field names the count's field for the error.
func (o *Objects) expand(owner metav1.ObjectMeta, template corev1.PodTemplateSpec, field string, count int, each func(*corev1.Pod)) error {
	if count < 0 {
		return fmt.Errorf("%s is %d, want 0 or more", field, count)
	}
	if len(o.Pods)+count > MaxPods {
		return fmt.Errorf("%s is %d, which brings the manifests to more than %d pods; simulate models at most %d", field, count, MaxPods, MaxPods)
	}
	pods := expand(owner, template, count)
	if each != nil {
		for _, p := range pods {
			each(p)
		}
	}
	o.Pods = append(o.Pods, pods...)
	return nil
}

// expandOwned is expand of spec.replicas for a controller of kind, recording it in Owners.
func (o *Objects) expandOwned(kind string, owner metav1.ObjectMeta, selector *metav1.LabelSelector, template corev1.PodTemplateSpec, count int, each func(*corev1.Pod)) error {
	from := len(o.Pods)
	if err := o.expand(owner, template, "spec.replicas", count, each); err != nil {
		return err
	}
	ns := owner.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	o.Owners = append(o.Owners, Owner{Kind: kind, Namespace: ns, Name: owner.Name, Selector: selector, Pods: slices.Clone(o.Pods[from:])})
	return nil
}

func replicas(r *int32) int {
	if r == nil {
		return 1 // the API server's default
	}
	return int(*r)
}

// jobPods is how many pods a Job runs at once: parallelism (default 1), capped by completions.
func jobPods(spec batchv1.JobSpec) int {
	n := replicas(spec.Parallelism)
	if spec.Completions != nil && int(*spec.Completions) < n {
		n = int(*spec.Completions)
	}
	return n
}

// expand returns the pending pods a controller would create from its template, named
// <owner>-<i>: the StatefulSet scheme, and a stable stand-in for the random suffixes of the others.
func expand(owner metav1.ObjectMeta, template corev1.PodTemplateSpec, count int) []*corev1.Pod {
	namespace := owner.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	pods := make([]*corev1.Pod, 0, count)
	for i := range count {
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: *template.ObjectMeta.DeepCopy(),
			Spec:       *template.Spec.DeepCopy(),
			Status:     corev1.PodStatus{Phase: corev1.PodPending},
		}
		pod.Name = owner.Name + "-" + strconv.Itoa(i)
		pod.Namespace = namespace
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pods = append(pods, pod)
	}
	return pods
}

func defaultNamespace(p *corev1.Pod) *corev1.Pod {
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	return p
}
