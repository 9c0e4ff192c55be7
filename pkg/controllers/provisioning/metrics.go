package provisioning

import (
	"github.com/prometheus/client_golang/prometheus"

	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

// Metric label values.
const (
	controllerLabel = "provisioner"
	reasonLabel     = "provisioning"
)

// metrics are the controller's Prometheus collectors, named as Karpenter's where they mean the
// same.
type metrics struct {
	// nodeClaimsCreated is karpenter_nodeclaims_created_total{nodepool,reason}.
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
			Help: "NodeClaims created, by NodePool and reason.",
		}, []string{"nodepool", "reason"}),
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
