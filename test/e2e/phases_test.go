package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// phaseTimes are, for each stage of a scale-up, the times at which its objects reached it.
type phaseTimes struct {
	name  string
	times []time.Time
}

// logPhases reports where the time of a scale-up went, from the objects' own timestamps
// (whole seconds, except the scheduler's events): for each stage, when the median and the last
// of its objects reached it, counted from created. The stages: the pods created (by
// kube-controller-manager), NodeClaims created (Joiner's batches and solves), instances launched
// (Joiner's EC2 calls), Nodes registered and initialized (the emulator's boot, and Joiner's
// registration), pods bound (kube-scheduler) and pods Running (the emulated kubelets). With it,
// Joiner's solves: how many and their total time, from its metrics.
func logPhases(t *testing.T, ctx context.Context, stack *localstack.Stack, namespace string, created time.Time) {
	t.Helper()
	phases, err := scaleUpPhases(ctx, stack.Client, namespace)
	if err != nil {
		t.Errorf("reading the scale-up's timestamps: %v", err)
		return
	}
	var b strings.Builder
	at := func(ts time.Time) string { return fmt.Sprintf("%+5.1fs", ts.Sub(created).Seconds()) }
	for _, p := range phases {
		if len(p.times) == 0 {
			fmt.Fprintf(&b, "\n  %-22s none", p.name)
			continue
		}
		slices.SortFunc(p.times, func(a, b time.Time) int { return a.Compare(b) })
		fmt.Fprintf(&b, "\n  %-22s %5d  first %s  median %s  last %s", p.name, len(p.times), at(p.times[0]), at(p.times[len(p.times)/2]), at(p.times[len(p.times)-1]))
	}
	if solves, seconds, err := solveTotals(ctx, stack.ControllerMetricsURL); err != nil {
		fmt.Fprintf(&b, "\n  solves: %v", err)
	} else {
		fmt.Fprintf(&b, "\n  %d solves took %.2fs in all", solves, seconds)
	}
	t.Logf("scale-up phases, from the Deployments' creation:%s", b.String())
}

// scaleUpPhases reads the stages' timestamps from the pods of namespace, the NodeClaims and the
// scheduler's Scheduled events.
func scaleUpPhases(ctx context.Context, c client.Client, namespace string) ([]phaseTimes, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims); err != nil {
		return nil, err
	}
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	podsCreated := phaseTimes{name: "pods created"}
	running := phaseTimes{name: "pods Running"}
	for _, p := range pods.Items {
		podsCreated.times = append(podsCreated.times, p.CreationTimestamp.Time)
		if p.Status.StartTime != nil {
			running.times = append(running.times, p.Status.StartTime.Time)
		}
	}
	claimsCreated := phaseTimes{name: "nodeclaims created"}
	conditions := []phaseTimes{{name: v1.ConditionTypeLaunched}, {name: v1.ConditionTypeRegistered}, {name: v1.ConditionTypeInitialized}}
	for _, nc := range claims.Items {
		claimsCreated.times = append(claimsCreated.times, nc.CreationTimestamp.Time)
		for i := range conditions {
			if cond := meta.FindStatusCondition(nc.Status.Conditions, conditions[i].name); cond != nil && cond.Status == "True" {
				conditions[i].times = append(conditions[i].times, cond.LastTransitionTime.Time)
			}
		}
	}
	for i := range conditions {
		conditions[i].name = "nodeclaims " + strings.ToLower(conditions[i].name)
	}
	bound := phaseTimes{name: "pods bound"}
	for _, e := range events.Items {
		if e.Reason == "Scheduled" {
			bound.times = append(bound.times, e.EventTime.Time)
		}
	}
	return append(append([]phaseTimes{podsCreated, claimsCreated}, conditions...), bound, running), nil
}

// solveTotals reads the count and sum of the controller's solve durations from its metrics.
func solveTotals(ctx context.Context, url string) (count uint64, seconds float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("parsing %s, %w", url, err)
	}
	f, ok := families["karpenter_scheduler_scheduling_duration_seconds"]
	if !ok {
		return 0, 0, fmt.Errorf("no karpenter_scheduler_scheduling_duration_seconds at %s", url)
	}
	for _, m := range f.GetMetric() {
		count += m.GetHistogram().GetSampleCount()
		seconds += m.GetHistogram().GetSampleSum()
	}
	return count, seconds, nil
}
