package instancetype

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// TestListReusedUntilAnInputChanges: List serves the instance types it built while nothing they
// were built from changed, and builds them again when the node class's settings, the unavailable
// offerings (marked, or expired) or the prices change.
func TestListReusedUntilAnInputChanges(t *testing.T) {
	p, prices, clk := newTestProvider(t)
	ctx := t.Context()
	nodeClass := &awsv1.EC2NodeClass{}
	list := func(nc *awsv1.EC2NodeClass) []*cloudprovider.InstanceType {
		t.Helper()
		its, err := p.List(ctx, nc)
		if err != nil {
			t.Fatal(err)
		}
		return its
	}
	same := func(a, b []*cloudprovider.InstanceType) bool { return len(a) > 0 && len(a) == len(b) && a[0] == b[0] }
	first := list(nodeClass)
	if again := list(nodeClass); !same(first, again) {
		t.Fatal("List built the instance types again with nothing changed")
	}

	maxPods := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{Kubelet: &awsv1.KubeletConfiguration{MaxPods: new(int32(8))}}}
	capped := list(maxPods)
	if same(first, capped) {
		t.Fatal("a node class with kubelet maxPods 8 got the instance types of one without")
	}
	if pods := capped[0].Capacity[corev1.ResourcePods]; pods.Value() != 8 {
		t.Errorf("with maxPods 8, %s has %s pods", capped[0].Name, &pods)
	}
	if !same(first, list(nodeClass)) {
		t.Error("another node class's settings evicted the first's instance types")
	}

	o := first[0].Offerings[0]
	p.unavailable.MarkUnavailable(first[0].Name, o.Zone, o.CapacityType)
	marked := list(nodeClass)
	if same(first, marked) || marked[0].Offerings[0].Available {
		t.Fatalf("offering %s %s %s marked unavailable, but List still offers it", first[0].Name, o.Zone, o.CapacityType)
	}
	clk.Step(UnavailableTTL)
	expired := list(nodeClass)
	if same(marked, expired) || !expired[0].Offerings[0].Available {
		t.Fatalf("offering %s %s %s still unavailable after %s", first[0].Name, o.Zone, o.CapacityType, UnavailableTTL)
	}

	clk.Step(pricing.SpotRefreshInterval)
	if err := prices.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if same(expired, list(nodeClass)) {
		t.Error("prices were refreshed, but List served the instance types priced before")
	}
}

// BenchmarkList is List as a launch, a drift check or a batch calls it, with nothing changed
// since the last call (served from what it built), against building the region's types again
// each time (what every call did before):
//
//	go test ./pkg/aws/instancetype -run '^$' -bench List -benchmem
func BenchmarkList(b *testing.B) {
	p, _, _ := newTestProvider(b)
	nodeClass := &awsv1.EC2NodeClass{}
	if _, err := p.List(b.Context(), nodeClass); err != nil {
		b.Fatal(err)
	}
	b.Run("reused", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.List(b.Context(), nodeClass); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("built", func(b *testing.B) {
		described, zones, _, err := p.describe(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := build(described, zones, p.prices, p.unavailable, nodeClass, p.vmOverhead); err != nil {
				b.Fatal(err)
			}
		}
	})
}
