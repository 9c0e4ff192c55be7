package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// repriced returns copies of types whose offerings of capacity type ct are priced at a factor
// drawn per type and zone from [lo, hi) of the type's on-demand price (seeded), leaving the
// other offerings as they are.
func repriced(types []*scheduling.InstanceType, ct string, seed uint64, lo, hi float64) []*scheduling.InstanceType {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]*scheduling.InstanceType, len(types))
	for i, it := range types {
		c := *it
		c.Offerings = make([]scheduling.Offering, len(it.Offerings))
		base := 0.0
		for _, o := range it.Offerings {
			if o.CapacityType == v1.CapacityTypeOnDemand {
				base = o.Price
			}
		}
		for j, o := range it.Offerings {
			if o.CapacityType == ct {
				o.Price = base * (lo + rng.Float64()*(hi-lo))
			}
			c.Offerings[j] = o
		}
		out[i] = &c
	}
	return out
}

// planText renders everything a plan decides: per NodeClaim its pool, launch, options and pods,
// and the unschedulable pods.
func planText(p *scheduling.Plan) string {
	var b strings.Builder
	for _, nc := range p.NodeClaims {
		fmt.Fprintf(&b, "%s %s %+v %v [", nc.Name, nc.NodePool, nc.Launch, nc.InstanceTypes)
		for _, pod := range nc.Pods {
			b.WriteString(pod.Name + " ")
		}
		b.WriteString("]\n")
	}
	for _, u := range p.Unschedulable {
		fmt.Fprintf(&b, "unschedulable %s\n", u.Pod.Name)
	}
	return b.String()
}

func capacityTypes(cts ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: v1.NodeSelectorOpIn, Values: cts},
		}
	}
}

// TestPlanIgnoresPricesThePoolCannotBuy: a NodePool's plan (node count, shapes, launches,
// options, placements) depends only on the prices of the offerings its requirements allow. An
// on-demand pool's plan is identical under two spot price sets, and a spot pool's under two
// on-demand price sets; a pool that may buy both is planned differently under them (so the
// price sets do matter).
func TestPlanIgnoresPricesThePoolCannotBuy(t *testing.T) {
	types := generatedTypes(400)
	pods := mixedPods(600, 3)
	for i := range 200 {
		// plain pods of several cpu:memory ratios, which pick the family by price
		cpu := []string{"250m", "1", "3", "500m"}[i%4]
		mem := []string{"3Gi", "1Gi", "2Gi", "6Gi"}[i%4]
		pods = append(pods, pod(fmt.Sprintf("plain-%d", i), cpu, mem, withLabels("app", fmt.Sprint("plain-", i%4))))
	}
	tests := []struct {
		name string
		pool *v1.NodePool
		// a and b are two price sets of the same types
		a, b []*scheduling.InstanceType
		same bool
	}{
		{"on-demand pool, two spot price sets", nodePool("od", capacityTypes(v1.CapacityTypeOnDemand)),
			repriced(types, v1.CapacityTypeSpot, 1, 0.2, 0.9), repriced(types, v1.CapacityTypeSpot, 2, 0.2, 0.9), true},
		{"on-demand pool, spot dearer than on-demand", nodePool("od", capacityTypes(v1.CapacityTypeOnDemand)),
			repriced(types, v1.CapacityTypeSpot, 3, 0.1, 0.3), repriced(types, v1.CapacityTypeSpot, 4, 1.5, 3), true},
		{"spot pool, two on-demand price sets", nodePool("spot", capacityTypes(v1.CapacityTypeSpot)),
			repriced(repriced(types, v1.CapacityTypeSpot, 5, 0.2, 0.9), v1.CapacityTypeOnDemand, 6, 0.1, 0.4),
			repriced(repriced(types, v1.CapacityTypeSpot, 5, 0.2, 0.9), v1.CapacityTypeOnDemand, 7, 2, 4), true},
		{"pool of both capacity types, two spot price sets", nodePool("both", capacityTypes(v1.CapacityTypeOnDemand, v1.CapacityTypeSpot)),
			repriced(types, v1.CapacityTypeSpot, 1, 0.2, 0.9), repriced(types, v1.CapacityTypeSpot, 2, 0.2, 0.9), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa := solveChecked(t, &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{tt.pool}, InstanceTypes: tt.a})
			pb := solveChecked(t, &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{tt.pool}, InstanceTypes: tt.b})
			if len(pa.Unschedulable)+len(pb.Unschedulable) > 0 {
				t.Fatalf("unschedulable pods: %d and %d", len(pa.Unschedulable), len(pb.Unschedulable))
			}
			ta, tb := planText(pa), planText(pb)
			if tt.same && ta != tb {
				t.Errorf("the plans differ: %d nodes at $%.4f/h against %d at $%.4f/h; first difference:\n%s",
					len(pa.NodeClaims), pa.HourlyPrice(), len(pb.NodeClaims), pb.HourlyPrice(), firstDiff(ta, tb))
			}
			if !tt.same && ta == tb {
				t.Errorf("the plans are identical (%d nodes): the price sets do not reach the plan, so the other cases prove nothing", len(pa.NodeClaims))
			}
		})
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "- " + la[i] + "\n+ " + lb[i]
		}
	}
	return fmt.Sprintf("%d lines against %d", len(la), len(lb))
}
