package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	newCounter := func() *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "karpenter_test_total", Help: "test"}, []string{"reason"})
	}
	first, err := Register(reg, newCounter())
	if err != nil {
		t.Fatal(err)
	}
	second, err := Register(reg, newCounter())
	if err != nil {
		t.Fatalf("registering the same metric again: %v", err)
	}
	if first != second {
		t.Error("the second registration did not return the collector already registered")
	}
	clash := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "karpenter_test_total", Help: "test"}, []string{"other"})
	if _, err := Register(reg, clash); err == nil || !strings.Contains(err.Error(), "registering metric") {
		t.Errorf("registering a clashing metric: err = %v, want a registration error", err)
	}
}

func TestTerminationMode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace *metav1.Duration
		want  string
	}{
		{"unset", nil, "graceful"},
		{"zero", &metav1.Duration{}, "forceful"},
		{"an hour", &metav1.Duration{Duration: time.Hour}, "eventual"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := &v1.NodeClaim{Spec: v1.NodeClaimSpec{TerminationGracePeriod: tc.grace}}
			if got := TerminationMode(nc); got != tc.want {
				t.Errorf("TerminationMode = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestConsolidationPolicy(t *testing.T) {
	for policy, want := range map[v1.ConsolidationPolicy]string{
		v1.ConsolidationPolicyWhenEmpty:                "when_empty",
		v1.ConsolidationPolicyWhenEmptyOrUnderutilized: "when_empty_or_underutilized",
		v1.ConsolidationPolicyBalanced:                 "balanced",
	} {
		if got := ConsolidationPolicy(policy); got != want {
			t.Errorf("ConsolidationPolicy(%s) = %s, want %s", policy, got, want)
		}
	}
}
