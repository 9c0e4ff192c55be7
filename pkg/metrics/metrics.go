// Package metrics holds what Joiner's controllers share about Prometheus metrics. Each controller
// declares its own metrics, named as Karpenter's where the meaning is the same, and registers them
// in the registry the operator passes in; nothing here is global.
package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c in reg, or returns the collector already registered there under the same
// descriptor, so that two controllers (or two builds of one, in tests) can share a counter such
// as karpenter_nodeclaims_disrupted_total. Any other registration error is returned.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
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
