package disruption_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/joinerhq/joiner/pkg/cluster"
)

// TestTaintDespiteHeartbeat: the Node's status changes between the pass that validates a command
// and the taint (a kubelet's heartbeat, every few seconds on a real cluster), and the command is
// still carried out: the taint is patched on the Node as the API server has it now, not on the
// pass's copy, which a heartbeat makes stale (a conflict then abandoned every command of a
// loaded cluster, pass after pass).
func TestTaintDespiteHeartbeat(t *testing.T) {
	beats := 0
	kube := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if node, ok := obj.(*corev1.Node); ok && beats == 0 {
				beats++
				heartbeat(t, ctx, c, node.Name)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	h := newHarness(t, kube, cluster.New(env.Client, false))
	newNodePool(t, "heartbeat", nil)
	nc, _ := newNode(t, "heartbeat", "heartbeat", nil)
	if deleted := h.decideAndCarryOut(t); !slices.Contains(deleted, nc.Name) {
		t.Errorf("deleted %v, want %s: a heartbeat before the taint must not abandon the command; events %v", deleted, nc.Name, h.events.Events())
	}
	if beats != 1 {
		t.Errorf("%d heartbeats before the taint, want 1: the test did not make the pass's Node stale", beats)
	}
}

// withWatch is a direct client to the test control plane that interceptor can wrap.
func withWatch(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// heartbeat updates the Node's Ready condition's heartbeat time, as the kubelet does.
func heartbeat(t *testing.T, ctx context.Context, c client.Client, name string) {
	t.Helper()
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		t.Fatal(err)
	}
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			node.Status.Conditions[i].LastHeartbeatTime = metav1.Now()
			node.Status.Conditions[i].Message = "kubelet is posting ready status"
		}
	}
	if err := c.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
}
