package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// PodNodeNameField is the pod field index on spec.nodeName that IndexFields registers.
const PodNodeNameField = "spec.nodeName"

// IndexFields registers the cache indexes the view reads with. Call it once, before the manager
// starts.
func IndexFields(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &corev1.Pod{}, PodNodeNameField, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return fmt.Errorf("indexing pods by %s, %w", PodNodeNameField, err)
	}
	return nil
}

// Cluster reads the cluster's state through a client.Reader.
type Cluster struct {
	reader client.Reader
	// indexed is true when the reader has the PodNodeNameField index (a cache that IndexFields
	// was given); a direct client has none and lists every pod instead.
	indexed bool
	// informers, when set, are the informers of reader's cache: Nodes reads their stores.
	informers Informers
}

// Informers are what a Cluster needs of the manager's cache (cache.Cache) to read its informers'
// stores.
type Informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// Option configures a Cluster.
type Option func(*Cluster)

// ReadingStores makes Nodes take every Pod, Node and NodeClaim from the stores of informers,
// the informers of the cache the Cluster's reader reads (the manager's client and cache). A
// List from the cache, even without deep copies, copies every object's top-level struct into
// the list's items: at 5,000 pods and 2,000 nodes that is ten MiB a call, alive for a whole
// disruption pass or provisioning batch, and the garbage collector lets the heap grow by half
// again.
func ReadingStores(informers Informers) Option {
	return func(c *Cluster) { c.informers = informers }
}

