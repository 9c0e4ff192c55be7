package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/console"
)

// TestCostHistory: RecordCost samples the cost per hour at start and every interval; the Overview
// shows the samples, what they add up to, and drops samples older than CostHistory.
func TestCostHistory(t *testing.T) {
	ctx := t.Context()
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "hist"}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	create(ctx, t, np)
	launch := func(name string) { launchPriced(t, np, name) }
	launch("hist-a")

	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	cloud := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{testkit.InstanceType("m7i.large", "amd64", 0.25)}}
	c, err := console.New(env.Client, cloud, clk, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RecordCost(ctx, 0); err == nil || !strings.Contains(err.Error(), "interval must be positive") {
		t.Errorf("RecordCost(0) = %v, want an error naming the interval", err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	if body := get(t, srv, "/"); !strings.Contains(body, "No sample yet") {
		t.Errorf("the Overview before any sample should say there is none:\n%s", body)
	}
	recordCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.RecordCost(recordCtx, time.Hour) }()

	history := func() *console.CostTrend { return overviewHistory(t, srv) }
	// waitFor waits until RecordCost has taken n samples and waits for its next interval.
	waitFor := func(n int) {
		t.Helper()
		testkit.Eventually(t, 10*time.Second, func() string {
			if h := history(); h == nil || len(h.Samples) != n || !clk.HasWaiters() {
				return fmt.Sprintf("waiting for %d samples and RecordCost's wait, have %+v", n, h)
			}
			return ""
		})
	}
	waitFor(1)
	launch("hist-b") // $0.25 per hour for the first hour, then $0.50
	clk.Step(time.Hour)
	waitFor(2)
	clk.Step(time.Hour)
	waitFor(3)
	checkTwoHours(t, history(), get(t, srv, "/"))

	// Half an hour later, between samples, the chart and the spending reach now.
	clk.Step(30 * time.Minute)
	if h := history(); len(h.Samples) != 4 || h.Over != "2h30m0s" || h.Spent < 0.999999 || h.Spent > 1.000001 {
		t.Errorf("history half an hour after the last sample = %+v, want four points over 2h30m0s and $1 spent", h)
	}

	// Seven hours after the last sample, the samples older than six hours are gone.
	clk.Step(6*time.Hour + 30*time.Minute)
	testkit.Eventually(t, 10*time.Second, func() string {
		if h := history(); h == nil || len(h.Samples) != 1 || !h.Samples[0].At.Equal(start.Add(9*time.Hour)) {
			return fmt.Sprintf("waiting for the history to hold only the sample at 21:00, have %+v", h)
		}
		return ""
	})
	stop()
	if err := <-done; err != nil {
		t.Errorf("RecordCost returned %v when its context ended, want nil", err)
	}
}

// launchPriced creates a launched m7i.large on-demand NodeClaim of np.
func launchPriced(t *testing.T, np *v1.NodePool, name string) {
	t.Helper()
	ctx := t.Context()
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: np.Name, corev1.LabelInstanceTypeStable: "m7i.large",
		corev1.LabelTopologyZone: "us-west-2a", v1.CapacityTypeLabelKey: "on-demand"}}, Spec: v1.NodeClaimSpec{Requirements: np.Spec.Template.Spec.Requirements, NodeClassRef: np.Spec.Template.Spec.NodeClassRef}}
	create(ctx, t, nc)
	nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
}

// overviewHistory is the Overview's cost history, from /api/overview.
func overviewHistory(t *testing.T, srv *httptest.Server) *console.CostTrend {
	t.Helper()
	var page struct {
		Data console.Overview `json:"data"`
	}
	if err := json.Unmarshal([]byte(get(t, srv, "/api/overview")), &page); err != nil {
		t.Fatal(err)
	}
	return page.Data.History
}

// checkTwoHours checks the history and the Overview after an hour at $0.25 and one at $0.50.
func checkTwoHours(t *testing.T, h *console.CostTrend, body string) {
	t.Helper()
	if h.Min != 0.25 || h.Max != 0.5 || h.Over != "2h0m0s" || h.Since != "2026-11-25T12:00:00Z" {
		t.Errorf("history = min %v max %v over %s since %s, want 0.25, 0.5, 2h0m0s, 2026-11-25T12:00:00Z", h.Min, h.Max, h.Over, h.Since)
	}
	// Hour one at $0.25 (the first sample's), hour two at $0.50.
	if want := 0.75; h.Spent < want-1e-9 || h.Spent > want+1e-9 {
		t.Errorf("spent = %v, want %v", h.Spent, want)
	}
	for _, w := range []string{`<figure id="cost-history" data-points="3">`, `Spent over the last 2h0m0s: <strong id="spent">$0.7500</strong>`, "between $0.2500 and $0.5000", "<polyline points=\"0.0,52.0 300.0,52.0 300.0,4.0 600.0,4.0\""} {
		if !strings.Contains(body, w) {
			t.Errorf("the Overview does not contain %q:\n%s", w, body)
		}
	}

}
