package scheduling_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

// lowerBound is max over resources r of sum(requests r) x the cheapest on-demand price per
// allocatable unit of r: no plan can cost less.
func lowerBound(in *scheduling.Input) float64 {
	sum := map[corev1.ResourceName]float64{}
	for _, p := range in.Pods {
		for r, q := range scheduling.PodRequests(p) {
			sum[r] += q.AsApproximateFloat64()
		}
	}
	bound := 0.0
	for r, total := range sum {
		best := math.Inf(1)
		for _, it := range in.InstanceTypes {
			q, ok := it.Allocatable[r]
			if !ok || q.IsZero() {
				continue
			}
			for _, o := range it.Offerings {
				if o.Available && o.CapacityType == v1.CapacityTypeOnDemand {
					best = min(best, o.Price/q.AsApproximateFloat64())
				}
			}
		}
		bound = max(bound, total*best)
	}
	return bound
}

// ratioBound is a second lower bound that also reads the pods' shapes: when no pod asks for more
// than rmax bytes of memory per core, a node of type t holds at most min(memory, rmax x cpu) of
// their memory, so memory costs at least the cheapest price / min(memory, rmax x cpu) per byte
// (and symmetrically for cpu with the smallest ratio rmin). Where the cheapest type per unit of
// the binding resource cannot be filled in both resources by these pods, this bound is above
// lowerBound, and no packing can get below it.
func ratioBound(in *scheduling.Input) float64 {
	var cpu, mem float64
	rmin, rmax := math.Inf(1), 0.0
	for _, p := range in.Pods {
		r := scheduling.PodRequests(p)
		c, m := r.Cpu().AsApproximateFloat64(), r.Memory().AsApproximateFloat64()
		if c <= 0 || m <= 0 {
			return 0 // a pod without one of them has an unbounded ratio
		}
		cpu, mem = cpu+c, mem+m
		rmin, rmax = min(rmin, m/c), max(rmax, m/c)
	}
	bestMem, bestCPU := math.Inf(1), math.Inf(1)
	for _, it := range in.InstanceTypes {
		c, m := it.Allocatable.Cpu().AsApproximateFloat64(), it.Allocatable.Memory().AsApproximateFloat64()
		if c <= 0 || m <= 0 {
			continue
		}
		for _, o := range it.Offerings {
			if o.Available && o.CapacityType == v1.CapacityTypeOnDemand {
				bestMem = min(bestMem, o.Price/min(m, rmax*c))
				bestCPU = min(bestCPU, o.Price/min(c, m/rmin))
			}
		}
	}
	return max(mem*bestMem, cpu*bestCPU)
}

func TestPlainPodsPriceNearLowerBound(t *testing.T) {
	types := generatedTypes(400)
	for _, n := range []int{500, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var pods []*corev1.Pod
			sizes := [][2]string{{"100m", "128Mi"}, {"250m", "512Mi"}, {"500m", "1Gi"}, {"1", "2Gi"}, {"2", "4Gi"}}
			for i := range n {
				s := sizes[i%len(sizes)]
				pods = append(pods, pod(fmt.Sprintf("p-%d", i), s[0], s[1], withLabels("app", fmt.Sprint(i/10))))
			}
			in := &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types}
			plan := solveChecked(t, in)
			lb, rb := lowerBound(in), ratioBound(in)
			ratio := plan.HourlyPrice() / lb
			t.Logf("%d plain pods: $%.3f/h, lower bound $%.3f/h, ratio %.4f; shape-aware bound $%.3f/h, ratio %.4f; %d nodes",
				n, plan.HourlyPrice(), lb, ratio, rb, plan.HourlyPrice()/rb, len(plan.NodeClaims))
			// The issue asks for 5% over lowerBound, which this input cannot reach: four pods in
			// five ask for 2 GiB per vCPU (none for more), and the cheapest family per vCPU
			// (c5g, $0.024 per allocatable vCPU) allocates 1.875 GiB per vCPU. On it these pods
			// are memory-bound, and every dearer family costs more per GiB they can use, so no
			// plan costs less than ratioBound = 7,625 GiB x $0.0128/GiB = $97.60/h for 5,000 pods,
			// 5.57% over lowerBound. The solver must stay within 1% of that floor (measured:
			// 0.1-0.4%), and the ratio is held at 6.5% so regressions show.
			if ratio > 1.065 {
				t.Errorf("price %.3f is %.2f%% above the lower bound %.3f", plan.HourlyPrice(), (ratio-1)*100, lb)
			}
			if r := plan.HourlyPrice() / rb; r > 1.01 {
				t.Errorf("price %.3f is %.2f%% above the shape-aware lower bound %.3f", plan.HourlyPrice(), (r-1)*100, rb)
			}
		})
	}
}

