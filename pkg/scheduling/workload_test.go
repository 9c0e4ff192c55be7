package scheduling_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

// benchDir is shared/bench next to the repository root.
const benchDir = "../../../shared/bench"

func benchFiles(tb testing.TB) []string {
	tb.Helper()
	if _, err := os.Stat(benchDir); err != nil {
		tb.Skipf("no benchmark workloads: %s is absent (%v)", benchDir, err)
	}
	files, err := filepath.Glob(filepath.Join(benchDir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Skipf("no benchmark workloads in %s", benchDir)
	}
	return files
}

// TestWorkloads solves every benchmark workload and has the checker verify the plan.
func TestWorkloads(t *testing.T) {
	for _, f := range benchFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			wl, err := workload.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			in, err := wl.Input()
			if err != nil {
				t.Fatal(err)
			}
			plan := solveChecked(t, in)
			s := workload.Summarize(plan, 0)
			t.Logf("%s: scheduled %d failed %d nodes %d $/h %.2f", filepath.Base(f), s.PodsScheduled, s.PodsFailed, s.Nodes, s.TotalHourlyPrice)
			for _, u := range plan.Unschedulable[:min(3, len(plan.Unschedulable))] {
				t.Logf("unschedulable %s: %+v", u.Pod.Name, u.Reasons)
			}
		})
	}
}

func BenchmarkSimulateWorkload(b *testing.B) {
	for _, f := range benchFiles(b) {
		wl, err := workload.Load(f)
		if err != nil {
			b.Fatal(err)
		}
		in, err := wl.Input()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(f), func(b *testing.B) {
			b.ReportAllocs()
			var plan *scheduling.Plan
			for b.Loop() {
				if plan, err = scheduling.Solve(in); err != nil {
					b.Fatal(err)
				}
			}
			s := workload.Summarize(plan, 0)
			b.ReportMetric(float64(len(in.Pods))*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
			b.ReportMetric(float64(s.Nodes), "nodes")
			b.ReportMetric(s.TotalHourlyPrice, "$/h")
			b.ReportMetric(float64(s.PodsFailed), "failed")
		})
	}
}
