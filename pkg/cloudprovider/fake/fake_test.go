package fake_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
)

func TestFake(t *testing.T) {
	ctx := t.Context()
	cp := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{{
		Name:     "m7i.large",
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Offerings: []*cloudprovider.Offering{
			{Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot, Available: false},
			{Zone: "us-west-2b", CapacityType: v1.CapacityTypeSpot, Available: true},
		},
	}}}
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-abcde"}}

	cp.ErrorsFor = map[string][]error{fake.MethodCreate: {cloudprovider.NewInsufficientCapacityError(errors.New("ice"))}}
	if _, err := cp.Create(ctx, nc); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Fatalf("first Create error = %v, want the queued InsufficientCapacityError", err)
	}
	launched, err := cp.Create(ctx, nc)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got := launched.Labels[corev1.LabelTopologyZone]; got != "us-west-2b" {
		t.Errorf("zone = %q, want the available offering's us-west-2b", got)
	}
	if again, err := cp.Create(ctx, nc); err != nil || again.Status.ProviderID != launched.Status.ProviderID {
		t.Errorf("Create again = %v, %v; want the instance already launched, %s", again, err, launched.Status.ProviderID)
	}
	if _, err := cp.Get(ctx, launched.Status.ProviderID); err != nil {
		t.Errorf("Get: %v", err)
	}
	if err := cp.Delete(ctx, launched); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if err := cp.Delete(ctx, launched); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("second Delete error = %v, want NodeClaimNotFound", err)
	}
	cp.NextError = errors.New("once")
	if _, err := cp.List(ctx); err == nil {
		t.Error("List ignored NextError")
	}
	if list, err := cp.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("List = %v, %v; want empty, nil", list, err)
	}
	want := []fake.Call{
		{Method: fake.MethodCreate, Arg: "default-abcde"},
		{Method: fake.MethodCreate, Arg: "default-abcde"},
		{Method: fake.MethodCreate, Arg: "default-abcde"},
		{Method: fake.MethodGet, Arg: launched.Status.ProviderID},
		{Method: fake.MethodDelete, Arg: "default-abcde"},
		{Method: fake.MethodDelete, Arg: "default-abcde"},
		{Method: fake.MethodList},
		{Method: fake.MethodList},
	}
	if diff := cmp.Diff(want, cp.Calls()); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
}
