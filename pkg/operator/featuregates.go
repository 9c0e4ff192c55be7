package operator

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// FeatureGates are Karpenter's feature gates (--feature-gates, FEATURE_GATES) as Joiner answers
// them. The zero value is Joiner's default: every gate off. It is a pflag.Value: Set parses the
// text, refusing what Joiner cannot honour (ParseFeatureGates).
type FeatureGates struct {
	// SpotToSpotConsolidation lets consolidation replace spot nodes by cheaper spot nodes
	// (upstream: alpha, off by default). Off, a spot node is only deleted or replaced by
	// on-demand capacity, as upstream.
	SpotToSpotConsolidation bool
}

// featureGate is one of Karpenter's gates and Joiner's answer to it.
type featureGate struct {
	name string
	// upstream is Karpenter's default.
	upstream bool
	// missing, when set, is why Joiner accepts the gate only as false: it does not implement
	// the feature, and saying true must not look honoured.
	missing string
	// field is the gate's field in FeatureGates; nil when missing is set.
	field func(*FeatureGates) *bool
}

// featureGates are kubernetes-sigs/karpenter's gates (pkg/operator/options, as of its main
// branch after v1.14.1) in its order. ReservedCapacity is on by default upstream; Joiner does
// not model capacity reservations, which is what upstream does with the gate off, so Joiner's
// default is off and true is refused rather than ignored.
func featureGates() []featureGate {
	return []featureGate{
		{name: "NodeRepair", missing: "nodes with unhealthy conditions are reported, not repaired"},
		{name: "ReservedCapacity", upstream: true, missing: "capacity reservations are not launched into: capacityReservationSelectorTerms is not acted on, as in Karpenter with the gate off"},
		{name: "SpotToSpotConsolidation", field: func(g *FeatureGates) *bool { return &g.SpotToSpotConsolidation }},
		{name: "NodeOverlay", missing: "there is no NodeOverlay API"},
		{name: "StaticCapacity", missing: "NodePools have no spec.replicas"},
		{name: "CapacityBuffer", missing: "there is no CapacityBuffer support"},
	}
}

// FeatureGateNames returns the gates --feature-gates accepts, in Karpenter's order.
func FeatureGateNames() []string {
	var out []string
	for _, g := range featureGates() {
		out = append(out, g.name)
	}
	return out
}

// ParseFeatureGates reads Karpenter's --feature-gates syntax, "Name=true,Name2=false" (spaces
// around names and values allowed, values as strconv.ParseBool reads them, "" for none): gates
// not named keep Joiner's default, off. It refuses, naming the pair and the fix, what Karpenter
// would take but Joiner cannot honour: a name that is not one of Karpenter's gates (Karpenter
// ignores it silently), and true for a gate whose feature Joiner does not implement.
func ParseFeatureGates(s string) (FeatureGates, error) {
	var out FeatureGates
	return out, out.set(s)
}

// set applies the pairs of s over g, and returns every pair it refuses.
func (g *FeatureGates) set(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var errs []error
	for _, pair := range strings.Split(s, ",") {
		if err := g.setPair(pair); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// setPair applies one Name=value pair.
func (g *FeatureGates) setPair(pair string) error {
	name, value, ok := strings.Cut(pair, "=")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" {
		return fmt.Errorf("feature gate %q is not Name=true or Name=false", strings.TrimSpace(pair))
	}
	on, err := strconv.ParseBool(value)
	if err != nil {
		return fmt.Errorf("feature gate %s=%q: the value must be true or false", name, value)
	}
	gate, found := findGate(name)
	switch {
	case !found:
		return fmt.Errorf("unknown feature gate %q: the gates are %s", name, strings.Join(FeatureGateNames(), ", "))
	case gate.missing != "" && on:
		return fmt.Errorf("feature gate %s=true: Joiner does not implement %s yet (%s); remove it or set %s=false", name, name, gate.missing, name)
	case gate.field != nil:
		*gate.field(g) = on
	}
	return nil
}

func findGate(name string) (featureGate, bool) {
	for _, g := range featureGates() {
		if g.name == name {
			return g, true
		}
	}
	return featureGate{}, false
}

// Set implements pflag.Value: the gates become those of s over Joiner's defaults, as Karpenter's
// flag, whose last value replaces FEATURE_GATES' rather than adding to it.
func (g *FeatureGates) Set(s string) error {
	parsed, err := ParseFeatureGates(s)
	if err != nil {
		return err
	}
	*g = parsed
	return nil
}

// String implements pflag.Value: every gate with its value, in Karpenter's order.
func (g *FeatureGates) String() string {
	var parts []string
	for _, gate := range featureGates() {
		on := false
		if gate.field != nil {
			on = *gate.field(g)
		}
		parts = append(parts, gate.name+"="+strconv.FormatBool(on))
	}
	return strings.Join(parts, ",")
}

// Type implements pflag.Value.
func (g *FeatureGates) Type() string { return "mapStringBool" }

// featureGatesUsage is --feature-gates' help.
func featureGatesUsage() string {
	var implemented, missing []string
	for _, g := range featureGates() {
		if g.missing != "" {
			missing = append(missing, g.name)
			continue
		}
		implemented = append(implemented, fmt.Sprintf("%s (Karpenter's default %t)", g.name, g.upstream))
	}
	return fmt.Sprintf("Karpenter's feature gates, Name=true,Name2=false; all off by default. %s. Accepted only as false, as Joiner does not implement them: %s [FEATURE_GATES]",
		strings.Join(implemented, ", "), strings.Join(missing, ", "))
}

// addFeatureGatesFlag registers --feature-gates on fs, defaulting to FEATURE_GATES; a variable
// that does not parse is remembered for Validate.
func (o *Options) addFeatureGatesFlag(fs *pflag.FlagSet) {
	if v, ok := os.LookupEnv("FEATURE_GATES"); ok {
		if err := o.FeatureGates.Set(v); err != nil {
			o.envErrs = append(o.envErrs, fmt.Errorf("FEATURE_GATES=%q: %w", v, err))
		}
	}
	fs.Var(&o.FeatureGates, "feature-gates", featureGatesUsage())
}
