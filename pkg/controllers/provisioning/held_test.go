package provisioning_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

// TestHeldNodePoolIsNotLaunched: a NodePool whose nodes failed MaxLaunchesPerCause times for one
// certain cause, with the inputs unchanged since, launches nothing; its pods' FailedScheduling
// event names the cause, and the batch is looked at again. When the hold lapses it launches.
func TestHeldNodePoolIsNotLaunched(t *testing.T) {
	reset(t)
	h := newHarness(t)
	np := nodePool("held")
	create(t, np)
	fp, err := joinfailure.Inputs(t.Context(), env.Client, h.cloud, np)
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	var f *joinfailure.Failure
	for _, nc := range []string{"held-a", "held-b"} {
		raw, f = joinfailure.Record(f, nc, "NodeRoleNotAuthorized", "the kubelet is refused 401 Unauthorized; map the node role", fp, h.clock.Now())
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Annotations = map[string]string{v1.JoinFailureAnnotationKey: raw}
	if err := env.Client.Patch(t.Context(), np, patch); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("waits", "1", "1Gi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"example.com/team": "held"} }))

	h.c.Trigger()
	h.clock.Step(idle)
	res, err := h.c.Reconcile(t.Context(), reconcile.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter == 0 {
		t.Errorf("a batch with a held NodePool did not ask to be run again")
	}
	if n := len(nodeClaims(t)); n != 0 {
		t.Fatalf("%d NodeClaims created for a held NodePool", n)
	}
	failed := h.events.byReason(provisioning.ReasonFailedScheduling)
	want := `nodepool "held": NodePoolNodesNotJoining: its nodes fail to join: NodeRoleNotAuthorized: the kubelet is refused 401 Unauthorized; map the node role`
	if len(failed) != 1 || !strings.Contains(failed[0].Note, want) {
		t.Fatalf("FailedScheduling events %+v, want one naming %q", failed, want)
	}

	h.clock.Step(joinfailure.DefaultHold)
	h.runBatch(t)
	if n := len(nodeClaims(t)); n != 1 {
		t.Errorf("%d NodeClaims after the hold lapsed, want 1", n)
	}
	for _, nc := range nodeClaims(t) {
		if nc.Labels[v1.NodePoolLabelKey] != "held" {
			t.Errorf("NodeClaim %s of nodepool %q", nc.Name, nc.Labels[v1.NodePoolLabelKey])
		}
	}
}
