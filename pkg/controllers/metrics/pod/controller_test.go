package pod_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/metrics/pod"
)

// TestPodMetrics walks pods through their life against the API server, reconciling by hand, and
// reads the metrics from the registry the controller was given.
func TestPodMetrics(t *testing.T) {
	ctx := t.Context()
	reg := prometheus.NewRegistry()
	clk := clocktesting.NewFakeClock(time.Now())
	c, err := pod.NewController(env.Client, clk, reg)
	if err != nil {
		t.Fatal(err)
	}
	reconcileAll := func(t *testing.T, pods ...*corev1.Pod) {
		t.Helper()
		for _, p := range pods {
			if _, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
				t.Fatalf("Reconcile %s: %v", p.Name, err)
			}
		}
	}

	testkit.Create(t, env.Client, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{
		v1.NodePoolLabelKey: "default", corev1.LabelTopologyZone: "test-zone-a", corev1.LabelArchStable: "amd64",
		v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, corev1.LabelInstanceTypeStable: "m7i.large",
	}}})
	unbound := newPod("unbound", "")
	bound := newPod("app", "node-a")
	bound.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "app-7d4b9", UID: "0a8e2b1c", Controller: new(true)}}
	testkit.Create(t, env.Client, unbound, bound)

	t.Run("pending pods", func(t *testing.T) {
		clk.SetTime(unbound.CreationTimestamp.Add(30 * time.Second))
		reconcileAll(t, unbound, bound)
		expectState(t, reg,
			`karpenter_pods_state{arch="amd64",capacity_type="on-demand",instance_type="m7i.large",managed="true",name="app",namespace="default",node="node-a",nodepool="default",owner="/apis/apps/v1/namespaces/default/replicasets/app-7d4b9",phase="Pending",ready="false",scheduled="true",zone="test-zone-a"} 1`,
			`karpenter_pods_state{arch="",capacity_type="",instance_type="",managed="false",name="unbound",namespace="default",node="",nodepool="",owner="",phase="Pending",ready="false",scheduled="false",zone=""} 1`)
		expectUnbound(t, reg, `karpenter_pods_current_unbound_time_seconds{name="unbound",namespace="default"} 30`)
		if n, _ := startup(t, reg); n != 0 {
			t.Errorf("startup observations = %d before any pod is Ready, want 0", n)
		}
	})

	t.Run("ready once, observed once", func(t *testing.T) {
		setReady(t, bound, corev1.ConditionTrue, bound.CreationTimestamp.Add(7*time.Second))
		reconcileAll(t, bound, bound, bound)
		// Readiness flapping is not a second startup.
		setReady(t, bound, corev1.ConditionFalse, bound.CreationTimestamp.Add(time.Minute))
		reconcileAll(t, bound)
		setReady(t, bound, corev1.ConditionTrue, bound.CreationTimestamp.Add(2*time.Minute))
		reconcileAll(t, bound, bound)
		if n, sum := startup(t, reg); n != 1 || sum != 7 {
			t.Errorf("startup observations = %d summing %vs, want 1 of 7s", n, sum)
		}
		expectState(t, reg,
			`karpenter_pods_state{arch="amd64",capacity_type="on-demand",instance_type="m7i.large",managed="true",name="app",namespace="default",node="node-a",nodepool="default",owner="/apis/apps/v1/namespaces/default/replicasets/app-7d4b9",phase="Running",ready="true",scheduled="true",zone="test-zone-a"} 1`,
			`karpenter_pods_state{arch="",capacity_type="",instance_type="",managed="false",name="unbound",namespace="default",node="",nodepool="",owner="",phase="Pending",ready="false",scheduled="false",zone=""} 1`)
	})

	t.Run("ready when first seen is not observed", func(t *testing.T) {
		late := newPod("late", "node-a")
		testkit.Create(t, env.Client, late)
		setReady(t, late, corev1.ConditionTrue, late.CreationTimestamp.Add(3*time.Second))
		reconcileAll(t, late, late)
		if n, _ := startup(t, reg); n != 1 {
			t.Errorf("startup observations = %d, want still 1", n)
		}
		remove(t, late)
		reconcileAll(t, late)
	})

	t.Run("gone pods lose their series", func(t *testing.T) {
		remove(t, unbound, bound)
		reconcileAll(t, unbound, bound)
		expectState(t, reg)
		expectUnbound(t, reg)
		if n, _ := startup(t, reg); n != 1 {
			t.Errorf("startup observations = %d after deletion, want 1", n)
		}
	})

	t.Run("a new pod under an old name starts again", func(t *testing.T) {
		again := newPod("app", "node-a")
		testkit.Create(t, env.Client, again)
		reconcileAll(t, again)
		setReady(t, again, corev1.ConditionTrue, again.CreationTimestamp.Add(4*time.Second))
		reconcileAll(t, again)
		if n, sum := startup(t, reg); n != 2 || sum != 11 {
			t.Errorf("startup observations = %d summing %vs, want 2 of 11s", n, sum)
		}
		remove(t, again)
		reconcileAll(t, again)
		expectState(t, reg)
	})
}

// TestRegistersOnce: a second controller on the same registry is refused, since each keeps its
// own records.
func TestRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := pod.NewController(env.Client, clocktesting.NewFakeClock(time.Now()), reg); err != nil {
		t.Fatal(err)
	}
	if _, err := pod.NewController(env.Client, clocktesting.NewFakeClock(time.Now()), reg); err == nil {
		t.Error("a second controller registered on the same registry")
	}
}

func newPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
}

func remove(t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if err := env.Client.Delete(t.Context(), p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatalf("deleting pod %s: %v", p.Name, err)
		}
	}
}

// setReady sets the pod Running with its Ready condition at status since at, as kubelet would.
func setReady(t *testing.T, p *corev1.Pod, status corev1.ConditionStatus, at time.Time) {
	t.Helper()
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(at)}}
	if err := env.Client.Status().Update(t.Context(), p); err != nil {
		t.Fatalf("setting pod %s Ready=%s: %v", p.Name, status, err)
	}
}

func expectState(t *testing.T, reg *prometheus.Registry, series ...string) {
	t.Helper()
	expect(t, reg, "karpenter_pods_state", series)
}

// expectUnbound checks the unbound times under both names, Joiner's older and Karpenter v1's.
func expectUnbound(t *testing.T, reg *prometheus.Registry, series ...string) {
	t.Helper()
	expect(t, reg, "karpenter_pods_current_unbound_time_seconds", series)
	var renamed []string
	for _, s := range series {
		renamed = append(renamed, strings.Replace(s, "karpenter_pods_current_unbound_time_seconds", "karpenter_pods_unbound_time_seconds", 1))
	}
	expect(t, reg, "karpenter_pods_unbound_time_seconds", renamed)
}

// expect compares the gauge's series, written as in the text exposition format with labels
// sorted, with want.
func expect(t *testing.T, reg *prometheus.Registry, metric string, want []string) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			got = append(got, fmt.Sprintf("%s{%s} %v", metric, strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", metric, diff)
	}
}

// startup returns the number and sum of karpenter_pods_startup_duration_seconds observations.
func startup(t *testing.T, reg *prometheus.Registry) (uint64, float64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "karpenter_pods_startup_duration_seconds" {
			s := f.GetMetric()[0].GetSummary()
			return s.GetSampleCount(), s.GetSampleSum()
		}
	}
	t.Fatal("karpenter_pods_startup_duration_seconds not registered")
	return 0, 0
}
