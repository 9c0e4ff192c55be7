package charts

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/joinerhq/joiner/pkg/scheduling"
)

// TestChartSchedulingSettings: settings.minValuesPolicy, settings.preferencePolicy and
// settings.schedulerConfig (Karpenter's names) reach the controller's environment, and only a
// scheduler config grants reading the objects default spread selectors come from.
func TestChartSchedulingSettings(t *testing.T) {
	doc := "podTopologySpread:\n  defaultConstraints:\n  - maxSkew: 1\n    topologyKey: topology.kubernetes.io/zone\n    whenUnsatisfiable: DoNotSchedule\n"
	envOf := func(docs []*unstructured.Unstructured) map[string]string {
		out := map[string]string{}
		for _, d := range docs {
			if d.GetKind() != "Deployment" {
				continue
			}
			cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			env, _, _ := unstructured.NestedSlice(cs[0].(map[string]any), "env")
			for _, e := range env {
				m := e.(map[string]any)
				if v, ok := m["value"].(string); ok {
					out[m["name"].(string)] = v
				}
			}
		}
		return out
	}
	readsReplicaSets := func(docs []*unstructured.Unstructured) bool {
		for _, d := range docs {
			if d.GetKind() != "ClusterRole" {
				continue
			}
			rules, _, _ := unstructured.NestedSlice(d.Object, "rules")
			for _, r := range rules {
				res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
				if slices.Contains(res, "replicasets") {
					return true
				}
			}
		}
		return false
	}
	base := []string{"settings.clusterName=demo", "settings.region=us-west-2"}

	def := render(t, base...)
	if env := envOf(def); env["MIN_VALUES_POLICY"] != "Strict" || env["PREFERENCE_POLICY"] != "Respect" || env["SCHEDULER_CONFIG"] != "" {
		t.Errorf("default environment %v, want Strict, Respect and no SCHEDULER_CONFIG", env)
	}
	if readsReplicaSets(def) {
		t.Error("the ClusterRole reads replicasets without settings.schedulerConfig")
	}

	set := render(t, append(base, "settings.minValuesPolicy=BestEffort", "settings.preferencePolicy=Ignore", "settings.schedulerConfig="+doc)...)
	env := envOf(set)
	if env["MIN_VALUES_POLICY"] != "BestEffort" || env["PREFERENCE_POLICY"] != "Ignore" || env["SCHEDULER_CONFIG"] != doc {
		t.Errorf("environment %v, want BestEffort, Ignore and the scheduler config", env)
	}
	if dc, err := scheduling.ParseSchedulerConfig([]byte(env["SCHEDULER_CONFIG"])); err != nil || len(dc) != 1 {
		t.Errorf("SCHEDULER_CONFIG reads as %v, %v; want one constraint", dc, err)
	}
	if !readsReplicaSets(set) {
		t.Error("the ClusterRole does not read replicasets with settings.schedulerConfig")
	}
}
