package disruption

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

// metrics are the controller's Prometheus collectors, named and labelled as Karpenter's.
type metrics struct {
	// nodeClaimsDisrupted is karpenter_nodeclaims_disrupted_total{reason,nodepool,capacity_type,
	// consolidation_policy,termination_mode}, Karpenter v1.15's labels (see DisruptedLabels).
	nodeClaimsDisrupted *prometheus.CounterVec
	// nodeClaimsCreated is karpenter_nodeclaims_created_total, shared with provisioning: the
	// replacements launched, with the disruption reason.
	nodeClaimsCreated *prometheus.CounterVec
	// decisions is karpenter_voluntary_disruption_decisions_total{decision,reason,consolidation_type}.
	decisions *prometheus.CounterVec
	// decisionsByNodePool is karpenter_voluntary_disruption_decisions_by_nodepool_total{nodepool,
	// decision,reason,consolidation_type}: a decision counts once for each NodePool among its
	// candidates.
	decisionsByNodePool *prometheus.CounterVec
	// eligible is karpenter_voluntary_disruption_eligible_nodes{reason}: candidates of the last pass.
	eligible *prometheus.GaugeVec
	// evaluation is karpenter_voluntary_disruption_decision_evaluation_duration_seconds{reason,
	// consolidation_type}: Karpenter's help text says "method", its label is reason.
	evaluation *prometheus.HistogramVec
	// allowed is karpenter_nodepools_allowed_disruptions{nodepool,reason}.
	allowed *prometheus.GaugeVec
	// consuming is karpenter_nodepools_nodes_consuming_budgets{nodepool,reason}.
	consuming *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		nodeClaimsDisrupted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "nodeclaims", Name: "disrupted_total",
			Help: "NodeClaims disrupted, by reason, NodePool, capacity type, consolidation policy and termination mode.",
		}, joinermetrics.DisruptedLabels()),
		nodeClaimsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "nodeclaims", Name: "created_total", Help: provisioning.CreatedHelp,
		}, provisioning.CreatedLabels()),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "decisions_total",
			Help: "Disruption decisions carried out, by decision (delete, replace), reason and consolidation type.",
		}, []string{"decision", "reason", "consolidation_type"}),
		decisionsByNodePool: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "decisions_by_nodepool_total",
			Help: "Disruption decisions carried out, by NodePool, decision (delete, replace), reason and consolidation type.",
		}, []string{"nodepool", "decision", "reason", "consolidation_type"}),
		eligible: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "eligible_nodes",
			Help: "Nodes that the last disruption pass found eligible, by reason, before budgets.",
		}, []string{"reason"}),
		evaluation: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "karpenter", Subsystem: "voluntary_disruption", Name: "decision_evaluation_duration_seconds",
			Help:    "How long deciding a disruption took, by reason and consolidation type.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"reason", "consolidation_type"}),
		allowed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "nodepools", Name: "allowed_disruptions",
			Help: "How many more nodes of the NodePool its budgets let be disrupted now, by reason.",
		}, []string{"nodepool", "reason"}),
		consuming: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "nodepools", Name: "nodes_consuming_budgets",
			Help: "The NodePool's nodes disrupting now (deleting, not Ready, or tainted disrupted), which its budgets count.",
		}, []string{"nodepool", "reason"}),
	}
	var err error
	if m.nodeClaimsDisrupted, err = joinermetrics.Register(reg, m.nodeClaimsDisrupted); err != nil {
		return nil, err
	}
	if m.nodeClaimsCreated, err = joinermetrics.Register(reg, m.nodeClaimsCreated); err != nil {
		return nil, err
	}
	if m.decisions, err = joinermetrics.Register(reg, m.decisions); err != nil {
		return nil, err
	}
	if m.decisionsByNodePool, err = joinermetrics.Register(reg, m.decisionsByNodePool); err != nil {
		return nil, err
	}
	if m.evaluation, err = joinermetrics.Register(reg, m.evaluation); err != nil {
		return nil, err
	}
	if m.allowed, err = joinermetrics.Register(reg, m.allowed); err != nil {
		return nil, err
	}
	if m.consuming, err = joinermetrics.Register(reg, m.consuming); err != nil {
		return nil, err
	}
	m.eligible, err = joinermetrics.Register(reg, m.eligible)
	return m, err
}

// countDecision counts one decision in karpenter_voluntary_disruption_decisions_total, and once
// for each of nodePools (its candidates' NodePools, each once) in
// karpenter_voluntary_disruption_decisions_by_nodepool_total.
func (c *Controller) countDecision(decision string, m method, nodePools ...string) {
	c.metrics.decisions.WithLabelValues(decision, m.label, m.consolidationType).Inc()
	for _, np := range nodePools {
		c.metrics.decisionsByNodePool.WithLabelValues(np, decision, m.label, m.consolidationType).Inc()
	}
}

// candidatePools returns the NodePools of the command's candidates, each once, in order.
func candidatePools(cmd *command) []string {
	var out []string
	for _, cand := range cmd.candidates {
		if np := cand.node.NodeClaim.Labels[v1.NodePoolLabelKey]; !slices.Contains(out, np) {
			out = append(out, np)
		}
	}
	return out
}

// consolidationPolicy is the consolidation_policy label of a candidate disrupted by m: its
// NodePool's policy in snake case for a consolidation, empty for drift (as Karpenter's).
func consolidationPolicy(m method, cand *candidate) string {
	if m.consolidationType == "" || cand.pool == nil || cand.pool.nodePool == nil {
		return ""
	}
	return joinermetrics.ConsolidationPolicy(cand.pool.nodePool.Spec.Disruption.ConsolidationPolicy)
}
