package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// TestNodeCostsInTheObjective: a per-node cost (root volume, per-host licence) is carried by
// every NodeClaim of its pool, apart from the instance price, and the solver minimises the sum:
// with it the plan has no more nodes, and costs in total no more than the plan made without it
// once that plan pays the per-node cost too.
func TestNodeCostsInTheObjective(t *testing.T) {
	types := generatedTypes(400)
	mixed := mixedPods(1000, 11)
	for i := range 300 {
		cpu := []string{"250m", "1", "3", "500m"}[i%4]
		mem := []string{"3Gi", "1Gi", "2Gi", "6Gi"}[i%4]
		mixed = append(mixed, pod(fmt.Sprintf("plain-%d", i), cpu, mem, withLabels("app", fmt.Sprint("plain-", i%4))))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var plain []*corev1.Pod
	for i := range 1500 {
		plain = append(plain, pod(fmt.Sprintf("p-%d", i), fmt.Sprintf("%dm", 100+rng.IntN(1500)), fmt.Sprintf("%dMi", 128+rng.IntN(6000)), withLabels("app", fmt.Sprint(i%7))))
	}
	pools := []*v1.NodePool{nodePool("default"), nodePool("other", func(np *v1.NodePool) { np.Spec.Weight = new(int32(-1)) })}
	// Two types, the large one 20% dearer per vCPU: four 700m pods are cheapest on four small
	// nodes ($0.20/h against $0.24/h), until each node also costs $0.05/h.
	twoTypes := generatedTypes(2)
	small, large := *twoTypes[0], *twoTypes[0]
	small.Name, large.Name = "small", "large"
	large.Capacity, large.Allocatable = scaled(small.Capacity, 4), scaled(small.Allocatable, 4)
	small.Offerings, large.Offerings = priced(small.Offerings, 0.05), priced(small.Offerings, 0.24)
	var four []*corev1.Pod
	for i := range 4 {
		four = append(four, pod(fmt.Sprintf("p-%d", i), "700m", "256Mi"))
	}
	tests := []struct {
		name  string
		pods  []*corev1.Pod
		types []*scheduling.InstanceType
		cost  float64
		// fewer: the per-node cost must cut the node count.
		fewer bool
	}{
		{"mixed pods, 0.05 per node", mixed, types, 0.05, false},
		{"mixed pods, 0.50 per node", mixed, types, 0.5, false},
		{"plain pods, 0.05 per node", plain, types, 0.05, false},
		{"plain pods, 0.50 per node", plain, types, 0.5, false},
		{"one large node or four small", four, []*scheduling.InstanceType{&small, &large}, 0.05, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			types := tt.types
			base := solveChecked(t, &scheduling.Input{Pods: tt.pods, NodePools: pools, InstanceTypes: types})
			if got := base.HourlyNodeCost(); got != 0 {
				t.Fatalf("without NodeCosts the plan has a node cost of %v", got)
			}
			plan := solveChecked(t, &scheduling.Input{Pods: tt.pods, NodePools: pools, InstanceTypes: types,
				NodeCosts: map[string]float64{"default": tt.cost, "absent": 100}})
			for _, nc := range plan.NodeClaims {
				if nc.NodeCost != tt.cost {
					t.Fatalf("NodeClaim %s (pool %s) has NodeCost %v, want %v", nc.Name, nc.NodePool, nc.NodeCost, tt.cost)
				}
			}
			baseTotal := base.HourlyPrice() + tt.cost*float64(len(base.NodeClaims))
			total := plan.HourlyPrice() + plan.HourlyNodeCost()
			t.Logf("without the cost in the objective: %d nodes, $%.2f/h instances, $%.2f/h with node costs; with it: %d nodes, $%.2f/h instances, $%.2f/h in total",
				len(base.NodeClaims), base.HourlyPrice(), baseTotal, len(plan.NodeClaims), plan.HourlyPrice(), total)
			if len(plan.NodeClaims) > len(base.NodeClaims) || tt.fewer && len(plan.NodeClaims) == len(base.NodeClaims) {
				t.Errorf("%d nodes with a per-node cost against %d without", len(plan.NodeClaims), len(base.NodeClaims))
			}
			if total > baseTotal*1.0001 {
				t.Errorf("total $%.4f/h with the cost in the objective, more than $%.4f/h for the plan made without it", total, baseTotal)
			}
		})
	}
}

func scaled(l corev1.ResourceList, n int64) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, q := range l {
		if k == corev1.ResourcePods {
			out[k] = q
			continue
		}
		c := q.DeepCopy()
		c.Mul(n)
		out[k] = c
	}
	return out
}

func priced(offerings []scheduling.Offering, price float64) []scheduling.Offering {
	out := slices.Clone(offerings)
	for i := range out {
		out[i].Price = price
	}
	return out
}
