package podevents_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/internal/testenv"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/podevents"
)

// The package's one control plane with the controller running on a fake clock.
var (
	env      *testenv.Environment
	fakeTime *clocktesting.FakeClock
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, testenv.CreateDefaultServiceAccount, startController))
}

// startController runs the controller on the fake clock.
func startController(ctx context.Context, e *testenv.Environment) error {
	fakeTime = clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	return e.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error {
		return podevents.NewController(mgr.GetClient(), fakeTime).Register(ctx, mgr)
	})
}

// waitLastPodEvent polls until the NodeClaim's lastPodEventTime is want.
func waitLastPodEvent(t *testing.T, name string, want time.Time) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	nc := &v1.NodeClaim{}
	for {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, nc); err != nil {
			t.Fatal(err)
		}
		if nc.Status.LastPodEventTime.Time.Equal(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lastPodEventTime = %s, want %s", nc.Status.LastPodEventTime, want)
		}
		time.Sleep(50 * time.Millisecond) // polling the API server, not waiting for a cache
	}
}

func newPod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if err := env.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pod) })
	return pod
}

// bind binds the pod to the node as kube-scheduler does, through the Binding subresource.
func bind(t *testing.T, pod *corev1.Pod, nodeName string) {
	t.Helper()
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: nodeName}}
	if err := env.Client.SubResource("binding").Create(t.Context(), pod, binding); err != nil {
		t.Fatal(err)
	}
}

// TestLastPodEventTime: binding a pod and deleting it each record the time; a second event within
// the dedupe window is recorded when the window ends, not dropped.
func TestLastPodEventTime(t *testing.T) {
	ctx := t.Context()
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "busy"},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		},
	}
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), nc) })
	nc.Status.NodeName = "node-busy"
	if err := env.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}

	first := newPod(t, "first")
	bind(t, first, "node-busy")
	t0 := fakeTime.Now()
	waitLastPodEvent(t, nc.Name, t0)

	fakeTime.Step(time.Minute)
	if err := env.Client.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	waitLastPodEvent(t, nc.Name, t0.Add(time.Minute))

	// Within the window: held back until the window ends.
	fakeTime.Step(2 * time.Second)
	second := newPod(t, "second")
	bind(t, second, "node-busy")
	fakeTime.Step(podevents.DedupeWindow)
	waitLastPodEvent(t, nc.Name, t0.Add(time.Minute+2*time.Second+podevents.DedupeWindow))
}
