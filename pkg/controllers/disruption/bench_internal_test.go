package disruption

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkDecideSettled1000 is one full decision over 1,000 on-demand 4-CPU nodes with 10 pods
// each (10,000 pods) that fill them: no node can go, so every method runs to its end (multi-node
// binary search, then single-node over every candidate).
//
//	go test -run '^$' -bench BenchmarkDecide -benchtime 5x ./pkg/controllers/disruption/
func BenchmarkDecideSettled1000(b *testing.B) { benchmarkDecide(b, 1000, "390m", false) }

// BenchmarkDecideConsolidatable1000 is the same cluster a quarter full: multi-node consolidation
// finds its longest prefix.
func BenchmarkDecideConsolidatable1000(b *testing.B) { benchmarkDecide(b, 1000, "100m", true) }

func benchmarkDecide(b *testing.B, n int, cpu string, wantCommand bool) {
	f := newFixture("10%")
	for i := range n {
		name := fmt.Sprintf("node-%04d", i)
		pods := make([]*corev1.Pod, 10)
		for j := range pods {
			pods[j] = pod(fmt.Sprintf("%s-%d", name, j), cpu, "1Gi")
			pods[j].Labels["app"] = fmt.Sprint(j)
		}
		f.node(name, "m7i.4x", pods...)
	}
	b.ReportAllocs()
	var d *decision
	cpu0 := cpuTime(b)
	for b.Loop() {
		var err error
		if d, err = f.pass().decide(); err != nil {
			b.Fatal(err)
		}
	}
	// CPU seconds per decision, of this process only: a figure the other programs sharing the
	// machine distort less than ns/op.
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	if got := d.cmd != nil; got != wantCommand {
		b.Fatalf("decided %v, want a command: %v", d.cmd, wantCommand)
	}
	if d.cmd != nil {
		b.ReportMetric(float64(len(d.cmd.candidates)), "candidates")
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
