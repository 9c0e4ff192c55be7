package metrics_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	cpmetrics "github.com/joinerhq/joiner/pkg/cloudprovider/metrics"
)

// TestDecorate: every call is timed and every error counted by controller, method, provider and
// kind, and the decorated provider still diagnoses joins when the decorated one does.
func TestDecorate(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := cpmetrics.NewMetrics(clocktesting.NewFakeClock(time.Now()), reg)
	if err != nil {
		t.Fatal(err)
	}
	inner := &fake.CloudProvider{ErrorsFor: map[string][]error{
		fake.MethodCreate:           {cloudprovider.NewInsufficientCapacityError(errors.New("no capacity"))},
		fake.MethodGetInstanceTypes: {errors.New("throttled")},
	}}
	cloud := m.Decorate(inner, "provisioning")
	if _, ok := cloud.(cloudprovider.JoinDiagnoser); !ok {
		t.Error("the decorated fake no longer diagnoses joins")
	}
	if _, err := cloud.Create(t.Context(), &v1.NodeClaim{}); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("Create: %v, want the provider's InsufficientCapacityError", err)
	}
	// One failed call is counted, the next (successful) one only timed.
	for range 2 {
		_, _ = cloud.GetInstanceTypes(t.Context(), &v1.NodePool{})
	}
	if _, err := m.Decorate(inner, "disruption").Get(t.Context(), "fake://none"); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Get of a missing instance: %v, want NodeClaimNotFoundError", err)
	}
	want := []string{
		`controller="disruption",error="NodeClaimNotFoundError",method="Get",provider="fake" 1`,
		`controller="provisioning",error="",method="GetInstanceTypes",provider="fake" 1`,
		`controller="provisioning",error="InsufficientCapacityError",method="Create",provider="fake" 1`,
	}
	if got := series(t, reg, "karpenter_cloudprovider_errors_total"); !slices.Equal(got, want) {
		t.Errorf("errors_total:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := series(t, reg, "karpenter_cloudprovider_duration_seconds"); len(got) != 3 {
		t.Errorf("duration series %v, want 3 (Create, GetInstanceTypes, Get)", got)
	}
}

// series returns each series of name as its labels and value (a histogram's count), sorted.
func series(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetCounter().GetValue()
			if h := m.GetHistogram(); h != nil {
				v = float64(h.GetSampleCount())
			}
			out = append(out, fmt.Sprintf("%s %v", strings.Join(labels, ","), v))
		}
	}
	slices.Sort(out)
	return out
}
