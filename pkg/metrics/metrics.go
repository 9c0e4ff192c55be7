// Package metrics holds what Joiner's controllers share about Prometheus metrics: registration
// and the label values several controllers must compute alike. Each controller
// declares its own metrics, named as Karpenter's where the meaning is the same, and registers them
// in the registry the operator passes in; nothing here is global.
package metrics

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
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

// DisruptedLabels returns the labels of karpenter_nodeclaims_disrupted_total, in order, as
// Karpenter v1.15 has them: reason, nodepool, capacity_type, consolidation_policy (the NodePool's
// policy in snake case for a consolidation, else empty) and termination_mode (TerminationMode).
// The controllers that share the counter must declare it with the same labels.
func DisruptedLabels() []string {
	return []string{"reason", "nodepool", "capacity_type", "consolidation_policy", "termination_mode"}
}

// TerminationMode is the termination_mode label of a disrupted NodeClaim, as Karpenter derives it
// from spec.terminationGracePeriod: "graceful" when unset (drain waits for every PDB and
// do-not-disrupt pod), "forceful" when zero or less, else "eventual" (drain is bounded by it).
func TerminationMode(nodeClaim *v1.NodeClaim) string {
	switch {
	case nodeClaim == nil || nodeClaim.Spec.TerminationGracePeriod == nil:
		return "graceful"
	case nodeClaim.Spec.TerminationGracePeriod.Duration <= 0:
		return "forceful"
	default:
		return "eventual"
	}
}

// ConsolidationPolicy is the consolidation_policy label of a NodePool's policy: its value in
// snake case (WhenEmptyOrUnderutilized becomes when_empty_or_underutilized), as Karpenter's.
func ConsolidationPolicy(policy v1.ConsolidationPolicy) string {
	var b strings.Builder
	for i, r := range string(policy) {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
