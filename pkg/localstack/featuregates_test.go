package localstack

import (
	"os"
	"slices"
	"testing"
)

// TestFeatureGatesArgs: FEATURE_GATES in the stack's environment, even empty, reaches the
// controller's flags; unset, no flag is added.
func TestFeatureGatesArgs(t *testing.T) {
	tests := []struct {
		name string
		env  *string
		want []string
	}{
		{name: "unset"},
		{name: "set", env: new("SpotToSpotConsolidation=true"), want: []string{"--feature-gates", "SpotToSpotConsolidation=true"}},
		{name: "empty", env: new(""), want: []string{"--feature-gates", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("FEATURE_GATES", "")
			if tt.env != nil {
				t.Setenv("FEATURE_GATES", *tt.env)
			} else if err := os.Unsetenv("FEATURE_GATES"); err != nil {
				t.Fatal(err)
			}
			if got := featureGatesArgs(); !slices.Equal(got, tt.want) {
				t.Errorf("featureGatesArgs() = %q, want %q", got, tt.want)
			}
		})
	}
}
