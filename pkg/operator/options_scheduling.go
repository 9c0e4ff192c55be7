package operator

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/joinerhq/joiner/pkg/scheduling"
)

// SchedulingOptions are the settings every scheduling simulation of the controller reads, named
// as Karpenter's (flags, environment variables and chart settings alike).
type SchedulingOptions struct {
	// MinValuesPolicy is Strict (a NodeClaim below a NodePool's minValues is not launched) or
	// BestEffort (it is, with minValues lowered to what its options keep and annotated
	// karpenter.sh/nodeclaim-min-values-relaxed: "true").
	MinValuesPolicy string
	// PreferencePolicy is Respect (preferences are relaxed one at a time) or Ignore (preferred
	// node and pod (anti-)affinity and ScheduleAnyway spreads are left out).
	PreferencePolicy string
	// SchedulerConfig is a YAML or JSON document of the cluster's default topology spread
	// constraints: Karpenter's `podTopologySpread: {defaultConstraints: [...]}`, or the
	// cluster's KubeSchedulerConfiguration (scheduling.ParseSchedulerConfig); empty: none.
	SchedulerConfig string
}

// addSchedulingFlags registers the SchedulingOptions flags on fs.
func (o *SchedulingOptions) addSchedulingFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MinValuesPolicy, "min-values-policy", env("MIN_VALUES_POLICY", string(scheduling.MinValuesStrict)), "Strict: a NodeClaim whose options cannot meet a NodePool's minValues is not launched; BestEffort: it is, with minValues lowered and the NodeClaim annotated karpenter.sh/nodeclaim-min-values-relaxed [MIN_VALUES_POLICY]")
	fs.StringVar(&o.PreferencePolicy, "preference-policy", env("PREFERENCE_POLICY", string(scheduling.PreferenceRespect)), "Respect: preferred node and pod (anti-)affinities and ScheduleAnyway spreads hold until a pod cannot be placed; Ignore: they are left out [PREFERENCE_POLICY]")
	fs.StringVar(&o.SchedulerConfig, "scheduler-config", env("SCHEDULER_CONFIG", ""), "YAML or JSON giving the cluster's default topology spread constraints for pods without their own: podTopologySpread: {defaultConstraints: [...]}, or the kube-scheduler's KubeSchedulerConfiguration; empty: none [SCHEDULER_CONFIG]")
}

// Scheduling returns the validated settings, or an error naming the flag and the fix.
func (o *SchedulingOptions) Scheduling() (scheduling.Settings, error) {
	mv, err := scheduling.ParseMinValuesPolicy(o.MinValuesPolicy)
	if err != nil {
		return scheduling.Settings{}, fmt.Errorf("--min-values-policy (MIN_VALUES_POLICY): %w", err)
	}
	pp, err := scheduling.ParsePreferencePolicy(o.PreferencePolicy)
	if err != nil {
		return scheduling.Settings{}, fmt.Errorf("--preference-policy (PREFERENCE_POLICY): %w", err)
	}
	dc, err := scheduling.ParseSchedulerConfig([]byte(o.SchedulerConfig))
	if err != nil {
		return scheduling.Settings{}, fmt.Errorf("--scheduler-config (SCHEDULER_CONFIG): %w", err)
	}
	return scheduling.Settings{MinValuesPolicy: mv, PreferencePolicy: pp, DefaultConstraints: dc}, nil
}