// New returns a view reading through reader. indexed says whether reader has the indexes of
// IndexFields (the manager's cache does once IndexFields ran; a direct client does not).
func New(reader client.Reader, indexed bool, opts ...Option) *Cluster {
	c := &Cluster{reader: reader, indexed: indexed}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// StateNode is one node as Joiner sees it: a Node, its NodeClaim, or both. With a cache reader
// (the manager's), Node, NodeClaim and Pods are the cache's own objects, not copies: read them,
// and copy before changing or writing one (a Patch or Update decodes the answer into its object).
type StateNode struct {
	// Node is nil while the NodeClaim is in flight (launching, or launched and not registered).
	Node *corev1.Node
	// NodeClaim is nil for nodes Joiner did not launch.
	NodeClaim *v1.NodeClaim
	// Pods bound to the node that are not finished (Succeeded or Failed), daemonset pods included.
	Pods []*corev1.Pod
}

// Name is the Node's name, or the NodeClaim's while it is in flight.
func (n *StateNode) Name() string {
	if n.Node != nil {
		return n.Node.Name
	}
	return n.NodeClaim.Name
}

// NodePool is the karpenter.sh/nodepool label of the NodeClaim, else of the Node; "" for nodes
// no NodePool owns.
func (n *StateNode) NodePool() string {
	if n.NodeClaim != nil {
		return n.NodeClaim.Labels[v1.NodePoolLabelKey]
	}
	return n.Node.Labels[v1.NodePoolLabelKey]
}

// InFlight reports whether the node is a NodeClaim without a Node yet.
func (n *StateNode) InFlight() bool { return n.Node == nil }

// Deleting reports whether the Node or the NodeClaim is being deleted.
func (n *StateNode) Deleting() bool {
	return n.Node != nil && !n.Node.DeletionTimestamp.IsZero() || n.NodeClaim != nil && !n.NodeClaim.DeletionTimestamp.IsZero()
}

// Initialized reports whether the node is fully up: for a Node Joiner launched, its
// karpenter.sh/initialized label; a Node Joiner did not launch always is; an in-flight NodeClaim
// never is.
func (n *StateNode) Initialized() bool {
	if n.Node == nil {
		return false
	}
	if n.NodeClaim == nil {
		return true
	}
	return n.Node.Labels[v1.NodeInitializedLabelKey] == "true"
}

// Nodes returns every Node and NodeClaim, joined by provider ID (or by the NodeClaim's
// status.nodeName), with the pods bound to each, ordered by name. The objects are not copies
// (StateNode): provisioning and disruption read every Node, NodeClaim and bound pod on each
// batch and pass, and deep copies of them were a quarter of a 1,000-pod scale-up's allocations
// and most of what a disruption pass kept alive.
func (c *Cluster) Nodes(ctx context.Context) ([]*StateNode, error) {
	nodes, err := cached[corev1.Node](ctx, c, &corev1.NodeList{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes, %w", err)
	}
	claims, err := cached[v1.NodeClaim](ctx, c, &v1.NodeClaimList{})
	if err != nil {
		return nil, fmt.Errorf("listing nodeclaims, %w", err)
	}
	bound, err := c.boundPods(ctx)
	if err != nil {
		return nil, err
	}
	// A NodeClaim without a provider ID has launched nothing yet, so "" is never a key.
	byProviderID := map[string]*StateNode{}
	byName := map[string]*StateNode{}
	out := make([]*StateNode, 0, len(nodes))
	for _, node := range nodes {
		sn := &StateNode{Node: node, Pods: bound[node.Name]}
		if node.Spec.ProviderID != "" {
			byProviderID[node.Spec.ProviderID] = sn
		}
		byName[node.Name] = sn
		out = append(out, sn)
	}
	for _, nc := range claims {
		sn := byProviderID[nc.Status.ProviderID]
		if sn == nil && nc.Status.NodeName != "" {
			sn = byName[nc.Status.NodeName]
		}
		if sn == nil || sn.NodeClaim != nil {
			out = append(out, &StateNode{NodeClaim: nc})
			continue
		}
		sn.NodeClaim = nc
	}
	slices.SortFunc(out, func(a, b *StateNode) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// boundPods returns the unfinished pods bound to a node, by node name: the cache's own pods.
func (c *Cluster) boundPods(ctx context.Context) (map[string][]*corev1.Pod, error) {
	pods, err := cached[corev1.Pod](ctx, c, &corev1.PodList{})
	if err != nil {
		return nil, fmt.Errorf("listing pods, %w", err)
	}
	out := map[string][]*corev1.Pod{}
	for _, pod := range pods {
		if pod.Spec.NodeName == "" || finished(pod) {
			continue
		}
		out[pod.Spec.NodeName] = append(out[pod.Spec.NodeName], pod)
	}
	return out, nil
}

// cached returns every object of list's kind, T, as the cache holds it: from the informer's
// store with ReadingStores, else listed without deep copies (copies of each object's top-level
// struct).
func cached[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, c *Cluster, list client.ObjectList) ([]*T, error) {
	if c.informers != nil {
		informer, err := c.informers.GetInformer(ctx, PT(new(T)))
		if err != nil {
			return nil, err
		}
		if s, ok := informer.(interface{ GetStore() toolscache.Store }); ok {
			items := s.GetStore().List()
			out := make([]*T, 0, len(items))
			for _, item := range items {
				obj, ok := item.(PT)
				if !ok {
					return nil, fmt.Errorf("cache holds a %T, not a %T", item, new(T))
				}
				out = append(out, (*T)(obj))
			}
			return out, nil
		}
	}
	if err := c.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]*T, 0, len(items))
	for _, item := range items {
		// ExtractList points into list's items, not at copies of them.
		out = append(out, (*T)(item.(PT)))
	}
	return out, nil
}

// UnboundPods returns the pods no node has taken yet and that have not finished, ordered by
// namespace and name. As with Nodes, with a cache reader they are not deep copies: their maps,
// slices and pointers are the cache's. Read them, and copy before changing one: provisioning and
// disruption only read them, and deep copies of thousands of pending pods stayed alive through
// a batch's solve, when a scale-up's heap peaks.
func (c *Cluster) UnboundPods(ctx context.Context) ([]*corev1.Pod, error) {
	var pods corev1.PodList
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if c.indexed {
		opts = append(opts, client.MatchingFields{PodNodeNameField: ""})
	}
	if err := c.reader.List(ctx, &pods, opts...); err != nil {
		return nil, fmt.Errorf("listing unbound pods, %w", err)
	}
	var out []*corev1.Pod
	for i := range pods.Items {
		if pod := &pods.Items[i]; pod.Spec.NodeName == "" && !finished(pod) {
			out = append(out, pod)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out, nil
}

// DaemonSetPods returns one pod per DaemonSet, made from its template: what each new node will
// run besides the pods it is launched for.
func (c *Cluster) DaemonSetPods(ctx context.Context) ([]*corev1.Pod, error) {
	var daemonSets appsv1.DaemonSetList
	if err := c.reader.List(ctx, &daemonSets); err != nil {
		return nil, fmt.Errorf("listing daemonsets, %w", err)
	}
	out := make([]*corev1.Pod, 0, len(daemonSets.Items))
	for i := range daemonSets.Items {
		ds := &daemonSets.Items[i]
		pod := &corev1.Pod{Spec: *ds.Spec.Template.Spec.DeepCopy()}
		pod.Namespace = ds.Namespace
		pod.Name = ds.Name
		pod.Labels = ds.Spec.Template.Labels
		out = append(out, pod)
	}
	return out, nil
}

// NodePools returns every NodePool, ordered by name.
func (c *Cluster) NodePools(ctx context.Context) ([]*v1.NodePool, error) {
	var list v1.NodePoolList
	if err := c.reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing nodepools, %w", err)
	}
	out := make([]*v1.NodePool, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	slices.SortFunc(out, func(a, b *v1.NodePool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// NodeClaimsOf returns the NodeClaims labelled with the NodePool's name. They are the cache's
// own objects, not copies (the NodePool status counts them on every NodeClaim change, and copying
// them all was a fifth of a scale-up's allocations): callers must only read them.
func (c *Cluster) NodeClaimsOf(ctx context.Context, nodePool string) ([]*v1.NodeClaim, error) {
	var list v1.NodeClaimList
	if err := c.reader.List(ctx, &list, client.MatchingLabels{v1.NodePoolLabelKey: nodePool}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodeclaims of nodepool %s, %w", nodePool, err)
	}
	out := make([]*v1.NodeClaim, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
