package charts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/joinerhq/joiner/pkg/operator"
)

// featureGatesEnv returns the controller container's FEATURE_GATES, and whether it is set.
func featureGatesEnv(t *testing.T, docs []*unstructured.Unstructured) (string, bool) {
	t.Helper()
	for _, d := range docs {
		if d.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
		for _, e := range env {
			if e := e.(map[string]any); e["name"] == "FEATURE_GATES" {
				return e["value"].(string), true
			}
		}
	}
	t.Fatal("no Deployment in the rendered chart")
	return "", false
}

// TestChartFeatureGates: settings.featureGates, under Karpenter's value names, reach the
// controller's FEATURE_GATES, which the controller reads as the values say; what the controller
// would refuse, helm template refuses first, naming the gate: Karpenter's own default values
// (reservedCapacity: true) among them.
func TestChartFeatureGates(t *testing.T) {
	karpenterDefaults := filepath.Join(t.TempDir(), "karpenter-values.yaml")
	// Karpenter's chart's settings.featureGates defaults, as an operator's values file copies them.
	if err := os.WriteFile(karpenterDefaults, []byte(`settings:
  featureGates:
    capacityBuffer: false
    nodeOverlay: false
    nodeRepair: false
    reservedCapacity: true
    spotToSpotConsolidation: false
    staticCapacity: false
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		set     []string
		values  string
		wantEnv string
		want    operator.FeatureGates
		wantErr string
		// wantRefused is part of helm template's refusal; the render fails.
		wantRefused string
	}{
		{name: "defaults", wantEnv: "CapacityBuffer=false,NodeOverlay=false,NodeRepair=false,ReservedCapacity=false,SpotToSpotConsolidation=false,StaticCapacity=false"},
		{name: "spot to spot", set: []string{"settings.featureGates.spotToSpotConsolidation=true"}, want: operator.FeatureGates{SpotToSpotConsolidation: true}},
		{name: "karpenter defaults", values: karpenterDefaults, wantRefused: "settings.featureGates.reservedCapacity: true is refused: Joiner does not launch into capacity reservations"},
		{name: "karpenter defaults with reserved capacity off", values: karpenterDefaults, set: []string{"settings.featureGates.reservedCapacity=false"}},
		{name: "node repair", set: []string{"settings.featureGates.nodeRepair=true"}, wantRefused: "settings.featureGates.nodeRepair: true is refused"},
		{name: "unknown gate", set: []string{"settings.featureGates.drift=true"}, wantRefused: "settings.featureGates.drift: not one of Karpenter's feature gates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := append([]string{"settings.clusterName=demo", "settings.region=us-west-2"}, tt.set...)
			if tt.wantRefused != "" {
				// helm install stops before the controller, which would refuse the same at start.
				_, stderr, err := helmTemplate(t, tt.values, set...)
				if err == nil || !strings.Contains(stderr, tt.wantRefused) {
					t.Errorf("helm template: err %v, output %s; want it refused with %q", err, stderr, tt.wantRefused)
				}
				return
			}
			var docs []*unstructured.Unstructured
			if tt.values != "" {
				docs = renderWithValues(t, tt.values, set...)
			} else {
				docs = render(t, set...)
			}
			env, ok := featureGatesEnv(t, docs)
			if !ok {
				t.Fatal("no FEATURE_GATES in the controller's environment")
			}
			if tt.wantEnv != "" && env != tt.wantEnv {
				t.Errorf("FEATURE_GATES = %q, want %q", env, tt.wantEnv)
			}
			got, err := operator.ParseFeatureGates(env)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("FEATURE_GATES %q: error %v, want one containing %q", env, err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("FEATURE_GATES %q: %v", env, err)
			case got != tt.want:
				t.Errorf("FEATURE_GATES %q reads as %+v, want %+v", env, got, tt.want)
			}
		})
	}
}
