package chaos

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/e2estack"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/localstack"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

const ns = "chaos"

// chaosFaults are the faults of every run: 30% of requests throttled (RequestLimitExceeded on
// EC2), 2% answered with a 500, 5% slowed by 2s, new instances invisible for 2s, and the
// capacity of the given pools refused.
func chaosFaults(ice []state.Pool) inspect.Faults {
	return inspect.Faults{InsufficientCapacity: ice, ThrottleRate: 0.3, ErrorRate: 0.02, SlowRate: 0.05, SlowLatency: "2s", DescribeInstancesLag: "2s"}
}

// cheapestPools are every pool (zone, capacity type) of the n cheapest instance types per vCPU
// the NodePool may launch that the web pods fit on, which the run refuses for insufficient capacity: the types a plan
// picks first. It returns the pools and the refused types.
func cheapestPools(t *testing.T, ctx context.Context, stack *localstack.Stack, np *v1.NodePool, n int) ([]state.Pool, map[string]bool) {
	t.Helper()
	var cat *workload.File
	// The catalogue is the EC2NodeClass's offerings: they are read once it is Ready.
	e2estack.Eventually(t, 2*time.Minute, "the instance types the NodePool may launch", func(ctx context.Context) (bool, string, error) {
		var err error
		cat, err = e2estack.CatalogueOf(ctx, stack, []*v1.NodePool{np})
		return err == nil && len(cat.InstanceTypes) > 0, "no instance type", err
	})
	// Only types a web pod (1 CPU, 1Gi, and the DaemonSets) fits on: the nano and micro types
	// are cheaper per vCPU but no plan here picks them.
	types := slices.DeleteFunc(slices.Clone(cat.InstanceTypes), func(it workload.InstanceType) bool {
		return it.CPU < 2 || it.MemoryMiB < 1536
	})
	slices.SortFunc(types, func(a, b workload.InstanceType) int {
		return cmp.Or(cmp.Compare(a.Price/a.CPU, b.Price/b.CPU), cmp.Compare(a.Name, b.Name))
	})
	var pools []state.Pool
	refused := map[string]bool{}
	for _, it := range types[:min(n, len(types))] {
		refused[it.Name] = true
		for _, z := range it.Zones {
			for _, c := range []string{v1.CapacityTypeOnDemand, v1.CapacityTypeSpot} {
				pools = append(pools, state.Pool{InstanceType: it.Name, Zone: z, CapacityType: c})
			}
		}
	}
	return pools, refused
}

// withPDB guards a Deployment's pods with a PodDisruptionBudget of maxUnavailable 1.
func withPDB(app string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}
}

// oneSpotNodeEach keeps the spot Deployment's pods on separate nodes.
func oneSpotNodeEach(spec *corev1.PodSpec) {
	spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spot"}}, TopologyKey: corev1.LabelHostname,
		}},
	}}
	spec.NodeSelector = map[string]string{v1.NodePoolLabelKey: "spot"}
}

// chaosRun is one chaos run: the stack, its sampler and its monkey.
type chaosRun struct {
	t       *testing.T
	stack   *localstack.Stack
	size    size
	sampler *sampler
	monkey  *monkey
	// stopSampler and stopKills end the sampler and the monkey; samplerDone and killsDone wait
	// for them.
	stopSampler, stopKills func()
	samplerDone, killsDone sync.WaitGroup
}

// start starts the stack (restartable: its control plane is restarted, e2estack.StartRestartable),
// the sampler and the monkey.
func start(t *testing.T, restartable bool, controllerArgs ...string) *chaosRun {
	sz := sizeOf(t)
	rng := rand.New(rand.NewPCG(seed(t), 0))
	startStack := e2estack.Start
	if restartable {
		startStack = e2estack.StartRestartable
	}
	stack := startStack(t, bins, controllerArgs...)
	e2estack.Namespace(t, t.Context(), stack, ns)
	r := &chaosRun{t: t, stack: stack, size: sz, sampler: newSampler(stack, ns), monkey: &monkey{stack: stack, size: sz, rng: rng}}
	samplerCtx, stopSampler := context.WithCancel(context.WithoutCancel(t.Context()))
	killsCtx, stopKills := context.WithCancel(samplerCtx)
	r.stopSampler, r.stopKills = stopSampler, stopKills
	r.samplerDone.Go(func() { r.sampler.run(samplerCtx) })
	r.killsDone.Go(func() { r.monkey.run(killsCtx) })
	// The report, also of a failed run: cleanups run last in first out, so before the stack
	// stops.
	t.Cleanup(r.report)
	return r
}

