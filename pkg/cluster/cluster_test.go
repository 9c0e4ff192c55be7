package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

func nodeClaim(name, providerID string) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		},
		Status: v1.NodeClaimStatus{ProviderID: providerID},
	}
}

func pod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
}

func TestView(t *testing.T) {
	ctx := t.Context()
	launched := nodeClaim("default-launched", "fake:///zone/i-1")
	testkit.Create(t, env.Client, launched, nodeClaim("default-inflight", ""),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1"}, Spec: corev1.NodeSpec{ProviderID: "fake:///zone/i-1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "static"}},
		pod("running", "ip-10-0-0-1"), pod("done", "ip-10-0-0-1"), pod("unbound", ""),
		&appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent"}}},
				},
			},
		},
	)
	launched.Status.ProviderID = "fake:///zone/i-1"
	if err := env.Client.Status().Update(ctx, launched); err != nil {
		t.Fatal(err)
	}
	done := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "done"}, done); err != nil {
		t.Fatal(err)
	}
	done.Status.Phase = corev1.PodSucceeded
	if err := env.Client.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}

	view := cluster.New(env.Client, false)
	nodes, err := view.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Name, NodeClaim, NodePool string
		InFlight, Initialized     bool
		Pods                      []string
	}
	var got []summary
	for _, n := range nodes {
		s := summary{Name: n.Name(), NodePool: n.NodePool(), InFlight: n.InFlight(), Initialized: n.Initialized()}
		if n.NodeClaim != nil {
			s.NodeClaim = n.NodeClaim.Name
		}
		for _, p := range n.Pods {
			s.Pods = append(s.Pods, p.Name)
		}
		got = append(got, s)
	}
	want := []summary{
		{Name: "default-inflight", NodeClaim: "default-inflight", NodePool: "default", InFlight: true},
		{Name: "ip-10-0-0-1", NodeClaim: "default-launched", NodePool: "default", Pods: []string{"running"}},
		{Name: "static", Initialized: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Nodes (-want +got):\n%s", diff)
	}

	unbound, err := view.UnboundPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(unbound) != 1 || unbound[0].Name != "unbound" {
		t.Errorf("UnboundPods = %v, want [unbound]", names(unbound))
	}
	daemons, err := view.DaemonSetPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(daemons) != 1 || daemons[0].Name != "agent" || daemons[0].Labels["app"] != "agent" || daemons[0].Spec.Containers[0].Image != "agent" {
		t.Errorf("DaemonSetPods = %+v, want the agent's template", daemons)
	}
	claims, err := view.NodeClaimsOf(ctx, "default")
	if err != nil || len(claims) != 2 {
		t.Errorf("NodeClaimsOf(default) = %d NodeClaims, %v; want 2", len(claims), err)
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// copyRecorder is a reader that records, per list type, whether the caller asked for the
// cache's own objects (client.UnsafeDisableDeepCopy).
type copyRecorder struct {
	client.Reader
	uncopied map[string]bool
}

func (r *copyRecorder) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	r.uncopied[fmt.Sprintf("%T", list)] = o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy
	return r.Reader.List(ctx, list, opts...)
}

// TestNodesReadsWithoutCopies: Nodes reads the Nodes, NodeClaims and bound pods of a cache
// without copying them (its callers only read; copies were a quarter of a scale-up's
// allocations), nor the pending pods of UnboundPods (deep copies of every pending pod, alive through a
// provisioning batch's solve).
func TestNodesReadsWithoutCopies(t *testing.T) {
	r := &copyRecorder{Reader: env.Client, uncopied: map[string]bool{}}
	view := cluster.New(r, false)
	if _, err := view.Nodes(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, list := range []string{"*v1.NodeList", "*v1.NodeClaimList", "*v1.PodList"} {
		if !r.uncopied[list] {
			t.Errorf("Nodes listed %s with copies", list)
		}
	}
	clear(r.uncopied)
	if _, err := view.UnboundPods(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !r.uncopied["*v1.PodList"] {
		t.Error("UnboundPods listed pods with copies")
	}
}

// storeInformers are informers whose stores hold objects, and a cache.Informer of nothing else.
type storeInformers map[string]toolscache.Store

type storeInformer struct {
	cache.Informer
	store toolscache.Store
}

func (s storeInformer) GetStore() toolscache.Store { return s.store }

func (s storeInformers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	return storeInformer{store: s[fmt.Sprintf("%T", obj)]}, nil
}

// refusingReader fails every List: what ReadingStores reads must not be listed.
type refusingReader struct{ client.Reader }

func (refusingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("listed instead of reading the informers' stores")
}

// TestNodesReadsTheInformersStores: with ReadingStores, Nodes hands out the informers' own
// objects, not the copies of their top-level structs that even a List without deep copies makes
// (ten MiB a call at 5,000 pods).
func TestNodesReadsTheInformersStores(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Spec: corev1.NodeSpec{ProviderID: "fake:///zone/i-1"}}
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim-a"}, Status: v1.NodeClaimStatus{ProviderID: "fake:///zone/i-1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.PodSpec{NodeName: "node-a"}}
	stores := storeInformers{}
	for _, obj := range []client.Object{node, claim, pod} {
		store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
		if err := store.Add(obj); err != nil {
			t.Fatal(err)
		}
		stores[fmt.Sprintf("%T", obj)] = store
	}
	view := cluster.New(refusingReader{}, true, cluster.ReadingStores(stores))
	nodes, err := view.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].Node != node || nodes[0].NodeClaim != claim || len(nodes[0].Pods) != 1 || nodes[0].Pods[0] != pod {
		t.Errorf("Nodes = %+v, want the stores' node-a, claim-a and pod web themselves", nodes)
	}
}
