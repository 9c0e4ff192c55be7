package provisioning

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

// Metric label values.
const (
	controllerLabel = "provisioner"
	// reasonLabel is Karpenter's reason for a NodeClaim created for pending pods.
	reasonLabel = "provisioned"
)

// metrics are the controller's Prometheus collectors, named as Karpenter's where they mean the
// same.
type metrics struct {
	// nodeClaimsCreated is karpenter_nodeclaims_created_total{reason,nodepool,min_values_relaxed},
	// shared with disruption, which counts its replacements.
	nodeClaimsCreated *prometheus.CounterVec
	// schedulingDuration is karpenter_scheduler_scheduling_duration_seconds{controller}.
	schedulingDuration *prometheus.HistogramVec
	// queueDepth is karpenter_scheduler_queue_depth{controller}: pods in the last batch.
	queueDepth *prometheus.GaugeVec
	// unschedulable is karpenter_scheduler_unschedulable_pods_count{controller}.
	unschedulable *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		nodeClaimsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "nodeclaims", Name: "created_total",
			Help: CreatedHelp,
		}, CreatedLabels()),
		schedulingDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "karpenter", Subsystem: "scheduler", Name: "scheduling_duration_seconds",
			Help:    "Duration of one scheduling simulation, in seconds.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"controller"}),
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "scheduler", Name: "queue_depth",
			Help: "Pods the last scheduling simulation was given.",
		}, []string{"controller"}),
		unschedulable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karpenter", Subsystem: "scheduler", Name: "unschedulable_pods_count",
			Help: "Pods the last scheduling simulation could place nowhere.",
		}, []string{"controller"}),
	}
	var err error
	m.nodeClaimsCreated, err = joinermetrics.Register(reg, m.nodeClaimsCreated)
	if err != nil {
		return nil, err
	}
	m.schedulingDuration, err = joinermetrics.Register(reg, m.schedulingDuration)
	if err != nil {
		return nil, err
	}
	m.queueDepth, err = joinermetrics.Register(reg, m.queueDepth)
	if err != nil {
		return nil, err
	}
	m.unschedulable, err = joinermetrics.Register(reg, m.unschedulable)
	return m, err
}

// CreatedHelp is the help of karpenter_nodeclaims_created_total: the disruption controller
// declares it alike (CreatedLabels) to share it.
const CreatedHelp = "NodeClaims created, by reason, NodePool and whether minValues was relaxed."

// CreatedLabels returns the labels of karpenter_nodeclaims_created_total, as Karpenter's: reason
// ("provisioned" for pending pods, the disruption reason for a replacement), nodepool, and
// min_values_relaxed (MinValuesRelaxed).
func CreatedLabels() []string { return []string{"reason", "nodepool", "min_values_relaxed"} }

// MinValuesRelaxed is the min_values_relaxed label of a NodeClaim: "true" when it carries the
// karpenter.sh/nodeclaim-min-values-relaxed annotation with "true", else "false".
func MinValuesRelaxed(nc *v1.NodeClaim) string {
	return strconv.FormatBool(nc.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey] == "true")
}
