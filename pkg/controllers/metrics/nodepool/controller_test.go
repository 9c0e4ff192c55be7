package nodepool_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	cloudfake "github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/metrics/nodepool"
	"github.com/joinerhq/joiner/pkg/operator"
)

// series returns the gauge value of each series of name, keyed by its label values joined by ",",
// in the order of the labels' names.
func series(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			key := ""
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

func claim(name, pool, instanceType, capacityType, zone, providerID string) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: pool,
			corev1.LabelInstanceTypeStable: instanceType, v1.CapacityTypeLabelKey: capacityType, corev1.LabelTopologyZone: zone}},
		Status: v1.NodeClaimStatus{ProviderID: providerID},
	}
}

// TestNodePoolMetrics: usage, limits and cost per NodePool, and the offerings' prices and
// availability, as Karpenter's capacity dashboard and cost alerts read them.
func TestNodePoolMetrics(t *testing.T) {
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec:       v1.NodePoolSpec{Limits: v1.Limits{corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourceMemory: resource.MustParse("400Gi")}},
		Status:     v1.NodePoolStatus{Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4500m"), corev1.ResourceEphemeralStorage: resource.MustParse("20Gi")}},
	}
	broken := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Status: v1.NodePoolStatus{Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pool, broken,
		claim("a", "default", "m7i.large", "spot", "us-west-2a", "aws:///us-west-2a/i-a"),
		claim("b", "default", "m7i.large", "on-demand", "us-west-2b", "aws:///us-west-2b/i-b"),
		// Launching: no instance yet, no cost.
		claim("c", "default", "m7i.large", "on-demand", "us-west-2b", ""),
		claim("d", "broken", "m7i.large", "on-demand", "us-west-2b", "aws:///us-west-2b/i-d"),
	).Build()
	m7i := &cloudprovider.InstanceType{
		Name:     "m7i.large",
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")},
		Offerings: []*cloudprovider.Offering{
			{Zone: "us-west-2a", CapacityType: "spot", Price: 0.04, Available: true},
			{Zone: "us-west-2b", CapacityType: "on-demand", Price: 0.1008, Available: true},
			{Zone: "us-west-2c", CapacityType: "spot", Price: 0.05, Available: false},
		},
	}
	// The first NodePool read ("broken", by name) fails: its node class is not Ready.
	cloud := &cloudfake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{m7i},
		ErrorsFor: map[string][]error{cloudfake.MethodGetInstanceTypes: {cloudprovider.NewNodeClassNotReadyError(errors.New("not ready"))}}}
	reg := prometheus.NewRegistry()
	c, err := nodepool.NewController(cluster.New(kube, false), cloud, clocktesting.NewFakeClock(time.Now()), reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Measure(t.Context()); err == nil {
		t.Error("Measure hid the NodePool whose instance types failed")
	}
	for _, tt := range []struct {
		metric string
		want   map[string]float64
	}{
		{"karpenter_nodepools_usage", map[string]float64{
			"nodepool=default,resource_type=cpu": 4.5, "nodepool=default,resource_type=ephemeral_storage": 20 << 30, "nodepool=broken,resource_type=cpu": 2}},
		{"karpenter_nodepools_limit", map[string]float64{"nodepool=default,resource_type=cpu": 100, "nodepool=default,resource_type=memory": 400 << 30}},
		{"karpenter_nodepools_cost_total", map[string]float64{"nodepool=default": 0.04 + 0.1008}},
		{"karpenter_cloudprovider_instance_type_offering_price_estimate", map[string]float64{
			"capacity_type=spot,instance_type=m7i.large,zone=us-west-2a":      0.04,
			"capacity_type=on-demand,instance_type=m7i.large,zone=us-west-2b": 0.1008,
			"capacity_type=spot,instance_type=m7i.large,zone=us-west-2c":      0.05}},
		{"karpenter_cloudprovider_instance_type_offering_available", map[string]float64{
			"capacity_type=spot,instance_type=m7i.large,zone=us-west-2a":      1,
			"capacity_type=on-demand,instance_type=m7i.large,zone=us-west-2b": 1,
			"capacity_type=spot,instance_type=m7i.large,zone=us-west-2c":      0}},
		{"karpenter_cloudprovider_instance_type_cpu_cores", map[string]float64{"instance_type=m7i.large": 2}},
		{"karpenter_cloudprovider_instance_type_memory_bytes", map[string]float64{"instance_type=m7i.large": 8 << 30}},
	} {
		got := series(t, reg, tt.metric)
		if len(got) != len(tt.want) {
			t.Errorf("%s = %v, want %v", tt.metric, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9 {
				t.Errorf("%s{%s} = %v (present %v), want %v", tt.metric, k, g, ok, v)
			}
		}
	}

	// Once the node class is Ready the NodePool is priced too.
	if err := c.Measure(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := series(t, reg, "karpenter_nodepools_cost_total")["nodepool=broken"]; math.Abs(got-0.1008) > 1e-9 {
		t.Errorf("cost of nodepool broken = %v, want 0.1008", got)
	}
}
