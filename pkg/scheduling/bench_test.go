package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

func BenchmarkScheduling1(b *testing.B)     { benchmarkScheduling(b, 1) }
func BenchmarkScheduling100(b *testing.B)   { benchmarkScheduling(b, 100) }
func BenchmarkScheduling1000(b *testing.B)  { benchmarkScheduling(b, 1000) }
func BenchmarkScheduling5000(b *testing.B)  { benchmarkScheduling(b, 5000) }
func BenchmarkScheduling20000(b *testing.B) { benchmarkScheduling(b, 20000) }

// benchmarkScheduling solves n mixed pods (see mixedPods) against one NodePool and 400
// generated instance types, and reports pods/s, the NodeClaims made, the live heap after a solve
// with its plan still referenced, and heap-sys-MiB, the heap the process obtained from the OS so
// far: an upper bound of the peak heap (of this and earlier benchmarks in the process).
func benchmarkScheduling(b *testing.B, n int) {
	in := &scheduling.Input{Pods: mixedPods(n, 42), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: generatedTypes(400)}
	b.ReportAllocs()
	b.ResetTimer()
	var plan *scheduling.Plan
	for b.Loop() {
		var err error
		plan, err = scheduling.Solve(in)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(plan.Unschedulable) > 0 {
		b.Fatalf("%d pods unschedulable, first: %+v", len(plan.Unschedulable), plan.Unschedulable[0].Reasons)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64(len(plan.NodeClaims)), "nodes")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
	runtime.KeepAlive(plan)
}

// BenchmarkSchedulingPlain20000 solves 20,000 plain pods of 40 random shapes, where the
// repacking of free pods does the most work.
func BenchmarkSchedulingPlain20000(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var shapes [][2]string
	for range 40 {
		shapes = append(shapes, [2]string{fmt.Sprintf("%dm", 50+rng.IntN(4000)), fmt.Sprintf("%dMi", 64+rng.IntN(16000))})
	}
	pods := make([]*corev1.Pod, 0, 20000)
	for i := range 20000 {
		s := shapes[rng.IntN(len(shapes))]
		pods = append(pods, pod(fmt.Sprintf("p-%d", i), s[0], s[1], withLabels("app", fmt.Sprint(i/10))))
	}
	in := &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: generatedTypes(400)}
	b.ReportAllocs()
	var plan *scheduling.Plan
	for b.Loop() {
		var err error
		if plan, err = scheduling.Solve(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pods))*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64(len(plan.NodeClaims)), "nodes")
	b.ReportMetric(plan.HourlyPrice(), "$/h")
}
