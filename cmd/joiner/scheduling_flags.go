package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/joinerhq/joiner/pkg/scheduling"
)

// schedulingFlags are the controller's scheduling settings as flags of the commands that
// simulate it (simulate, explain pod), so that they simulate what a controller so configured
// does. --scheduler-config names a file here; the controller takes the document itself.
type schedulingFlags struct {
	minValuesPolicy, preferencePolicy, schedulerConfig string
}

func (f *schedulingFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.minValuesPolicy, "min-values-policy", string(scheduling.MinValuesStrict), "as the controller's: Strict, or BestEffort (a NodeClaim that cannot meet a NodePool's minValues launches with them lowered)")
	fs.StringVar(&f.preferencePolicy, "preference-policy", string(scheduling.PreferenceRespect), "as the controller's: Respect, or Ignore (preferred affinities and ScheduleAnyway spreads left out)")
	fs.StringVar(&f.schedulerConfig, "scheduler-config", "", "file of the cluster's default topology spread constraints: the controller's --scheduler-config document (podTopologySpread: {defaultConstraints: [...]}) or the kube-scheduler's KubeSchedulerConfiguration")
}

// settings returns the validated settings, reading the --scheduler-config file.
func (f *schedulingFlags) settings() (scheduling.Settings, error) {
	mv, err := scheduling.ParseMinValuesPolicy(f.minValuesPolicy)
	if err != nil {
		return scheduling.Settings{}, fmt.Errorf("--min-values-policy: %w", err)
	}
	pp, err := scheduling.ParsePreferencePolicy(f.preferencePolicy)
	if err != nil {
		return scheduling.Settings{}, fmt.Errorf("--preference-policy: %w", err)
	}
	st := scheduling.Settings{MinValuesPolicy: mv, PreferencePolicy: pp}
	if f.schedulerConfig == "" {
		return st, nil
	}
	data, err := os.ReadFile(f.schedulerConfig)
	if err != nil {
		return scheduling.Settings{}, fmt.Errorf("reading --scheduler-config, %w", err)
	}
	if st.DefaultConstraints, err = scheduling.ParseSchedulerConfig(data); err != nil {
		return scheduling.Settings{}, fmt.Errorf("--scheduler-config %s: %w", f.schedulerConfig, err)
	}
	return st, nil
}
