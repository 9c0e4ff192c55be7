package provisioning_test

import (
	"context"
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
