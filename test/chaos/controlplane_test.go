package chaos

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/e2estack"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestChaosControlPlaneRestart: kube-apiserver and etcd restart in the middle of a scale-up,
// under the same faults and kills; the controller (and the scheduler, the controller manager
// and the emulator's kubelets) reconnect, every pod runs, instances pair with NodeClaims, and
// after everything is deleted, while the control plane restarts once more, nothing is left.
func TestChaosControlPlaneRestart(t *testing.T) {
	r := start(t, true)
	ctx, stack := t.Context(), r.stack
	general := e2estack.NodePool("general", 10, "")
	ice, _ := cheapestPools(t, ctx, stack, general, 2)
	e2estack.PutFaults(t, ctx, stack, chaosFaults(ice))
	web := e2estack.Deployment(ns, "web", r.size.web, "1", "1Gi")
	if err := stack.Apply(ctx, general, web, withPDB("web")); err != nil {
		t.Fatal(err)
	}
	r.sampler.arm(false, true)
	// Mid scale-up: once the first NodeClaim exists.
	e2estack.Eventually(t, 2*time.Minute, "a first NodeClaim", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		err := stack.Client.List(ctx, &claims)
		return err == nil && len(claims.Items) > 0, "no nodeclaim yet", err
	})
	restart(t, r, 5*time.Second)
	r.allRunning(8*time.Minute, int(r.size.web), "every pod Ready after the control plane restart")
	r.sampler.arm(true, true)
	r.endKills() // the kills this far: the run is about the restart
	e2estack.CheckOneInstancePerNodeClaim(t, ctx, stack)
	r.sampler.arm(false, false) // the Deployment goes: its pods are no longer guarded

	for _, obj := range []client.Object{web, general} {
		if err := stack.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	restart(t, r, 2*time.Second)
	e2estack.CheckNothingLeft(t, stack, 4*time.Minute)
}

// restart restarts kube-apiserver and etcd, down for the given time.
func restart(t *testing.T, r *chaosRun, down time.Duration) {
	t.Helper()
	began := time.Now()
	if err := r.stack.RestartControlPlane(context.WithoutCancel(t.Context()), down); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver and etcd restarted in %s", time.Since(began).Round(time.Second))
}
