package testkit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// InstanceType is a fake cloud provider's type: 2 vCPU, 4Gi and 29 pods, linux on arch, offered
// on demand in us-west-2a at price an hour, with the requirements the scheduler reads.
func InstanceType(name, arch string, price float64) *cloudprovider.InstanceType {
	return &cloudprovider.InstanceType{
		Name: name,
		Requirements: map[string][]string{corev1.LabelInstanceTypeStable: {name}, corev1.LabelArchStable: {arch}, corev1.LabelOSStable: {"linux"},
			corev1.LabelTopologyZone: {"us-west-2a"}, v1.CapacityTypeLabelKey: {v1.CapacityTypeOnDemand}},
		Capacity:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("29")},
		Offerings: []*cloudprovider.Offering{{Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true}},
	}
}

// DefaultInstanceTypes is the fake cloud provider's list for tests that need a type to launch
// and do not choose among types: m7i.large (2 vCPU, 8Gi, 29 pods) on demand in us-west-2a at
// 0.1 an hour. A new list each call, so a test may edit it.
func DefaultInstanceTypes() []*cloudprovider.InstanceType {
	return []*cloudprovider.InstanceType{{
		Name:      "m7i.large",
		Capacity:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")},
		Offerings: []*cloudprovider.Offering{{Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.1, Available: true}},
	}}
}

// Create creates objs with c, failing the test on the first error.
func Create(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// CreateForTest is Create, and deletes each object when the test ends (not waiting for
// finalizers).
func CreateForTest(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		Create(t, c, o)
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
}
