package interruption

import (
	"github.com/prometheus/client_golang/prometheus"

	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

// metrics are the controller's Prometheus collectors, named and labelled as Karpenter's.
type metrics struct {
	// received is karpenter_interruption_received_messages_total{message_type}: every message
	// received, by Kind (KindMalformed for those Parse refused).
	received *prometheus.CounterVec
	// deleted is karpenter_interruption_deleted_messages_total.
	deleted prometheus.Counter
	// queueDuration is karpenter_interruption_message_queue_duration_seconds: from when SQS got a
	// message to when it was handled.
	queueDuration prometheus.Histogram
	// nodeClaimsDisrupted is karpenter_nodeclaims_disrupted_total (labels DisruptedLabels),
	// shared with the disruption controller; the reason is the message's Kind.
	nodeClaimsDisrupted *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "interruption", Name: "received_messages_total",
			Help: "Count of messages received from the SQS queue. Broken down by message type.",
		}, []string{"message_type"}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "interruption", Name: "deleted_messages_total",
			Help: "Count of messages deleted from the SQS queue.",
		}),
		queueDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "karpenter", Subsystem: "interruption", Name: "message_queue_duration_seconds",
			Help:    "Amount of time an interruption message is on the queue before it is processed.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300},
		}),
		// Help and labels must stay those of pkg/controllers/disruption: the two share it.
		nodeClaimsDisrupted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karpenter", Subsystem: "nodeclaims", Name: "disrupted_total",
			Help: "NodeClaims disrupted, by reason, NodePool, capacity type, consolidation policy and termination mode.",
		}, joinermetrics.DisruptedLabels()),
	}
	var err error
	if m.received, err = joinermetrics.Register(reg, m.received); err != nil {
		return nil, err
	}
	if m.deleted, err = joinermetrics.Register(reg, m.deleted); err != nil {
		return nil, err
	}
	if m.queueDuration, err = joinermetrics.Register(reg, m.queueDuration); err != nil {
		return nil, err
	}
	m.nodeClaimsDisrupted, err = joinermetrics.Register(reg, m.nodeClaimsDisrupted)
	return m, err
}
