package provisioning_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestDeletingNodePoolGetsNoPods: a NodePool being deleted launches nothing, even when it is the
// heaviest (upstream provisioning suite: NodePools that are deleting are ignored).
func TestDeletingNodePoolGetsNoPods(t *testing.T) {
	reset(t)
	h := newHarness(t)
	heavy := int32(100)
	leaving := nodePool("leaving", func(np *v1.NodePool) {
		np.Finalizers = []string{"example.com/hold"}
		np.Spec.Weight = &heavy
	})
	create(t, leaving, nodePool("default"))
	// t.Context is canceled by the time cleanups run.
	t.Cleanup(func() {
		patch := client.MergeFrom(leaving.DeepCopy())
		leaving.Finalizers = nil
		if err := client.IgnoreNotFound(env.Client.Patch(context.Background(), leaving, patch)); err != nil {
			t.Error(err)
		}
	})
	if err := env.Client.Delete(t.Context(), leaving); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("a", "500m", "1Gi"))
	h.runBatch(t)

	claims := nodeClaims(t)
	if len(claims) != 1 || claims[0].Labels[v1.NodePoolLabelKey] != "default" {
		t.Fatalf("NodeClaims %+v, want one of NodePool default", claims)
	}
}

// TestNodeClaimsCarryTemplateAnnotations: the NodePool template's annotations are on its
// NodeClaims beside Joiner's own (upstream provisioning suite "Annotations").
func TestNodeClaimsCarryTemplateAnnotations(t *testing.T) {
	reset(t)
	h := newHarness(t)
	create(t, nodePool("default", func(np *v1.NodePool) {
		np.Spec.Template.Annotations = map[string]string{"example.com/owner": "team-a"}
	}), pendingPod("a", "500m", "1Gi"))
	h.runBatch(t)

	claims := nodeClaims(t)
	if len(claims) != 1 {
		t.Fatalf("got %d NodeClaims, want 1", len(claims))
	}
	if got := claims[0].Annotations["example.com/owner"]; got != "team-a" {
		t.Errorf("annotations %v, want example.com/owner=team-a from the template", claims[0].Annotations)
	}
	if claims[0].Annotations[v1.NodePoolHashAnnotationKey] == "" {
		t.Errorf("annotations %v lack the NodePool hash", claims[0].Annotations)
	}
}
