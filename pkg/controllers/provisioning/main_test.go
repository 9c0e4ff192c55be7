package provisioning_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

// recorded is one event the recorder saw.
type recorded struct {
	Regarding, Related, Reason, Note string
}

// recorder keeps every event, for assertions.
type recorder struct {
	mu     sync.Mutex
	events []recorded
}

func (r *recorder) Eventf(regarding, related runtime.Object, _, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := recorded{Regarding: name(regarding), Related: name(related), Reason: reason, Note: fmt.Sprintf(note, args...)}
	r.events = append(r.events, e)
}

func (r *recorder) byReason(reason string) []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recorded
	for _, e := range r.events {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func name(o runtime.Object) string {
	if o == nil {
		return ""
	}
	if m, ok := o.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}

// reset deletes every pod, NodeClaim and NodePool, so that each test starts from an empty
// cluster (the controller reads cluster-wide).
func reset(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var claims v1.NodeClaimList
	if err := env.Client.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	for i := range claims.Items {
		nc := &claims.Items[i]
		patch := client.MergeFrom(nc.DeepCopy())
		nc.Finalizers = nil
		if err := client.IgnoreNotFound(env.Client.Patch(ctx, nc, patch)); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []client.Object{&v1.NodeClaim{}, &v1.NodePool{}, &corev1.Node{}} {
		if err := env.Client.DeleteAllOf(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace("default"), client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.DeleteAllOf(ctx, &appsv1.DaemonSet{}, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
}

func nodePool(name string, mutate ...func(*v1.NodePool)) *v1.NodePool {
	np := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{
			ObjectMeta: v1.ObjectMeta{Labels: map[string]string{"example.com/team": name}},
			Spec: v1.NodeClaimTemplateSpec{
				Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: v1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}},
				NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			},
		}},
	}
	for _, m := range mutate {
		m(np)
	}
	return np
}

// pendingPod returns an unschedulable pod asking for cpu and memory.
func pendingPod(name, cpu, memory string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "test"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
			}},
		}}},
	}
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// create creates the objects, marking pods unschedulable as kube-scheduler would.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
		if pod, ok := o.(*corev1.Pod); ok {
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
			if err := env.Client.Status().Update(ctx, pod); err != nil {
				t.Fatalf("marking pod %s unschedulable: %v", pod.Name, err)
			}
		}
	}
}

// instanceTypes is a small catalogue: two on-demand sizes in one zone, cheapest first by size.
func instanceTypes() []*cloudprovider.InstanceType {
	mk := func(name, cpu, mem string, price float64) *cloudprovider.InstanceType {
		return &cloudprovider.InstanceType{
			Name:         name,
			Requirements: map[string][]string{corev1.LabelArchStable: {"amd64"}, corev1.LabelOSStable: {"linux"}},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110"),
			},
			Offerings: []*cloudprovider.Offering{
				{Zone: "test-zone-a", CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true},
			},
		}
	}
	return []*cloudprovider.InstanceType{mk("small.2x", "2", "8Gi", 0.1), mk("large.8x", "8", "32Gi", 0.4)}
}
