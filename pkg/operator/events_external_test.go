package operator_test

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/joinerhq/joiner/pkg/operator"
)

// TestOperatorRecordsEventsWithBoundedMemory: the controllers' recorders, from the manager's
// GetEventRecorder, are the operator's, not controller-runtime's (client-go's events
// broadcaster, whose memory grows with every event of the last minutes).
func TestOperatorRecordsEventsWithBoundedMemory(t *testing.T) {
	op, err := operator.New(env.Config, env.Scheme, operator.Options{
		ClusterName: "test", LogLevel: "info", MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		BatchIdleDuration: time.Second, BatchMaxDuration: 10 * time.Second,
		KubeClientQPS: operator.DefaultKubeClientQPS, KubeClientBurst: operator.DefaultKubeClientBurst,
	}, prometheus.NewRegistry(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if rec := op.Manager.GetEventRecorder("karpenter"); !operator.RecorderIsBounded(rec, "karpenter") {
		t.Errorf("manager's event recorder is %T, want the operator's for karpenter", rec)
	}
}