// TestPlainPodsPriceOnBenchCatalogue measures the unconstrained pod groups of
// shared/bench/medium.json on its EC2-like catalogue against the lower bound, with the issue's
// 5% target. These pods mix cpu-heavy (1 GiB/vCPU), balanced (2 GiB/vCPU) and memory-heavy
// (8 GiB/vCPU) groups, so complementary pods can fill nodes in both resources (measured: 4.35%).
func TestPlainPodsPriceOnBenchCatalogue(t *testing.T) {
	files := benchFiles(t)
	var medium string
	for _, f := range files {
		if strings.HasSuffix(f, "medium.json") {
			medium = f
		}
	}
	if medium == "" {
		t.Skip("medium.json is absent")
	}
	wl, err := workload.Load(medium)
	if err != nil {
		t.Fatal(err)
	}
	full, err := wl.Input()
	if err != nil {
		t.Fatal(err)
	}
	in := &scheduling.Input{InstanceTypes: full.InstanceTypes, NodePools: []*v1.NodePool{nodePool("default")}}
	for _, p := range full.Pods {
		if p.Spec.Affinity == nil && len(p.Spec.TopologySpreadConstraints) == 0 && len(p.Spec.NodeSelector) == 0 {
			in.Pods = append(in.Pods, p)
		}
	}
	plan := solveChecked(t, in)
	lb := lowerBound(in)
	ratio := plan.HourlyPrice() / lb
	t.Logf("%d plain pods: $%.3f/h, lower bound $%.3f/h, ratio %.4f, %d nodes", len(in.Pods), plan.HourlyPrice(), lb, ratio, len(plan.NodeClaims))
	if ratio > 1.05 {
		t.Errorf("price %.3f is %.1f%% above the lower bound %.3f", plan.HourlyPrice(), (ratio-1)*100, lb)
	}
}

// TestRepackRandomPlainPods is a property test for the repacking of free pods: random mixes of
// cpu-heavy, balanced and memory-heavy plain pods (some tolerating a tainted pool, some beside
// zonal spread pods so that new nodes pin their zone, with daemonset overhead) must yield plans
// the independent checker accepts, with every pod placed.
func TestRepackRandomPlainPods(t *testing.T) {
	types := generatedTypes(120)
	shapes := [][2]string{{"100m", "128Mi"}, {"4", "4Gi"}, {"2", "4Gi"}, {"1", "8Gi"}, {"500m", "4Gi"}, {"250m", "512Mi"}, {"3", "1Gi"}, {"1500m", "12Gi"}}
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			var pods []*corev1.Pod
			for i := range 20 + rng.IntN(400) {
				s := shapes[rng.IntN(len(shapes))]
				p := pod(fmt.Sprintf("p-%d", i), s[0], s[1], withLabels("app", fmt.Sprint("plain-", rng.IntN(30))))
				if rng.IntN(5) == 0 {
					p.Spec.Tolerations = []corev1.Toleration{{Key: "team", Operator: corev1.TolerationOpExists}}
				}
				pods = append(pods, p)
			}
			if seed%3 == 0 {
				for i := range 30 {
					pods = append(pods, pod(fmt.Sprintf("spread-%d", i), "1", "2Gi", withLabels("app", "spread"), withSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)))
				}
			}
			pools := []*v1.NodePool{nodePool("default"), nodePool("team", func(np *v1.NodePool) {
				w := int32(10)
				np.Spec.Weight = &w
				np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
			})}
			plan := solveChecked(t, &scheduling.Input{Pods: pods, NodePools: pools, InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{pod("ds", "100m", "64Mi")}})
			if len(plan.Unschedulable) > 0 {
				t.Fatalf("%d pods unschedulable, first: %+v", len(plan.Unschedulable), plan.Unschedulable[0].Reasons)
			}
			placed := 0
			for _, nc := range plan.NodeClaims {
				placed += len(nc.Pods)
			}
			if placed != len(pods) {
				t.Fatalf("%d pods on NodeClaims, want %d", placed, len(pods))
			}
		})
	}
}

