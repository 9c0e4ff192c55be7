package lifetime_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/metrics/lifetime"
)

// observed returns every series as "name{labels} value", a counter's value or a summary's or
// histogram's count and sum, sorted.
func observed(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := fmt.Sprint(m.GetCounter().GetValue())
			if s := m.GetSummary(); s != nil {
				v = fmt.Sprintf("n=%d sum=%v", s.GetSampleCount(), s.GetSampleSum())
			}
			if h := m.GetHistogram(); h != nil {
				v = fmt.Sprintf("n=%d sum=%v", h.GetSampleCount(), h.GetSampleSum())
			}
			out = append(out, fmt.Sprintf("%s{%s} %s", f.GetName(), strings.Join(labels, ","), v))
		}
	}
	slices.Sort(out)
	return out
}

func TestLifetime(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{v1.NodePoolLabelKey: "default", corev1.LabelTopologyZone: "us-west-2a", v1.CapacityTypeLabelKey: "spot"}
	claim := func(status metav1.ConditionStatus) *v1.NodeClaim {
		return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc", Labels: labels},
			Status: v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeRegistered, Status: status}}}}
	}
	deleting := metav1.NewTime(now.Add(-30 * time.Second))
	for _, tc := range []struct {
		name string
		do   func(c *lifetime.Controller)
		want []string
	}{
		{"registered", func(c *lifetime.Controller) {
			c.NodeClaimUpdated(claim(metav1.ConditionUnknown), claim(metav1.ConditionTrue))
		},
			[]string{"karpenter_nodes_created_total{nodepool=default,zone=us-west-2a} 1"}},
		{"still registered", func(c *lifetime.Controller) {
			c.NodeClaimUpdated(claim(metav1.ConditionTrue), claim(metav1.ConditionTrue))
		}, nil},
		{"nodeclaim gone", func(c *lifetime.Controller) {
			nc := claim(metav1.ConditionTrue)
			nc.DeletionTimestamp = &deleting
			c.NodeClaimDeleted(nc)
		}, []string{
			"karpenter_nodeclaims_terminated_total{capacity_type=spot,nodepool=default,zone=us-west-2a} 1",
			"karpenter_nodeclaims_termination_duration_seconds{nodepool=default} n=1 sum=30",
		}},
		{"node gone", func(c *lifetime.Controller) {
			c.NodeDeleted(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels,
				CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)), DeletionTimestamp: &deleting}})
		}, []string{
			"karpenter_nodes_lifetime_duration_seconds{nodepool=default} n=1 sum=3600",
			"karpenter_nodes_terminated_total{nodepool=default,zone=us-west-2a} 1",
			"karpenter_nodes_termination_duration_seconds{nodepool=default} n=1 sum=30",
		}},
		{"a node no nodepool owns", func(c *lifetime.Controller) {
			c.NodeDeleted(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "static", DeletionTimestamp: &deleting}})
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			c, err := lifetime.NewController(clocktesting.NewFakePassiveClock(now), reg)
			if err != nil {
				t.Fatal(err)
			}
			tc.do(c)
			if got := observed(t, reg); !slices.Equal(got, tc.want) {
				t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
