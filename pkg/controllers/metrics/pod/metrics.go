package pod

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Label names of karpenter_pods_state, as Karpenter v1.15's.
var stateLabels = []string{"name", "namespace", "owner", "node", "scheduled", "nodepool", "zone", "arch", "capacity_type", "instance_type", "phase", "ready", "managed"}

var (
	stateDesc = prometheus.NewDesc("karpenter_pods_state",
		"Pod state: one series per pod, value 1, labelled with the pod's owner, node, phase, readiness and the node's labels.",
		stateLabels, nil)
	unboundDesc = prometheus.NewDesc("karpenter_pods_current_unbound_time_seconds",
		"Seconds since creation of each pod not yet bound to a node.",
		[]string{"name", "namespace"}, nil)
	// unboundTimeDesc is Karpenter v1's name for the same gauge; Joiner serves both, the older
	// name for its own dashboard and alerts.
	unboundTimeDesc = prometheus.NewDesc("karpenter_pods_unbound_time_seconds",
		"The time from pod creation until the pod is bound.",
		[]string{"name", "namespace"}, nil)
)

// newStartupSummary returns karpenter_pods_startup_duration_seconds, a summary with Karpenter's
// objectives.
func newStartupSummary() prometheus.Summary {
	return prometheus.NewSummary(prometheus.SummaryOpts{
		Namespace: "karpenter", Subsystem: "pods", Name: "startup_duration_seconds",
		Help:       "Seconds from pod creation until the pod's Ready condition first turned True.",
		Objectives: map[float64]float64{0: 0.01, 0.5: 0.05, 0.9: 0.01, 0.99: 0.001, 1: 0.005},
	})
}

// collector exposes karpenter_pods_state and karpenter_pods_current_unbound_time_seconds from
// the controller's records at scrape time, so a gone pod has no series to forget and unbound
// time needs no requeues.
type collector struct{ c *Controller }

var _ prometheus.Collector = collector{}

// Describe sends the descriptors.
func (col collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- unboundDesc
	ch <- unboundTimeDesc
}

// Collect sends one state series per known pod and one unbound time per unbound pod.
func (col collector) Collect(ch chan<- prometheus.Metric) {
	now := col.c.clock.Now()
	col.c.mu.Lock()
	defer col.c.mu.Unlock()
	for key, rec := range col.c.pods {
		ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, 1, rec.labels...)
		if rec.unbound {
			unbound := max(now.Sub(rec.created).Seconds(), 0)
			ch <- prometheus.MustNewConstMetric(unboundDesc, prometheus.GaugeValue, unbound, key.Name, key.Namespace)
			ch <- prometheus.MustNewConstMetric(unboundTimeDesc, prometheus.GaugeValue, unbound, key.Name, key.Namespace)
		}
	}
}

// register registers the controller's collectors with reg. Each controller owns its records, so
// a second controller on the same registry is an error rather than a shared collector.
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("registering pod metrics, %w", err)
		}
	}
	return nil
}
