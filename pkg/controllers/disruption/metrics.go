package disruption

import (
	"github.com/prometheus/client_golang/prometheus"

	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

// metrics are the controller's Prometheus collectors, named and labelled as Karpenter's.
type metrics struct {
	// nodeClaimsDisrupted is karpenter_nodeclaims_disrupted_total{reason,nodepool,capacity_type}.
	nodeClaimsDisrupted *prometheus.CounterVec
	// decisions is karpenter_voluntary_disruption_decisions_total{decision,reason,consolidation_type}.
	decisions *prometheus.CounterVec
	// eligible is karpenter_voluntary_disruption_eligible_nodes{reason}: candidates of the last pass.
	eligible *prometheus.GaugeVec
	// evaluation is karpenter_voluntary_disruption_decision_evaluation_duration_seconds{method,consolidation_type}.
	evaluation *prometheus.HistogramVec
	// allowed is karpenter_nodepools_allowed_disruptions{nodepool,reason}.
	allowed *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		nodeClaimsDisrupted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "nodeclaims", Name: "disrupted_total",
			Help: "NodeClaims disrupted, by reason, NodePool and capacity type.",
		}, []string{"reason", "nodepool", "capacity_type"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "decisions_total",
			Help: "Disruption decisions carried out, by decision (delete, replace), reason and consolidation type.",
		}, []string{"decision", "reason", "consolidation_type"}),
		eligible: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "eligible_nodes",
			Help: "Nodes that the last disruption pass found eligible, by reason, before budgets.",
		}, []string{"reason"}),
		evaluation: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "decision_evaluation_duration_seconds",
			Help:    "How long deciding a disruption took, by method and consolidation type.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"method", "consolidation_type"}),
		allowed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "nodepools", Name: "allowed_disruptions",
			Help: "How many more nodes of the NodePool its budgets let be disrupted now, by reason.",
		}, []string{"nodepool", "reason"}),
	}
	var err error
	if m.nodeClaimsDisrupted, err = joinermetrics.Register(reg, m.nodeClaimsDisrupted); err != nil {
		return nil, err
	}
	if m.decisions, err = joinermetrics.Register(reg, m.decisions); err != nil {
		return nil, err
	}
	if m.evaluation, err = joinermetrics.Register(reg, m.evaluation); err != nil {
		return nil, err
	}
	if m.allowed, err = joinermetrics.Register(reg, m.allowed); err != nil {
		return nil, err
	}
	m.eligible, err = joinermetrics.Register(reg, m.eligible)
	return m, err
}
