package disruption

import (
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// allowedDisruptions returns how many of a NodePool's numNodes nodes may be disrupting at once for
// reason at now: the smallest nodes value of the budgets that name the reason (or no reason) and
// whose window is open, with a percentage taken of numNodes and rounded up, as Karpenter and
// PodDisruptionBudget maxUnavailable do (10% of 3 nodes is 1). With no such budget, MaxInt: an
// empty budgets list limits nothing, as in Karpenter's API, whose default of one 10% budget is
// applied by the API server only when the field is left out. It also describes the budget that
// sets the limit ("" with none). A budget that cannot be read (a schedule the parser refuses)
// allows 0 and returns the error, so a broken budget blocks disruption rather than lifting the
// cap.
func allowedDisruptions(nodePool *v1.NodePool, reason v1.DisruptionReason, numNodes int, now time.Time) (int, error) {
	n, _, err := limitingBudget(nodePool, reason, numNodes, now)
	return n, err
}

// limitingBudget is allowedDisruptions that also describes the budget that sets the limit (""
// with none).
func limitingBudget(nodePool *v1.NodePool, reason v1.DisruptionReason, numNodes int, now time.Time) (int, string, error) {
	budgets := nodePool.Spec.Disruption.Budgets
	allowed, limiting := math.MaxInt, ""
	for i := range budgets {
		b := &budgets[i]
		if len(b.Reasons) > 0 && !slices.Contains(b.Reasons, reason) {
			continue
		}
		active, err := budgetActive(b, now)
		if err != nil {
			return 0, describeBudget(nodePool, i), fmt.Errorf("budget %d of nodepool %s, %w", i, nodePool.Name, err)
		}
		if !active {
			continue
		}
		n, err := budgetNodes(b.Nodes, numNodes)
		if err != nil {
			return 0, describeBudget(nodePool, i), fmt.Errorf("budget %d of nodepool %s, %w", i, nodePool.Name, err)
		}
		if n < allowed {
			allowed, limiting = n, describeBudget(nodePool, i)
		}
	}
	return allowed, limiting, nil
}

// describeBudget names budget i of the NodePool with its nodes value and schedule.
func describeBudget(nodePool *v1.NodePool, i int) string {
	b := &nodePool.Spec.Disruption.Budgets[i]
	out := fmt.Sprintf("budget %d of nodepool %s (nodes: %s", i, nodePool.Name, b.Nodes)
	if b.Schedule != nil && b.Duration != nil {
		out += fmt.Sprintf(", schedule %q for %s", *b.Schedule, b.Duration.Duration)
	}
	if len(b.Reasons) > 0 {
		out += fmt.Sprintf(", reasons %v", b.Reasons)
	}
	return out + ")"
}

// budgetActive reports whether the budget applies at now: always without a schedule, else while
// a window of its duration that started at a schedule time is open.
func budgetActive(b *v1.Budget, now time.Time) (bool, error) {
	if b.Schedule == nil && b.Duration == nil {
		return true, nil
	}
	if b.Schedule == nil || b.Duration == nil {
		return false, fmt.Errorf("schedule and duration must be set together")
	}
	s, err := parseSchedule(*b.Schedule)
	if err != nil {
		return false, err
	}
	return s.firedWithin(now, b.Duration.Duration), nil
}

// budgetNodes reads nodes ("3" or "10%") against numNodes, rounding a percentage up.
func budgetNodes(nodes string, numNodes int) (int, error) {
	value := intstr.Parse(nodes)
	n, err := intstr.GetScaledValueFromIntOrPercent(&value, numNodes, true)
	if err != nil {
		return 0, fmt.Errorf("reading nodes %q, %w", nodes, err)
	}
	return max(n, 0), nil
}
