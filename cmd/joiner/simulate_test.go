package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

func TestSimulateWorkloadJSON(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.json")
	doc := `{"instanceTypes":[{"name":"m.large","cpu":2,"memoryMiB":8192,"pods":29,"arch":"amd64","zones":["z1"],"price":0.1,"overhead":{"cpuMilli":100,"memoryMiB":512}},
	                      {"name":"m.xlarge","cpu":4,"memoryMiB":16384,"pods":58,"arch":"amd64","zones":["z1"],"price":0.2}],
	         "pods":[{"name":"web","count":3,"cpuMilli":500,"memoryMiB":512,"labels":{"app":"web"},"podAntiAffinity":[{"topologyKey":"kubernetes.io/hostname"}]},
	                 {"name":"big","cpuMilli":8000,"memoryMiB":512}]}`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"simulate", "--workload", file, "-o", "json"})
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("simulate: %v", err)
	}
	var got workload.Summary
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("decoding %q: %v", out.String(), err)
	}
	want := workload.Summary{PodsScheduled: 3, PodsFailed: 1, Nodes: 3, TotalHourlyPrice: 0.3, TotalHourlyCost: 0.3, InstanceTypesChosen: map[string]int{"m.large": 3}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(workload.Summary{}, "SchedulingSeconds"), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestSimulateManifests(t *testing.T) {
	dir := t.TempDir()
	catalogue := filepath.Join(dir, "catalogue.json")
	if err := os.WriteFile(catalogue, []byte(`{"instanceTypes":[{"name":"m.large","cpu":2,"memoryMiB":8192,"pods":29,"arch":"amd64","zones":["z1"],"price":0.1},
	  {"name":"m.xlarge","cpu":4,"memoryMiB":16384,"pods":58,"arch":"amd64","zones":["z1"],"price":0.2}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	manifests := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(manifests, []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
---
apiVersion: v1
kind: Node
metadata: {name: old, labels: {kubernetes.io/hostname: old, topology.kubernetes.io/zone: z1}}
status:
  allocatable: {cpu: "1", memory: 2Gi, pods: "10"}
  capacity: {cpu: "1", memory: 2Gi, pods: "10"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 900m, memory: 1Gi}}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"simulate", "-f", manifests, "--instance-types", catalogue, "-o", "json"})
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("simulate: %v", err)
	}
	var got workload.Summary
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("decoding %q: %v", out.String(), err)
	}
	// One replica fits the existing node (1 cpu); the other two (1800m) share one new m.large,
	// whose node class the manifests do not hold: it has the default 20Gi gp3 root volume.
	volume := 20 * 0.08 / 730
	want := workload.Summary{PodsScheduled: 3, PodsOnExistingNodes: 1, Nodes: 1, TotalHourlyPrice: 0.1, InstanceTypesChosen: map[string]int{"m.large": 1},
		TotalHourlyNodeCost: volume, TotalHourlyCost: 0.1 + volume}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(workload.Summary{}, "SchedulingSeconds"), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// TestSimulateSamples: the samples simulate with no other flag (the built-in catalogue of
// us-west-2), as the shell expands -f config/samples/*.yaml; each new node costs its EC2NodeClass's
// root volume and --node-cost apart from its instance, and the table shows both.
func TestSimulateSamples(t *testing.T) {
	files, err := filepath.Glob("../../config/samples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	volume := 20 * 0.08 / 730 // the sample EC2NodeClass sets no blockDeviceMappings: AL2023's 20Gi gp3
	for _, tt := range []struct {
		name     string
		flags    []string
		nodeCost float64
	}{
		{"no other flag", nil, volume},
		{"a per-host licence", []string{"--node-cost", "0.0205"}, volume + 0.0205},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := newRootCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetArgs(append(append([]string{"simulate", "-o", "json", "-f"}, files...), tt.flags...))
			if err := cmd.ExecuteContext(t.Context()); err != nil {
				t.Fatalf("simulate: %v", err)
			}
			var got workload.Summary
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("decoding %q: %v", out.String(), err)
			}
			if got.PodsScheduled != 5 || got.PodsFailed != 0 || got.Nodes == 0 || got.TotalHourlyPrice <= 0 {
				t.Fatalf("summary %+v: want the 5 inflate replicas on new nodes", got)
			}
			if want := float64(got.Nodes) * tt.nodeCost; math.Abs(got.TotalHourlyNodeCost-want) > 1e-9 || math.Abs(got.TotalHourlyCost-got.TotalHourlyPrice-want) > 1e-9 {
				t.Errorf("node cost $%v/h and total $%v/h for %d nodes at $%v/h of instances: want $%v/h of node costs", got.TotalHourlyNodeCost, got.TotalHourlyCost, got.Nodes, got.TotalHourlyPrice, want)
			}
		})
	}
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(append([]string{"simulate", "--node-cost", "0.0205", "-f"}, files...))
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("simulate: %v", err)
	}
	for _, want := range []string{"INSTANCE $/H", "NODE COST $/H", "per-node costs =", "per-node cost of NodePool default: $0.0227/h = volumes 20Gi gp3 $0.0022/h + --node-cost $0.0205/h"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}
