package operator_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/joinerhq/joiner/pkg/operator"
)

// TestFeatureGates: --feature-gates and FEATURE_GATES take Karpenter's syntax and gate names;
// SpotToSpotConsolidation is off unless set; a gate Joiner does not implement is accepted only
// as false, and an unknown name is refused naming the gates.
func TestFeatureGates(t *testing.T) {
	tests := []struct {
		name string
		env  *string // nil: FEATURE_GATES unset
		args []string
		want operator.FeatureGates
		// wantErr is a substring of the error of parsing the flags or of Validate.
		wantErr string
	}{
		{name: "default off"},
		{name: "flag", args: []string{"--feature-gates=SpotToSpotConsolidation=true"}, want: operator.FeatureGates{SpotToSpotConsolidation: true}},
		{name: "environment", env: new("SpotToSpotConsolidation=true"), want: operator.FeatureGates{SpotToSpotConsolidation: true}},
		{name: "flag replaces environment", env: new("SpotToSpotConsolidation=true"), args: []string{"--feature-gates=NodeRepair=false"}},
		{name: "empty environment", env: new("")},
		{
			name: "karpenter chart with reserved capacity off",
			env:  new("ReservedCapacity=false,SpotToSpotConsolidation=true,NodeRepair=false,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false"),
			want: operator.FeatureGates{SpotToSpotConsolidation: true},
		},
		{name: "spaces and 1", args: []string{"--feature-gates= SpotToSpotConsolidation = 1 , NodeOverlay=false"}, want: operator.FeatureGates{SpotToSpotConsolidation: true}},
		{name: "explicitly off", args: []string{"--feature-gates=SpotToSpotConsolidation=false"}},
		{name: "not implemented", args: []string{"--feature-gates=NodeRepair=true"}, wantErr: "feature gate NodeRepair=true: Joiner does not implement NodeRepair yet"},
		{name: "upstream default on, not implemented", env: new("ReservedCapacity=true,SpotToSpotConsolidation=false"),
			wantErr: `FEATURE_GATES="ReservedCapacity=true,SpotToSpotConsolidation=false": feature gate ReservedCapacity=true: Joiner does not implement ReservedCapacity yet`},
		{name: "unknown", args: []string{"--feature-gates=Drift=true"},
			wantErr: `unknown feature gate "Drift": the gates are NodeRepair, ReservedCapacity, SpotToSpotConsolidation, NodeOverlay, StaticCapacity, CapacityBuffer`},
		{name: "every refusal", args: []string{"--feature-gates=NodeRepair=true,Bogus=false,StaticCapacity=true"},
			wantErr: "Joiner does not implement NodeRepair yet (nodes with unhealthy conditions are reported, not repaired); remove it or set NodeRepair=false\n" +
				`unknown feature gate "Bogus": the gates are NodeRepair, ReservedCapacity, SpotToSpotConsolidation, NodeOverlay, StaticCapacity, CapacityBuffer` + "\n" +
				"feature gate StaticCapacity=true: Joiner does not implement StaticCapacity yet"},
		{name: "case matters", args: []string{"--feature-gates=spotToSpotConsolidation=true"}, wantErr: `unknown feature gate "spotToSpotConsolidation"`},
		{name: "not a bool", args: []string{"--feature-gates=SpotToSpotConsolidation=yes"}, wantErr: `feature gate SpotToSpotConsolidation="yes": the value must be true or false`},
		{name: "no value", args: []string{"--feature-gates=SpotToSpotConsolidation"}, wantErr: `feature gate "SpotToSpotConsolidation" is not Name=true or Name=false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != nil {
				t.Setenv("FEATURE_GATES", *tt.env)
			} else {
				t.Setenv("FEATURE_GATES", "")
				unsetenv(t, "FEATURE_GATES")
			}
			t.Setenv("CLUSTER_NAME", "c")
			var o operator.Options
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			err := fs.Parse(tt.args)
			if err == nil {
				err = o.Validate()
			}
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("error = %v", err)
			}
			if o.FeatureGates != tt.want {
				t.Errorf("FeatureGates = %+v, want %+v", o.FeatureGates, tt.want)
			}
		})
	}
}

// TestFeatureGatesString: the flag's value names every gate, so --help shows the defaults.
func TestFeatureGatesString(t *testing.T) {
	g := operator.FeatureGates{SpotToSpotConsolidation: true}
	want := "NodeRepair=false,ReservedCapacity=false,SpotToSpotConsolidation=true,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false"
	if got := g.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if _, err := operator.ParseFeatureGates(want); err != nil {
		t.Errorf("ParseFeatureGates(String()) = %v", err)
	}
}
