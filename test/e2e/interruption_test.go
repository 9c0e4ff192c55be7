package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// spotInterruptionNotice is how long after the warning the emulator reclaims a spot instance,
// as EC2 does.
const spotInterruptionNotice = 2 * time.Minute

// TestSpotInterruption runs the controller with the emulator's interruption queue
// (--interruption-queue demo). A Deployment guarded by a PodDisruptionBudget runs one pod per
// spot node; the emulator warns that one node's instance will be reclaimed: before it is (two
// minutes later) the node is cordoned, its pod is Running and Ready on a replacement node, the
// interrupted NodeClaim and instance are gone, and the replacement comes from another spot pool.
// It is also the suite's least-privilege run (checkLeastPrivilege): the controller elects a
// leader as the chart runs it, launches, drains, terminates, reads the queue and, at the end,
// consolidates one node away; every grant of the chart's RBAC and every action of the generated
// IAM policy must have been used.
func TestSpotInterruption(t *testing.T) {
	stack := startStack(t, "--interruption-queue", localstack.DefaultClusterName, "--leader-elect=true")
	ctx := t.Context()
	namespace(t, ctx, stack, "spot")
	np := nodePool("spot", 1, "")
	np.Spec.Template.Spec.Requirements[0].Values = []string{v1.CapacityTypeSpot}
	app := deployment("spot", "app", 2, "500m", "512Mi", func(spec *corev1.PodSpec) {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}}, TopologyKey: corev1.LabelHostname,
			}},
		}}
	})
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "spot"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
		},
	}
	if err := stack.Apply(ctx, np, app, pdb); err != nil {
		t.Fatal(err)
	}
	var initial []v1.NodeClaim
	eventually(t, 3*time.Minute, "the pods Running, one per spot node", func(ctx context.Context) (bool, string, error) {
		ready, nodes, err := appPods(ctx, stack.Client)
		var claims v1.NodeClaimList
		if err == nil {
			err = stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "spot"})
		}
		initial = claims.Items
		return ready == 2 && len(nodes) == 2 && len(claims.Items) == 2, fmt.Sprintf("%d/2 Ready on %v, %d nodeclaims", ready, nodes, len(claims.Items)), err
	})
	victim := initial[0]
	victimPool := offering(victim)
	if victimPool[2] != v1.CapacityTypeSpot {
		t.Fatalf("the NodePool launched %v, want spot", victimPool)
	}
	victimInstance := victim.Status.ProviderID[strings.LastIndex(victim.Status.ProviderID, "/")+1:]
	t.Logf("interrupting %s (%s) of nodeclaim %s, node %s", victimInstance, victimPool, victim.Name, victim.Status.NodeName)

	watch := &cordonWatch{node: victim.Status.NodeName}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { watch.run(watchCtx, stack.Client) })
	defer func() { stopWatch(); wg.Wait() }()

	warned := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, stack.EmulatorURL+"/_awsemu/events",
		strings.NewReader(`{"instanceID": "`+victimInstance+`", "kind": "spot-interruption"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST event: %s", resp.Status)
	}

	var replacements []v1.NodeClaim
	eventually(t, spotInterruptionNotice, "the pods Ready on a replacement, the interrupted node and instance gone", func(ctx context.Context) (bool, string, error) {
		ready, nodes, err := appPods(ctx, stack.Client)
		if err != nil {
			return false, "", err
		}
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "spot"}); err != nil {
			return false, "", err
		}
		instances, err := liveInstances(ctx, stack)
		if err != nil {
			return false, "", err
		}
		victimLive := slices.ContainsFunc(instances, func(i localstack.Instance) bool { return i.ID == victimInstance })
		victimClaim := slices.ContainsFunc(claims.Items, func(c v1.NodeClaim) bool { return c.Name == victim.Name })
		replacements = slices.DeleteFunc(claims.Items, func(c v1.NodeClaim) bool {
			return slices.ContainsFunc(initial, func(i v1.NodeClaim) bool { return i.Name == c.Name })
		})
		onVictim := slices.Contains(nodes, victim.Status.NodeName)
		return ready == 2 && !onVictim && !victimClaim && !victimLive && len(replacements) > 0,
			fmt.Sprintf("%d/2 Ready on %v; victim nodeclaim %v, instance live %v; %d replacements", ready, nodes, victimClaim, victimLive, len(replacements)), nil
	})
	t.Logf("replaced %s after %s", victim.Name, time.Since(warned).Round(time.Second))
	if time.Since(warned) >= spotInterruptionNotice {
		t.Errorf("the replacement took %s, longer than the interruption notice", time.Since(warned))
	}
	t.Logf("replacements: %v", func() (out [][3]string) {
		for _, r := range replacements {
			out = append(out, offering(r))
		}
		return out
	}())
	if !watch.cordoned() {
		t.Errorf("node %s was never seen cordoned (karpenter.sh/disrupted:NoSchedule) before it went", victim.Status.NodeName)
	}
	for _, r := range replacements {
		if got := offering(r); got == victimPool {
			t.Errorf("replacement %s launched in the interrupted pool %v", r.Name, got)
		}
	}
	stopWatch()
	wg.Wait()

	consolidateOne(t, ctx, stack)
	checkLeastPrivilege(t, ctx, stack)
}

// consolidateOne is the epilogue of the least-privilege run: the disruption controller's reads
// past the cache (a NodeClaim and a Node) and its PodDisruptionBudget list run only when it
// consolidates, so let it: one pod left and consolidation on, one of the two spot nodes goes.
func consolidateOne(t *testing.T, ctx context.Context, stack *localstack.Stack) {
	t.Helper()
	if err := stack.Client.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "spot", Name: "app"}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))); err != nil {
		t.Fatal(err)
	}
	if err := stack.Client.Patch(ctx, &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "spot"}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized","consolidateAfter":"0s"}}}`))); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "one spot node consolidated away", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "spot"}); err != nil {
			return false, "", err
		}
		ready, _, err := appPods(ctx, stack.Client)
		return err == nil && ready == 1 && len(claims.Items) == 1, fmt.Sprintf("%d nodeclaims, %d pods Ready", len(claims.Items), ready), err
	})
}

// offering is a NodeClaim's instance type, zone and capacity type.
func offering(c v1.NodeClaim) [3]string {
	return [3]string{c.Labels[corev1.LabelInstanceTypeStable], c.Labels[corev1.LabelTopologyZone], c.Labels[v1.CapacityTypeLabelKey]}
}

// appPods counts the spot namespace's Ready app pods and lists the nodes they run on.
func appPods(ctx context.Context, c client.Client) (int, []string, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace("spot"), client.MatchingLabels{"app": "app"}); err != nil {
		return 0, nil, err
	}
	ready := 0
	var nodes []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName != "" && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, nodes, nil
}

// cordonWatch samples a Node every 250ms and remembers whether it was ever seen tainted
// karpenter.sh/disrupted:NoSchedule.
type cordonWatch struct {
	node string
	mu   sync.Mutex
	seen bool
}

func (w *cordonWatch) run(ctx context.Context, c client.Client) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: w.node}, &n); err == nil &&
			slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(new(v1.DisruptedNoScheduleTaint())) }) {
			w.mu.Lock()
			w.seen = true
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *cordonWatch) cordoned() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}