// aggregateBound is the tightest lower bound that reads only the summed cpu and memory: the
// cheapest fractional mix of on-demand instance types whose allocatable covers both sums (the
// linear programme min sum price x n over n >= 0 with sum alloc x n >= requests, solved through
// its two-variable dual by ternary search on the memory price).
func aggregateBound(in *scheduling.Input) float64 {
	var cpu, mem float64
	for _, p := range in.Pods {
		r := scheduling.PodRequests(p)
		cpu += r.Cpu().AsApproximateFloat64()
		mem += r.Memory().AsApproximateFloat64()
	}
	type shape struct{ cpu, mem, price float64 }
	var shapes []shape
	for _, it := range in.InstanceTypes {
		c, m := it.Allocatable.Cpu().AsApproximateFloat64(), it.Allocatable.Memory().AsApproximateFloat64()
		for _, o := range it.Offerings {
			if c > 0 && m > 0 && o.Available && o.CapacityType == v1.CapacityTypeOnDemand {
				shapes = append(shapes, shape{c, m, o.Price})
			}
		}
	}
	cpuPrice := func(memPrice float64) float64 {
		pc := math.Inf(1)
		for _, s := range shapes {
			pc = min(pc, (s.price-memPrice*s.mem)/s.cpu)
		}
		return pc
	}
	lo, hi := 0.0, math.Inf(1)
	for _, s := range shapes {
		hi = min(hi, s.price/s.mem)
	}
	value := func(memPrice float64) float64 { return cpuPrice(memPrice)*cpu + memPrice*mem }
	for range 200 {
		m1, m2 := lo+(hi-lo)/3, hi-(hi-lo)/3
		if value(m1) < value(m2) {
			lo = m1
		} else {
			hi = m2
		}
	}
	return value((lo + hi) / 2)
}

// TestPlainPodsPriceRandomMixes solves random mixes of plain pod groups (the sizes of
// shared/bench, from 100m/128Mi to 8/32Gi) on the EC2-like catalogue of medium.json. Against the
// issue's bound these land 4-20% over, because the bound prices the whole load at the cheapest
// family per vCPU (c6g, 1.73 GiB per vCPU) whatever its memory; against the best bound we can
// prove (the largest of lowerBound, ratioBound and aggregateBound) the solver must stay within
// 5% (measured: 0.8-2.3%).
func TestPlainPodsPriceRandomMixes(t *testing.T) {
	var medium string
	for _, f := range benchFiles(t) {
		if strings.HasSuffix(f, "medium.json") {
			medium = f
		}
	}
	if medium == "" {
		t.Skip("medium.json is absent")
	}
	wl, err := workload.Load(medium)
	if err != nil {
		t.Fatal(err)
	}
	full, err := wl.Input()
	if err != nil {
		t.Fatal(err)
	}
	sizes := [][2]string{{"100m", "128Mi"}, {"250m", "512Mi"}, {"500m", "1Gi"}, {"500m", "4Gi"}, {"1", "2Gi"}, {"1", "8Gi"}, {"2", "4Gi"}, {"4", "4Gi"}, {"8", "32Gi"}, {"2", "8Gi"}}
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			var pods []*corev1.Pod
			for g := range 10 + rng.IntN(40) {
				s := sizes[rng.IntN(len(sizes))]
				for i := range 5 + rng.IntN(55) {
					pods = append(pods, pod(fmt.Sprintf("g%d-%d", g, i), s[0], s[1], withLabels("app", fmt.Sprint("g", g))))
				}
			}
			in := &scheduling.Input{InstanceTypes: full.InstanceTypes, NodePools: []*v1.NodePool{nodePool("default")}, Pods: pods}
			plan := solveChecked(t, in)
			lb := lowerBound(in)
			best := max(lb, ratioBound(in), aggregateBound(in))
			ratio := plan.HourlyPrice() / best
			t.Logf("%d pods: $%.3f/h, %.2f%% over the best bound $%.3f/h (%.2f%% over the issue's $%.3f/h), %d nodes",
				len(pods), plan.HourlyPrice(), (ratio-1)*100, best, (plan.HourlyPrice()/lb-1)*100, lb, len(plan.NodeClaims))
			if ratio > 1.05 {
				t.Errorf("price %.3f is %.2f%% above the best lower bound %.3f", plan.HourlyPrice(), (ratio-1)*100, best)
			}
		})
	}
}
