package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/e2estack"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// TestNodePoolDeletionDrainsRespectingPDB deletes the NodePool whose nodes run a Deployment
// guarded by a PodDisruptionBudget (minAvailable 5 of 6): the pods leave one at a time for nodes
// of another NodePool, never fewer than five Ready, the deleted NodePool's instances terminate,
// and once the rest is deleted too, nothing is left in the emulator or the cluster.
func TestNodePoolDeletionDrainsRespectingPDB(t *testing.T) {
	stack := startStack(t)
	ctx := t.Context()
	namespace(t, ctx, stack, "pdb")
	doomed, survivor := nodePool("doomed", 100, ""), nodePool("survivor", 1, "")
	guarded := deployment("pdb", "guarded", 6, "500m", "512Mi")
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(5)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}},
		},
	}
	if err := stack.Apply(ctx, doomed, guarded, pdb); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the guarded pods Running on doomed nodes", func(ctx context.Context) (bool, string, error) {
		ready, err := readyPods(ctx, stack.Client)
		return ready == 6, fmt.Sprintf("%d/6 Ready", ready), err
	})
	eventually(t, time.Minute, "the PDB to allow one disruption", func(ctx context.Context) (bool, string, error) {
		var got policyv1.PodDisruptionBudget
		err := stack.Client.Get(ctx, client.ObjectKeyFromObject(pdb), &got)
		return got.Status.DisruptionsAllowed == 1, fmt.Sprintf("disruptionsAllowed %d", got.Status.DisruptionsAllowed), err
	})
	// survivor is added only now, so that every pod started on a doomed node.
	if err := stack.Apply(ctx, survivor); err != nil {
		t.Fatal(err)
	}

	watch := &readyWatch{lowest: 6}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { watch.run(watchCtx, stack.Client) })
	if err := stack.Client.Delete(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	eventually(t, 4*time.Minute, "the doomed NodePool's nodes drained and gone", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "doomed"}); err != nil {
			return false, "", err
		}
		instances, err := liveInstances(ctx, stack)
		if err != nil {
			return false, "", err
		}
		live := 0
		for _, i := range instances {
			if i.Tags[v1.NodePoolLabelKey] == "doomed" {
				live++
			}
		}
		ready, err := readyPods(ctx, stack.Client)
		return len(claims.Items) == 0 && live == 0 && ready == 6,
			fmt.Sprintf("%d doomed nodeclaims, %d doomed instances live, %d/6 pods Ready", len(claims.Items), live, ready), err
	})
	stopWatch()
	wg.Wait()
	if watch.lowest < 5 {
		t.Errorf("only %d guarded pods were Ready at one point: the drain broke the PDB (minAvailable 5)", watch.lowest)
	}
	if err := stack.Client.Get(ctx, client.ObjectKeyFromObject(doomed), &v1.NodePool{}); !apierrors.IsNotFound(err) {
		t.Errorf("nodepool doomed still exists after its nodes went: %v", err)
	}
	checkPodsOn(t, ctx, stack.Client, "pdb", "survivor")
	t.Logf("drained with at least %d of 6 pods Ready throughout", watch.lowest)

	// The rest goes too, and nothing is left behind.
	for _, obj := range []client.Object{guarded, survivor} {
		if err := stack.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	checkNothingLeft(t, stack)
}

// readyPods counts the guarded pods that are Ready and not being deleted.
func readyPods(ctx context.Context, c client.Client) (int, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace("pdb"), client.MatchingLabels{"app": "guarded"}); err != nil {
		return 0, err
	}
	ready := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, nil
}

// readyWatch samples the Ready guarded pods every 100ms and keeps the lowest count seen.
type readyWatch struct {
	mu     sync.Mutex
	lowest int
}

func (w *readyWatch) run(ctx context.Context, c client.Client) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if n, err := readyPods(ctx, c); err == nil {
			w.mu.Lock()
			w.lowest = min(w.lowest, n)
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// checkPodsOn fails the test unless every pod of the namespace runs on a node of the NodePool.
func checkPodsOn(t *testing.T, ctx context.Context, c client.Client, namespace, pool string) {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		var node corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
			t.Errorf("pod %s is on node %q: %v", p.Name, p.Spec.NodeName, err)
		} else if got := node.Labels[v1.NodePoolLabelKey]; got != pool {
			t.Errorf("pod %s runs on node %s of nodepool %q, want %s", p.Name, node.Name, got, pool)
		}
	}
}

// checkNothingLeft waits until no NodeClaim, Node, NodePool or live instance is left, then fails
// the test if any instance the emulator ever ran was not launched for a NodeClaim.
func checkNothingLeft(t *testing.T, stack *localstack.Stack) {
	t.Helper()
	e2estack.CheckNothingLeft(t, stack, 3*time.Minute)
}
