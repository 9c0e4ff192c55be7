package disruption_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// replaceable gives the harness a cheaper type than the node's and makes a NodePool with one
// on-demand m7i.large node whose pod fits on it: a single-node replacement saving $0.05/h.
func replaceable(t *testing.T, pool string, harnesses ...*harness) (*v1.NodeClaim, *corev1.Node) {
	t.Helper()
	for _, h := range harnesses {
		h.cloud.InstanceTypes = []*cloudprovider.InstanceType{
			instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand),
			instanceType("c7i.small", 0.05, v1.CapacityTypeOnDemand),
		}
	}
	newNodePool(t, pool, underutilizedPool)
	nc, node := newNode(t, pool, pool, onDemand)
	newPod(t, pool, node.Name, requesting("500m", pool))
	return nc, node
}

// initialize marks the NodeClaim Initialized.
func initialize(t *testing.T, nc *v1.NodeClaim) {
	t.Helper()
	nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
}

// annotations returns the NodeClaim's annotations as the API server has them.
func annotations(t *testing.T, nc *v1.NodeClaim) map[string]string {
	t.Helper()
	got := &v1.NodeClaim{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), got); err != nil {
		t.Fatal(err)
	}
	return got.Annotations
}

// TestNewLeaderResumesReplacement: a leader taints a node and launches its replacement, and is
// killed. The next leader finishes the command from what the first recorded on the NodeClaim:
// it deletes the node once the replacement is Initialized, or untaints it and forgets the
// record when the replacement is gone; a node tainted with no record is untainted. (A new
// leader used to untaint every tainted node and forget its command: under kills closer together
// than a replacement's launch, no node was ever replaced.)
func TestNewLeaderResumesReplacement(t *testing.T) {
	for _, tt := range []struct {
		name string
		// replacement is done to the replacement before the new leader's pass.
		replacement func(t *testing.T, nc *v1.NodeClaim)
		// unrecorded removes the record, as if the leader was killed between taint and record.
		unrecorded  bool
		wantDeleted bool
	}{
		{name: "initialized", replacement: initialize, wantDeleted: true},
		{name: "launching", replacement: func(*testing.T, *v1.NodeClaim) {}},
		{name: "gone", replacement: func(t *testing.T, nc *v1.NodeClaim) {
			if err := env.Client.Delete(t.Context(), nc); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "unrecorded", replacement: initialize, unrecorded: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first, second := newController(t), newController(t)
			pool := "resume-" + tt.name
			nc, node := replaceable(t, pool, first, second)
			replacement := launchReplacement(t, first, node)
			if tt.unrecorded {
				patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"joiner.dev/disruption-command":null}}}`))
				if err := env.Client.Patch(t.Context(), nc, patch); err != nil {
					t.Fatal(err)
				}
			}
			tt.replacement(t, replacement)
			res, err := second.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(res.Deleted, nc.Name); got != tt.wantDeleted {
				t.Errorf("new leader deleted %v; want %s deleted: %v", res.Deleted, nc.Name, tt.wantDeleted)
			}
			wantTainted := tt.name == "launching"
			if !tt.wantDeleted && tainted(t, node) != wantTainted {
				t.Errorf("candidate tainted %v after the new leader's pass, want %v", !wantTainted, wantTainted)
			}
			if !tt.wantDeleted && !wantTainted {
				// (The pass may decide the node again, and record that decision afresh.)
				if v, ok := annotations(t, nc)["joiner.dev/disruption-command"]; ok {
					t.Errorf("command record %q left on the kept candidate", v)
				}
			}
			if tt.name != "launching" {
				return
			}
			// Still launching: the new leader waits for it, and the node is neither a candidate
			// again nor untainted; once initialized, the node goes.
			initialize(t, replacement)
			res, err = second.Disrupt(t.Context())
			if err != nil || !slices.Contains(res.Deleted, nc.Name) {
				t.Errorf("after the replacement initialized the new leader deleted %v (%v), want %s", res.Deleted, err, nc.Name)
			}
		})
	}
}

// TestNewLeaderResumesValidation: a leader decides a command and is killed before the
// validation period passes. A new leader that decides the same command validates it
// ValidationPeriod after the first decision, not after its own, so that kills closer together
// than a leader's start-up plus the validation period still let commands through; a decision
// older than MaxDecisionAge starts the period over.
func TestNewLeaderResumesValidation(t *testing.T) {
	for _, tt := range []struct {
		name         string
		after        time.Duration
		wantLaunched bool
	}{
		{name: "within", after: disruption.ValidationPeriod, wantLaunched: true},
		{name: "partly", after: disruption.ValidationPeriod / 3},
		{name: "too-old", after: disruption.MaxDecisionAge + time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first, second := newController(t), newController(t)
			pool := "revalidate-" + tt.name
			_, node := replaceable(t, pool, first, second)
			decided, err := first.Disrupt(t.Context())
			if err != nil || !strings.Contains(decided.Decided, "replacing") {
				t.Fatalf("first leader decided %q (%v), want a replacement", decided.Decided, err)
			}
			second.clock.SetTime(first.clock.Now().Add(tt.after))
			again, err := second.Disrupt(t.Context())
			if err != nil || !strings.Contains(again.Decided, "replacing") {
				t.Fatalf("new leader decided %q (%v), want the same replacement", again.Decided, err)
			}
			wantWait := disruption.ValidationPeriod - tt.after
			if tt.after > disruption.ValidationPeriod {
				wantWait = disruption.ValidationPeriod
			}
			if wait := max(again.RequeueAfter, 0); wait > max(wantWait, time.Millisecond) {
				t.Errorf("new leader waits %s to validate, want at most %s", wait, wantWait)
			}
			res, err := second.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range res.Launched {
				cleanup(t, &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}})
			}
			if got := len(res.Launched) == 1; got != tt.wantLaunched {
				t.Errorf("new leader's next pass at once launched %v, want a replacement: %v", res.Launched, tt.wantLaunched)
			}
			if tainted(t, node) != tt.wantLaunched {
				t.Errorf("candidate tainted %v, want %v", !tt.wantLaunched, tt.wantLaunched)
			}
		})
	}
}

// TestUntaintDespiteHeartbeat: a replacement fails, and the kubelet's heartbeat changes the
// Node between the rollback's read and its patch: the candidate is untainted all the same. (The
// rollback gave up on the conflict and left the node tainted, counted as disrupting against its
// NodePool's budget, with no command left to finish it.)
func TestUntaintDespiteHeartbeat(t *testing.T) {
	armed, beats := false, 0
	kube := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if node, ok := obj.(*corev1.Node); ok && armed && beats == 0 {
				beats++
				heartbeat(t, ctx, c, node.Name)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	h := newHarness(t, kube, cluster.New(env.Client, false))
	nc, node := replaceable(t, "untaint-heartbeat", h)
	replacement := launchReplacement(t, h, node)
	if err := env.Client.Delete(t.Context(), replacement); err != nil {
		t.Fatal(err)
	}
	armed = true
	if _, err := h.Disrupt(t.Context()); err != nil {
		t.Errorf("pass after the replacement failed: %v", err)
	}
	if beats != 1 {
		t.Fatalf("%d heartbeats before the untaint, want 1: the test did not make the Node stale", beats)
	}
	if tainted(t, node) || deleting(t, nc) {
		t.Errorf("candidate %s still tainted or deleted after its replacement failed and a heartbeat", nc.Name)
	}
}
