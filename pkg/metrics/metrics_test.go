package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
