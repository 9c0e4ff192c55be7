package scheduling_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

// benchDir is shared/bench next to the repository root, or $JOINER_BENCH_DIR (for a worktree
// that does not sit next to shared/).
const benchDir = "../../../shared/bench"

func benchFiles(tb testing.TB) []string {
	tb.Helper()
	benchDir := benchDir
	if dir := os.Getenv("JOINER_BENCH_DIR"); dir != "" {
		benchDir = dir
	}
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

// eksDaemonSets are the DaemonSets every EKS node runs, with the requests their EKS add-ons set:
// aws-node (the VPC CNI, 25m for the CNI plus 25m for the network-policy agent), kube-proxy
// (100m) and ebs-csi-node (three containers of 10m and 40Mi).
func eksDaemonSets() []*corev1.Pod {
	ds := func(name, cpu, mem string) *corev1.Pod {
		p := pod(name, cpu, mem)
		p.Namespace = "kube-system"
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		return p
	}
	return []*corev1.Pod{ds("aws-node", "50m", "0"), ds("kube-proxy", "100m", "0"), ds("ebs-csi-node", "30m", "120Mi")}
}

// BenchmarkWorkloadCosts plans each shared workload, and each scaled to 10 times its pods, with
// the EKS DaemonSets, without and with per-node costs in the objective (a 20Gi gp3 root volume,
// $1.60 a month, and a $15 per host per month licence: 0.0227 $/h), and reports nodes, instance
// $/h and the total $/h once every node pays the per-node cost.
func BenchmarkWorkloadCosts(b *testing.B) {
	const perNode = (20*0.08 + 15) / 730
	for _, f := range benchFiles(b) {
		wl, err := workload.Load(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, scale := range []int{1, 10} {
			scaled := *wl
			scaled.Pods = slices.Clone(wl.Pods)
			for i := range scaled.Pods {
				scaled.Pods[i].Count = max(scaled.Pods[i].Count, 1) * scale
			}
			for _, variant := range []string{"bare", "eks-daemonsets", "eks-daemonsets+node-costs"} {
				in, err := scaled.Input()
				if err != nil {
					b.Fatal(err)
				}
				if variant != "bare" {
					in.DaemonSetPods = eksDaemonSets()
				}
				if variant == "eks-daemonsets+node-costs" {
					in.NodeCosts = map[string]float64{}
					for _, np := range in.NodePools {
						in.NodeCosts[np.Name] = perNode
					}
				}
				b.Run(fmt.Sprintf("%s/x%d/%s", filepath.Base(f), scale, variant), func(b *testing.B) {
					var plan *scheduling.Plan
					for b.Loop() {
						if plan, err = scheduling.Solve(in); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(len(in.Pods)), "pods")
					b.ReportMetric(float64(len(plan.NodeClaims)), "nodes")
					b.ReportMetric(float64(len(plan.Unschedulable)), "failed")
					b.ReportMetric(plan.HourlyPrice(), "instance-$/h")
					b.ReportMetric(plan.HourlyPrice()+perNode*float64(len(plan.NodeClaims)), "total-$/h")
				})
			}
		}
	}
}
