package operator_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/pkg/scheduling"
)

// TestSchedulingOptions: --min-values-policy, --preference-policy and --scheduler-config, their
// environment variables (Karpenter's names) and their validation.
func TestSchedulingOptions(t *testing.T) {
	zoneDoc := "podTopologySpread:\n  defaultConstraints:\n  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}\n"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		want    scheduling.Settings
		wantErr string
	}{
		{name: "defaults", want: scheduling.Settings{MinValuesPolicy: scheduling.MinValuesStrict, PreferencePolicy: scheduling.PreferenceRespect}},
		{name: "environment", env: map[string]string{"MIN_VALUES_POLICY": "BestEffort", "PREFERENCE_POLICY": "Ignore", "SCHEDULER_CONFIG": zoneDoc},
			want: scheduling.Settings{MinValuesPolicy: scheduling.MinValuesBestEffort, PreferencePolicy: scheduling.PreferenceIgnore, DefaultConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: "DoNotSchedule"}}}},
		{name: "flags", env: map[string]string{"MIN_VALUES_POLICY": "BestEffort"}, args: []string{"--min-values-policy=Strict", "--preference-policy=Ignore"},
			want: scheduling.Settings{MinValuesPolicy: scheduling.MinValuesStrict, PreferencePolicy: scheduling.PreferenceIgnore}},
		{name: "bad min values policy", args: []string{"--min-values-policy=Loose"}, wantErr: `--min-values-policy (MIN_VALUES_POLICY): min values policy "Loose" is not Strict or BestEffort`},
		{name: "bad preference policy", env: map[string]string{"PREFERENCE_POLICY": "respect"}, wantErr: `--preference-policy (PREFERENCE_POLICY): preference policy "respect" is not Respect or Ignore`},
		{name: "bad scheduler config", args: []string{"--scheduler-config=podTopologySpread: {defaultConstraints: [{maxSkew: 0, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]}"}, wantErr: "--scheduler-config (SCHEDULER_CONFIG): validating scheduler config, podTopologySpread.defaultConstraints[0].maxSkew"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"MIN_VALUES_POLICY", "PREFERENCE_POLICY", "SCHEDULER_CONFIG"} {
				t.Setenv(k, tc.env[k])
				if _, ok := tc.env[k]; !ok {
					unsetenv(t, k)
				}
			}
			o := parseOptions(t, map[string]string{"CLUSTER_NAME": "c"}, tc.args)
			err := o.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate() = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			got, err := o.Scheduling()
			if err != nil {
				t.Fatal(err)
			}
			if got.MinValuesPolicy != tc.want.MinValuesPolicy || got.PreferencePolicy != tc.want.PreferencePolicy || len(got.DefaultConstraints) != len(tc.want.DefaultConstraints) {
				t.Fatalf("Scheduling() = %+v, want %+v", got, tc.want)
			}
			for i := range got.DefaultConstraints {
				if got.DefaultConstraints[i].String() != tc.want.DefaultConstraints[i].String() {
					t.Errorf("constraint %d = %v, want %v", i, got.DefaultConstraints[i], tc.want.DefaultConstraints[i])
				}
			}
		})
	}
}
