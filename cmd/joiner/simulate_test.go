package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
	want := workload.Summary{PodsScheduled: 3, PodsFailed: 1, Nodes: 3, TotalHourlyPrice: 0.3, InstanceTypesChosen: map[string]int{"m.large": 3}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(workload.Summary{}, "SchedulingSeconds"), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}
