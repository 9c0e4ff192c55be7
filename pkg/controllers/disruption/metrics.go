package disruption

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the controller's Prometheus collectors, named and labelled as Karpenter's.
type metrics struct {
	// nodeClaimsDisrupted is karpenter_nodeclaims_disrupted_total{reason,nodepool,capacity_type}.
	nodeClaimsDisrupted *prometheus.CounterVec
	// decisions is karpenter_voluntary_disruption_decisions_total{decision,reason,consolidation_type}.
	decisions *prometheus.CounterVec
	// eligible is karpenter_voluntary_disruption_eligible_nodes{reason}: candidates of the last pass.
	eligible *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		nodeClaimsDisrupted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "nodeclaims", Name: "disrupted_total",
			Help: "NodeClaims disrupted, by reason, NodePool and capacity type.",
		}, []string{"reason", "nodepool", "capacity_type"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "decisions_total",
			Help: "Voluntary disruption decisions carried out, by decision, reason and consolidation type.",
		}, []string{"decision", "reason", "consolidation_type"}),
		eligible: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "eligible_nodes",
			Help: "Nodes that the last disruption pass found eligible, by reason, before budgets.",
		}, []string{"reason"}),
	}
	var err error
	if m.nodeClaimsDisrupted, err = register(reg, m.nodeClaimsDisrupted); err != nil {
		return nil, err
	}
	if m.decisions, err = register(reg, m.decisions); err != nil {
		return nil, err
	}
	m.eligible, err = register(reg, m.eligible)
	return m, err
}

// register registers c, or returns the collector already registered under its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	if err != nil {
		return c, fmt.Errorf("registering metric, %w", err)
	}
	return c, nil
}
