package operator

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// maxInterned bounds the interner's table. Past it the table starts again empty: strings
// interned before stay shared where they are, and the table never holds more than this many
// (node names, which come and go with nodes, would otherwise pile up for the process's life).
const maxInterned = 64 << 10

// interner makes the cache's Pods, Nodes and NodeClaims share one copy of each string that
// repeats across them. The API server's answers are decoded string by string: every pod of a
// DaemonSet carries its own copy of the namespace, owner, labels, image, tolerations, scheduler
// and condition types, every NodeClaim its own copy of the instance types it may launch. At
// 5,000 pods (and 7,000 DaemonSet pods on 2,355 nodes) those copies were a fifth of the
// cache. Only fields whose values repeat are interned: names and UIDs of the object itself
// are one of a kind.
//
// It is safe for concurrent use: the informers of every kind run the transform at once.
type interner struct {
	mu      sync.Mutex
	max     int
	strings map[string]string
}

func newInterner(maxStrings int) *interner {
	return &interner{max: maxStrings, strings: make(map[string]string)}
}

// str returns the shared copy of s, making s the shared copy if it is the first.
func (n *interner) str(s string) string {
	if s == "" {
		return s
	}
	if shared, ok := n.strings[s]; ok {
		return shared
	}
	if len(n.strings) >= n.max {
		clear(n.strings)
	}
	n.strings[s] = s
	return s
}

// strs interns every string of ss in place.
func (n *interner) strs(ss []string) {
	for i := range ss {
		ss[i] = n.str(ss[i])
	}
}

// stringMap returns m with its keys and values interned: a new map, as keys cannot be
// replaced in place.
func (n *interner) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[n.str(k)] = n.str(v)
	}
	return out
}

// resources returns rl with its resource names interned (the quantities are values).
func (n *interner) resources(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 {
		return rl
	}
	out := make(corev1.ResourceList, len(rl))
	for k, v := range rl {
		out[as(n, k)] = v
	}
	return out
}

// objectMeta interns what repeats of an object's metadata: its namespace, generated-name
// prefix, labels, annotations, owners and finalizers.
func (n *interner) objectMeta(m *metav1.ObjectMeta) {
	m.Namespace, m.GenerateName = n.str(m.Namespace), n.str(m.GenerateName)
	m.Labels, m.Annotations = n.stringMap(m.Labels), n.stringMap(m.Annotations)
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind, o.Name = n.str(o.APIVersion), n.str(o.Kind), n.str(o.Name)
		o.UID = as(n, o.UID)
	}
	n.strs(m.Finalizers)
}

// as interns a string of a named string type (a resource name, an operator, a UID...).
func as[S ~string](n *interner, s S) S { return S(n.str(string(s))) }

func (n *interner) tolerations(ts []corev1.Toleration) {
	for i := range ts {
		t := &ts[i]
		t.Key, t.Value = n.str(t.Key), n.str(t.Value)
		t.Operator, t.Effect = as(n, t.Operator), as(n, t.Effect)
	}
}

func (n *interner) taints(ts []corev1.Taint) {
	for i := range ts {
		t := &ts[i]
		t.Key, t.Value, t.Effect = n.str(t.Key), n.str(t.Value), as(n, t.Effect)
	}
}

func (n *interner) nodeSelectorTerms(terms []corev1.NodeSelectorTerm) {
	for i := range terms {
		for _, reqs := range [][]corev1.NodeSelectorRequirement{terms[i].MatchExpressions, terms[i].MatchFields} {
			for j := range reqs {
				r := &reqs[j]
				r.Key, r.Operator = n.str(r.Key), as(n, r.Operator)
				n.strs(r.Values)
			}
		}
	}
}

func (n *interner) conditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		c.Type, c.Reason, c.Message = n.str(c.Type), n.str(c.Reason), n.str(c.Message)
		c.Status = as(n, c.Status)
	}
}

func (n *interner) pod(p *corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.objectMeta(&p.ObjectMeta)
	s := &p.Spec
	s.NodeName, s.SchedulerName, s.PriorityClassName = n.str(s.NodeName), n.str(s.SchedulerName), n.str(s.PriorityClassName)
	s.ServiceAccountName, s.DeprecatedServiceAccount = n.str(s.ServiceAccountName), n.str(s.DeprecatedServiceAccount)
	s.RestartPolicy, s.DNSPolicy = as(n, s.RestartPolicy), as(n, s.DNSPolicy)
	s.NodeSelector = n.stringMap(s.NodeSelector)
	n.tolerations(s.Tolerations)
	if s.Affinity != nil && s.Affinity.NodeAffinity != nil && s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		n.nodeSelectorTerms(s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
	}
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Name, c.Image = n.str(c.Name), n.str(c.Image)
			c.Resources.Requests, c.Resources.Limits = n.resources(c.Resources.Requests), n.resources(c.Resources.Limits)
			for j := range c.Ports {
				c.Ports[j].Name, c.Ports[j].Protocol = n.str(c.Ports[j].Name), as(n, c.Ports[j].Protocol)
			}
		}
	}
	st := &p.Status
	st.Phase, st.QOSClass = as(n, st.Phase), as(n, st.QOSClass)
	st.NominatedNodeName = n.str(st.NominatedNodeName)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status = as(n, c.Type), as(n, c.Status)
		c.Reason, c.Message = n.str(c.Reason), n.str(c.Message)
	}
}

func (n *interner) node(node *corev1.Node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.objectMeta(&node.ObjectMeta)
	n.taints(node.Spec.Taints)
	st := &node.Status
	st.Capacity, st.Allocatable = n.resources(st.Capacity), n.resources(st.Allocatable)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status = as(n, c.Type), as(n, c.Status)
		c.Reason, c.Message = n.str(c.Reason), n.str(c.Message)
	}
	for i := range st.Addresses {
		st.Addresses[i].Type = as(n, st.Addresses[i].Type)
	}
}

func (n *interner) nodeClaim(nc *v1.NodeClaim) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.objectMeta(&nc.ObjectMeta)
	s := &nc.Spec
	n.taints(s.Taints)
	n.taints(s.StartupTaints)
	for i := range s.Requirements {
		r := &s.Requirements[i]
		r.Key, r.Operator = n.str(r.Key), as(n, r.Operator)
		n.strs(r.Values)
	}
	s.Resources.Requests = n.resources(s.Resources.Requests)
	if ref := s.NodeClassRef; ref != nil {
		ref.Group, ref.Kind, ref.Name = n.str(ref.Group), n.str(ref.Kind), n.str(ref.Name)
	}
	st := &nc.Status
	st.NodeName, st.ImageID = n.str(st.NodeName), n.str(st.ImageID)
	st.Capacity, st.Allocatable = n.resources(st.Capacity), n.resources(st.Allocatable)
	n.conditions(st.Conditions)
}
