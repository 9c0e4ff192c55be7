package karpenterpolicy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/internal/karpenterpolicy"
)

// orgChanges are the statements a field case's world changes on purpose, by world: S4's org
// adds a cost-center condition to the launch of instances, volumes and Spot requests.
var orgChanges = map[string][]string{"s4-runinstances-auth-check": {"AllowScopedEC2InstanceActionsWithTags"}}

// TestFieldCaseWorldsHoldKarpentersPolicy: every field case's world gives the controller's role
// each statement of Karpenter's documented policy for its cluster, region and account, as
// Document renders it (issue #28: every field case plays on Karpenter's documented policy), but
// for the statements orgChanges names.
func TestFieldCaseWorldsHoldKarpentersPolicy(t *testing.T) {
	worlds, err := filepath.Glob(filepath.Join("..", "..", "test", "scenarios", "*.world.yaml"))
	if err != nil || len(worlds) == 0 {
		t.Fatalf("no field case worlds: %v", err)
	}
	for _, path := range worlds {
		name := filepath.Base(path)[:len(filepath.Base(path))-len(".world.yaml")]
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Cluster struct {
					Name      string `json:"name"`
					AccountID string `json:"accountId"`
					Region    string `json:"region"`
				} `json:"cluster"`
				ControllerPolicy json.RawMessage `json:"controllerPolicy"`
			}
			if err := yaml.Unmarshal(raw, &w); err != nil {
				t.Fatal(err)
			}
			if len(w.ControllerPolicy) == 0 {
				t.Fatal("no controllerPolicy: give the controller's role Karpenter's documented policy")
			}
			got, err := policy.Parse(string(w.ControllerPolicy))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := json.Marshal(karpenterpolicy.Document(karpenterpolicy.Options{ClusterName: w.Cluster.Name, Region: w.Cluster.Region, AccountID: w.Cluster.AccountID}))
			if err != nil {
				t.Fatal(err)
			}
			want, err := policy.Parse(string(doc))
			if err != nil {
				t.Fatal(err)
			}
			bySid := map[string]policy.Statement{}
			for _, s := range got.Statement {
				bySid[s.Sid] = s
			}
			for _, s := range want.Statement {
				g, ok := bySid[s.Sid]
				switch {
				case !ok:
					t.Errorf("statement %s of Karpenter's policy is missing", s.Sid)
				case !reflect.DeepEqual(g, s) && !slices.Contains(orgChanges[name], s.Sid):
					t.Errorf("statement %s differs from Karpenter's:\n got %+v\nwant %+v", s.Sid, g, s)
				}
			}
		})
	}
}
