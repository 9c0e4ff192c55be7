package node_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/metrics/node"
	"github.com/joinerhq/joiner/pkg/operator"
)

func resources(cpu, memory, pods string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse(pods)}
}

func pod(name, nodeName string, requests, limits corev1.ResourceList, owner string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: owner, Name: "o", UID: "u", Controller: new(true)}}
	}
	return p
}

// gather returns the value of the series of name whose labels include want, and how many match.
func gather(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) (float64, int) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	n := 0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, want) {
				v, n = m.GetGauge().GetValue(), n+1
			}
		}
	}
	return v, n
}

func matches(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			return false
		}
	}
	return true
}

// TestNodeMetrics measures a managed node with an application pod and a DaemonSet pod, and an
// unmanaged node, and reads back the gauges Karpenter's capacity dashboard queries.
func TestNodeMetrics(t *testing.T) {
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(created.Add(90 * time.Second))
	managed := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1", CreationTimestamp: metav1.NewTime(created), Labels: map[string]string{
			v1.NodePoolLabelKey: "default", corev1.LabelTopologyZone: "us-west-2a", corev1.LabelArchStable: "amd64",
			v1.CapacityTypeLabelKey: "spot", corev1.LabelInstanceTypeStable: "m7i.large", awsv1.LabelTopologyZoneID: "usw2-az1",
		}},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-1"},
		Status: corev1.NodeStatus{Capacity: resources("2", "8Gi", "29"), Allocatable: resources("1930m", "7Gi", "29")},
	}
	unmanaged := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "static", CreationTimestamp: metav1.NewTime(created)},
		Status:     corev1.NodeStatus{Capacity: resources("2", "4Gi", "10"), Allocatable: resources("2", "4Gi", "10")},
	}
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-abc", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Status: v1.NodeClaimStatus{ProviderID: managed.Spec.ProviderID}}
	app := pod("app", managed.Name, resources("1", "1Gi", "0"), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, "ReplicaSet")
	delete(app.Spec.Containers[0].Resources.Requests, corev1.ResourcePods)
	ds := pod("ds", managed.Name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}, "DaemonSet")
	done := pod("done", managed.Name, resources("4", "4Gi", "0"), nil, "")
	done.Status.Phase = corev1.PodSucceeded
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(managed, unmanaged, claim, app, ds, done).Build()

	reg := prometheus.NewRegistry()
	keys := append(v1.WellKnownLabels(), awsv1.WellKnownLabels()...)
	c, err := node.NewController(cluster.New(kube, false), clk, keys, reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Measure(t.Context()); err != nil {
		t.Fatal(err)
	}
	dims := map[string]string{"nodepool": "default", "zone": "us-west-2a", "arch": "amd64", "capacity_type": "spot",
		"instance_type": "m7i.large", "zone_id": "usw2-az1", "node_name": "ip-10-0-0-1", "managed": "true", "os": "", "region": ""}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range dims {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	for _, tt := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"karpenter_nodes_allocatable", with(map[string]string{"resource_type": "cpu"}), 1.93},
		{"karpenter_nodes_allocatable", with(map[string]string{"resource_type": "memory"}), 7 << 30},
		{"karpenter_nodes_allocatable", with(map[string]string{"resource_type": "pods"}), 29},
		{"karpenter_nodes_total_pod_requests", with(map[string]string{"resource_type": "cpu"}), 1.1},
		{"karpenter_nodes_total_pod_requests", with(map[string]string{"resource_type": "memory"}), 1 << 30},
		{"karpenter_nodes_total_pod_requests", with(map[string]string{"resource_type": "pods"}), 2},
		{"karpenter_nodes_total_pod_limits", with(map[string]string{"resource_type": "cpu"}), 2.2},
		{"karpenter_nodes_total_daemon_requests", with(map[string]string{"resource_type": "cpu"}), 0.1},
		{"karpenter_nodes_total_daemon_requests", with(map[string]string{"resource_type": "pods"}), 1},
		{"karpenter_nodes_total_daemon_limits", with(map[string]string{"resource_type": "cpu"}), 0.2},
		{"karpenter_nodes_system_overhead", with(map[string]string{"resource_type": "cpu"}), 0.07},
		{"karpenter_nodes_system_overhead", with(map[string]string{"resource_type": "memory"}), 1 << 30},
		{"karpenter_nodes_current_lifetime_seconds", dims, 90},
		{"karpenter_nodes_allocatable", map[string]string{"node_name": "static", "managed": "false", "nodepool": "", "resource_type": "cpu"}, 2},
		{"karpenter_cluster_utilization_percent", map[string]string{"resource_type": "cpu"}, 100 * 1.1 / 3.93},
	} {
		got, n := gather(t, reg, tt.metric, tt.labels)
		if n != 1 || got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("%s%v = %v (%d series), want %v in one series", tt.metric, tt.labels, got, n, tt.want)
		}
	}

	// A gone node leaves no series after the next measurement.
	if err := kube.Delete(t.Context(), unmanaged); err != nil {
		t.Fatal(err)
	}
	if err := c.Measure(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, n := gather(t, reg, "karpenter_nodes_allocatable", map[string]string{"node_name": "static"}); n != 0 {
		t.Errorf("%d series of a deleted node, want none", n)
	}
}

// TestLabelName: node label keys become Karpenter's metric label names, and two keys that would
// share one are refused.
func TestLabelName(t *testing.T) {
	for key, want := range map[string]string{
		v1.NodePoolLabelKey: "nodepool", corev1.LabelTopologyZone: "zone", corev1.LabelInstanceTypeStable: "instance_type",
		v1.CapacityTypeLabelKey: "capacity_type", awsv1.LabelTopologyZoneID: "zone_id", corev1.LabelWindowsBuild: "windows_build",
	} {
		if got := node.LabelName(key); got != want {
			t.Errorf("LabelName(%s) = %s, want %s", key, got, want)
		}
	}
	_, err := node.NewController(nil, clocktesting.NewFakeClock(time.Now()), []string{"a.example/zone", corev1.LabelTopologyZone}, prometheus.NewRegistry())
	if err == nil {
		t.Error("two keys named zone were accepted")
	}
}
