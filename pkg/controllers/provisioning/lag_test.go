package provisioning_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
)

// laggingClient is a client whose reads do not show NodeClaims while hide is set, as a cache
// that has not caught up with a create would.
type laggingClient struct {
	client.Client
	hide atomic.Bool
}

func (l *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1.NodeClaim); ok && l.hide.Load() {
		return apierrors.NewNotFound(schema.GroupResource{Group: v1.Group, Resource: "nodeclaims"}, key.Name)
	}
	return l.Client.Get(ctx, key, obj, opts...)
}

func (l *laggingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*v1.NodeClaimList); ok && l.hide.Load() {
		return nil
	}
	return l.Client.List(ctx, list, opts...)
}

func TestWaitsForTheCacheToShowCreatedNodeClaims(t *testing.T) {
	reset(t)
	lagging := &laggingClient{Client: env.Client}
	h := newHarness(t)
	var err error
	h.c, err = provisioning.NewController(lagging, cluster.New(lagging, false), &fake.CloudProvider{InstanceTypes: instanceTypes()}, h.clock, h.events, prometheus.NewRegistry(), idle, max)
	if err != nil {
		t.Fatal(err)
	}
	create(t, nodePool("default"), pendingPod("a", "1", "1Gi"))
	h.runBatch(t)
	if n := len(nodeClaims(t)); n != 1 {
		t.Fatalf("first batch created %d NodeClaims, want 1", n)
	}

	// The cache has not seen the NodeClaim yet: the next batch must wait rather than launch the
	// pod a second node.
	lagging.hide.Store(true)
	h.c.Trigger()
	h.clock.Step(idle)
	res, err := h.c.Reconcile(t.Context(), reconcile.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Second {
		t.Errorf("RequeueAfter = %s while the cache lags, want a short wait", res.RequeueAfter)
	}
	if n := len(nodeClaims(t)); n != 1 {
		t.Fatalf("a batch run while the cache lagged made %d NodeClaims, want still 1", n)
	}

	lagging.hide.Store(false)
	if _, err := h.c.Reconcile(t.Context(), reconcile.Request{}); err != nil {
		t.Fatal(err)
	}
	if n := len(nodeClaims(t)); n != 1 {
		t.Fatalf("got %d NodeClaims once the cache caught up, want 1", n)
	}
}
