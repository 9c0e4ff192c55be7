package provisioning_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
)

// perPoolCloud offers each NodePool its own instance types, as node classes with different
// settings would.
type perPoolCloud struct {
	*fake.CloudProvider
	types map[string][]*cloudprovider.InstanceType
}

func (p *perPoolCloud) GetInstanceTypes(_ context.Context, np *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return p.types[np.Name], nil
}

func TestEachNodePoolLaunchesOnlyItsOwnInstanceTypes(t *testing.T) {
	reset(t)
	all := instanceTypes() // small.2x, large.8x
	cloud := &perPoolCloud{CloudProvider: &fake.CloudProvider{}, types: map[string][]*cloudprovider.InstanceType{
		"big-only": {all[1]},
		"any":      all,
	}}
	h := newHarness(t)
	var err error
	h.c, err = provisioning.NewController(env.Client, cluster.New(env.Client, false), cloud, h.clock, h.events, prometheus.NewRegistry(), idle, max)
	if err != nil {
		t.Fatal(err)
	}
	create(t, nodePool("big-only", func(np *v1.NodePool) { np.Spec.Weight = new(int32(10)) }), nodePool("any"))
	create(t, pendingPod("a", "1", "1Gi"))
	h.runBatch(t)

	claims := nodeClaims(t)
	if len(claims) != 1 {
		t.Fatalf("got %d NodeClaims, want 1", len(claims))
	}
	nc := &claims[0]
	if nc.Labels[v1.NodePoolLabelKey] != "big-only" {
		t.Errorf("NodePool = %q, want big-only (the higher weight)", nc.Labels[v1.NodePoolLabelKey])
	}
	if got := requirement(nc, corev1.LabelInstanceTypeStable); got == nil || !slices.Equal(got.Values, []string{"large.8x"}) {
		t.Errorf("instance types = %+v, want only big-only's large.8x", got)
	}
}

// nodeCostCloud prices every node of a NodePool beyond its instance, as the AWS provider prices
// the EBS volumes of its EC2NodeClass.
type nodeCostCloud struct {
	*fake.CloudProvider
	cost float64
}

func (c *nodeCostCloud) NodeCost(context.Context, *v1.NodePool) (float64, error) { return c.cost, nil }

// TestNodeCostsShapeThePlan: four 1500m pods cost less on four small nodes ($0.40/h) than on one
// large ($0.45/h) by instance price alone, but with $0.05/h per node (the cloud's $0.02 for
// volumes plus the operator's $0.03) one large node is cheaper ($0.50 against $0.60).
func TestNodeCostsShapeThePlan(t *testing.T) {
	small, large := instanceTypes()[0], *instanceTypes()[1]
	large.Offerings = []*cloudprovider.Offering{{Zone: "test-zone-a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.45, Available: true}}
	tests := []struct {
		name      string
		cloudCost float64
		flag      float64
		want      map[string]int // NodeClaims per instance type
	}{
		{"instance prices only", 0, 0, map[string]int{"small.2x": 4}},
		{"with volumes and a per-node licence", 0.02, 0.03, map[string]int{"large.8x": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reset(t)
			cloud := &nodeCostCloud{CloudProvider: &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{small, &large}}, cost: tt.cloudCost}
			h := newHarness(t)
			var err error
			h.c, err = provisioning.NewController(env.Client, cluster.New(env.Client, false), cloud, h.clock, h.events, prometheus.NewRegistry(), idle, max,
				provisioning.WithNodeCost(tt.flag))
			if err != nil {
				t.Fatal(err)
			}
			create(t, nodePool("default"))
			for _, name := range []string{"a", "b", "c", "d"} {
				create(t, pendingPod(name, "1500m", "1Gi"))
			}
			h.runBatch(t)
			got := map[string]int{}
			for _, nc := range nodeClaims(t) {
				r := requirement(&nc, corev1.LabelInstanceTypeStable)
				if r == nil || len(r.Values) == 0 {
					t.Fatalf("NodeClaim %s has no instance types", nc.Name)
				}
				got[r.Values[0]]++
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("NodeClaims by cheapest instance type = %v, want %v", got, tt.want)
			}
		})
	}
}