// endKills stops the monkey, leaving the controller running; it may be called twice.
func (r *chaosRun) endKills() {
	r.stopKills()
	r.killsDone.Wait()
}

// halt stops the monkey and the sampler; it may be called twice.
func (r *chaosRun) halt() {
	r.endKills()
	r.stopSampler()
	r.samplerDone.Wait()
}

// waitKills waits until the monkey killed the controller at least the size's minimum.
func (r *chaosRun) waitKills(timeout time.Duration) {
	e2estack.Eventually(r.t, timeout, fmt.Sprintf("%d kills", r.size.minKills), func(context.Context) (bool, string, error) {
		kills, err := r.monkey.count()
		return kills >= r.size.minKills, fmt.Sprintf("%d kills", kills), err
	})
}

// allRunning waits until every pod of the namespace is Running and Ready.
func (r *chaosRun) allRunning(timeout time.Duration, want int, what string) {
	e2estack.Eventually(r.t, timeout, what, func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := r.stack.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		ready, total := 0, 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			total++
			if p.Status.Phase == corev1.PodRunning && podReady(&p) {
				ready++
			}
		}
		return ready == want && total == want, fmt.Sprintf("%d/%d pods Ready of %d", ready, want, total), nil
	})
}

// report logs and checks what the run did when the test ends: kills, faults injected by kind,
// invariant checks, and fails the test with every invariant the sampler found broken.
func (r *chaosRun) report() {
	r.t.Helper()
	r.halt()
	kills, err := r.monkey.count()
	if err != nil {
		r.t.Error(err)
	}
	faults, err := e2estack.Faults(context.WithoutCancel(r.t.Context()), r.stack)
	if err != nil {
		r.t.Error(err)
	}
	samples, skipped, checks, failures := r.sampler.report()
	for _, f := range failures {
		r.t.Errorf("invariant broken: %s", f)
	}
	total := 0
	for _, n := range checks {
		total += n
	}
	i := faults.Injected
	if i == nil {
		i = &inspect.Injected{}
	}
	r.t.Logf("chaos %s: %d kills; faults injected over %d AWS requests: %d throttled, %d 500s, %d slowed, %d capacity refusals, %d instance reads hidden by the lag; %d samples (%d skipped while unreachable), %d invariant checks %v, %d broken",
		r.size.name, kills, i.Requests, i.Throttled, i.Errors, i.Slowed, i.InsufficientCapacity, i.Hidden, samples, skipped, total, checks, len(failures))
	if samples == 0 || checks["pairing"] == 0 {
		r.t.Error("the sampler checked nothing")
	}
}

// patch merge-patches obj.
func patch(t *testing.T, ctx context.Context, c client.Client, obj client.Object, body string) {
	t.Helper()
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		t.Fatal(err)
	}
}

// poolCost sums the hourly prices of the live instances of a NodePool's NodeClaims.
func poolCost(ctx context.Context, stack *localstack.Stack, pool string) (float64, int, error) {
	var claims v1.NodeClaimList
	if err := stack.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		return 0, 0, err
	}
	instances, err := e2estack.LiveInstances(ctx, stack)
	if err != nil {
		return 0, 0, err
	}
	// By providerID: an instance gets its NodeClaim's tag only once its node registered.
	named := map[string]bool{}
	for _, nc := range claims.Items {
		named[instance.InstanceID(nc.Status.ProviderID)] = true
	}
	var sum float64
	n := 0
	for _, i := range instances {
		if named[i.ID] {
			sum += i.PricePerHour
			n++
		}
	}
	return sum, n, nil
}

// imagesOf returns the image of every NodeClaim.
func imagesOf(ctx context.Context, c client.Client) (map[string]string, error) {
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, nc := range claims.Items {
		out[nc.Name] = nc.Status.ImageID
	}
	return out, nil
}

// liveIDs lists the IDs of the live instances.
func liveIDs(instances []localstack.Instance) []string {
	var out []string
	for _, i := range instances {
		out = append(out, i.ID)
	}
	return out
}

// instanceOf is a NodeClaim's instance ID.
func instanceOf(nc v1.NodeClaim) string {
	return nc.Status.ProviderID[strings.LastIndex(nc.Status.ProviderID, "/")+1:]
}
