package chaos

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/e2estack"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// TestChaosLifecycle: the whole lifecycle under the kills and the faults. An on-demand
// Deployment (web) and a spot one (spot, a pod per node), each under a PodDisruptionBudget of
// maxUnavailable 1, scale up; web scales down by half and consolidation packs it; the
// EC2NodeClass's AMI is pinned to an older release and every node rolls; a spot node gets an
// interruption warning and is replaced before the reclaim. Then, the kills done, every pod runs,
// web's NodePool costs within 10% of `joiner simulate` for its final pods (the refused types
// left out of its catalogue), and after everything is deleted no instance is left.
func TestChaosLifecycle(t *testing.T) {
	r := start(t, false, "--interruption-queue", localstack.DefaultClusterName)
	ctx, stack := t.Context(), r.stack
	general := e2estack.NodePool("general", 10, "")
	spot := e2estack.NodePool("spot", 1, "")
	spot.Spec.Template.Spec.Requirements[0].Values = []string{v1.CapacityTypeSpot}
	for _, np := range []*v1.NodePool{general, spot} {
		// Half the nodes at once: the default 10% rolls one node at a time, each after the 15s
		// validation, longer than CI affords.
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "50%"}}
	}
	ice, refused := cheapestPools(t, ctx, stack, general, 2)
	e2estack.PutFaults(t, ctx, stack, chaosFaults(ice))
	t.Logf("refusing capacity of %v in every pool", refusedNames(refused))

	web := e2estack.Deployment(ns, "web", r.size.web, "1", "1Gi", onPool("general"))
	spotApp := e2estack.Deployment(ns, "spot", 2, "500m", "512Mi", oneSpotNodeEach)
	if err := stack.Apply(ctx, general, spot, web, withPDB("web"), spotApp, withPDB("spot")); err != nil {
		t.Fatal(err)
	}
	r.sampler.arm(false, true)
	want := int(r.size.web) + 2
	r.allRunning(8*time.Minute, want, "scale-up: every pod Ready")
	r.sampler.arm(true, true)

	// Consolidation after a scale-down.
	half := r.size.web / 2
	r.sampler.arm(true, false)
	patch(t, ctx, stack.Client, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, fmt.Sprintf(`{"spec":{"replicas":%d}}`, half))
	for _, pool := range []string{"general", "spot"} {
		patch(t, ctx, stack.Client, &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}},
			`{"spec":{"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized","consolidateAfter":"0s"}}}`)
	}
	web.Spec.Replicas = &half
	sim := e2estack.SimulateWithout(t, ctx, bins, stack, refused, general, web)
	r.costWithin(6*time.Minute, "consolidation after the scale-down", sim.TotalHourlyPrice)

	// A drift roll.
	before, err := imagesOf(ctx, stack.Client)
	if err != nil {
		t.Fatal(err)
	}
	drift := time.Now()
	patch(t, ctx, stack.Client, &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, `{"spec":{"amiSelectorTerms":[{"alias":"al2023@v20251001"}]}}`)
	// Drift replaces one node per decision, each after the validation period and its
	// replacement's launch: a few minutes, and one more per node.
	e2estack.Eventually(t, 4*time.Minute+time.Duration(len(before))*time.Minute, "drift: every node replaced on the pinned AMI", func(ctx context.Context) (bool, string, error) {
		now, err := imagesOf(ctx, stack.Client)
		left := 0
		for name := range now {
			if _, ok := before[name]; ok {
				left++
			}
		}
		return err == nil && left == 0 && len(now) > 0, fmt.Sprintf("%d of %d nodeclaims from before the drift left", left, len(now)), err
	})
	t.Logf("drift: %d nodes rolled in %s", len(before), time.Since(drift).Round(time.Second))
	r.allRunning(5*time.Minute, int(half)+2, "drift: every pod Ready again")

	r.interruptSpot(ctx)
	r.waitKills(10 * time.Minute)
	r.endKills()
	r.allRunning(5*time.Minute, int(half)+2, "after the kills: every pod Ready")
	ratio := r.costWithin(5*time.Minute, "final cost", sim.TotalHourlyPrice)
	e2estack.CheckOneInstancePerNodeClaim(t, ctx, stack)

	r.sampler.arm(false, false) // the Deployments go: their pods are no longer guarded
	for _, obj := range []client.Object{web, spotApp, general, spot} {
		if err := stack.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	e2estack.CheckNothingLeft(t, stack, 4*time.Minute)
	t.Logf("final cost ratio to joiner simulate %.3f (plan $%.4f/h for %d web pods)", ratio, sim.TotalHourlyPrice, half)
}

// costWithin waits until the general NodePool's live instances cost at most 10% more than the
// plan, and returns the ratio.
func (r *chaosRun) costWithin(timeout time.Duration, what string, plan float64) float64 {
	r.t.Helper()
	var ratio float64
	e2estack.Eventually(r.t, timeout, what+": the NodePool within 10% of joiner simulate", func(ctx context.Context) (bool, string, error) {
		got, n, err := poolCost(ctx, r.stack, "general")
		ratio = got / plan
		return err == nil && ratio <= 1.10, fmt.Sprintf("%d instances at $%.4f/h, plan $%.4f/h, ratio %.3f", n, got, plan, ratio), err
	})
	r.t.Logf("%s: cost ratio %.3f to the plan", what, ratio)
	return ratio
}

// interruptSpot warns of the reclaim of one spot node's instance and waits until its NodeClaim
// and instance are gone and the spot pods Ready elsewhere, within the two-minute notice.
func (r *chaosRun) interruptSpot(ctx context.Context) {
	r.t.Helper()
	var claims v1.NodeClaimList
	if err := r.stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "spot"}); err != nil {
		r.t.Fatal(err)
	}
	if len(claims.Items) == 0 {
		r.t.Fatal("no spot nodeclaim to interrupt")
	}
	victim := claims.Items[0]
	id := instanceOf(victim)
	e2estack.PostEvent(r.t, ctx, r.stack, id, "spot-interruption")
	warned := time.Now()
	e2estack.Eventually(r.t, 2*time.Minute, "spot interruption: the victim replaced before the reclaim", func(ctx context.Context) (bool, string, error) {
		var now v1.NodeClaimList
		if err := r.stack.Client.List(ctx, &now, client.MatchingLabels{v1.NodePoolLabelKey: "spot"}); err != nil {
			return false, "", err
		}
		instances, err := e2estack.LiveInstances(ctx, r.stack)
		if err != nil {
			return false, "", err
		}
		claimLeft := slices.ContainsFunc(now.Items, func(c v1.NodeClaim) bool { return c.Name == victim.Name })
		live := slices.Contains(liveIDs(instances), id)
		ready, err := readyOf(ctx, r.stack.Client, "spot")
		return !claimLeft && !live && ready == 2, fmt.Sprintf("victim nodeclaim left %v, instance live %v, %d/2 spot pods Ready", claimLeft, live, ready), err
	})
	r.t.Logf("spot interruption of %s handled in %s", id, time.Since(warned).Round(time.Second))
}

// onPool keeps pods on a NodePool's nodes: without it the scheduler may bind a web pod on a
// spot node launched for a spot pod, which then needs another.
func onPool(pool string) func(*corev1.PodSpec) {
	return func(spec *corev1.PodSpec) { spec.NodeSelector = map[string]string{v1.NodePoolLabelKey: pool} }
}

// readyOf counts the Ready pods of an app.
func readyOf(ctx context.Context, c client.Client, app string) (int, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) {
			n++
		}
	}
	return n, nil
}

func refusedNames(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
