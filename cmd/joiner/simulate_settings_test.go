package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

// TestSimulateSchedulingSettings: simulate's --min-values-policy, --preference-policy and
// --scheduler-config change the plan as the controller's settings would.
func TestSimulateSchedulingSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	catalogue := write("catalogue.json", `{"instanceTypes":[{"name":"m.large","cpu":2,"memoryMiB":8192,"pods":29,"arch":"amd64","zones":["z1"],"price":0.1},
	  {"name":"m.xlarge","cpu":4,"memoryMiB":16384,"pods":58,"arch":"amd64","zones":["z1"],"price":0.2}]}`)
	pool := func(minValues string) string {
		return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m.large, m.xlarge, m.huge]` + minValues + `}]
---
`
	}
	web := func(extra string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:` + extra + `
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`
	}
	preferApart := `
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 10
            podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}`
	kubeConfig := write("kube-scheduler.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
`)
	karpenterConfig := write("karpenter.yaml", "podTopologySpread:\n  defaultConstraints:\n  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}\n")
	for _, tc := range []struct {
		name      string
		manifests string
		args      []string
		wantNodes int
		wantFails int
		wantText  string
		wantErr   string
	}{
		{name: "defaults", manifests: pool("") + web(""), wantNodes: 1},
		{name: "KubeSchedulerConfiguration default spread", manifests: pool("") + web(""), args: []string{"--scheduler-config", kubeConfig}, wantNodes: 3},
		{name: "Karpenter's scheduler config", manifests: pool("") + web(""), args: []string{"--scheduler-config", karpenterConfig}, wantNodes: 3},
		{name: "preferences respected", manifests: pool("") + web(preferApart), wantNodes: 3},
		{name: "preferences ignored", manifests: pool("") + web(preferApart), args: []string{"--preference-policy", "Ignore"}, wantNodes: 1},
		{name: "minValues strict", manifests: pool(", minValues: 3") + web(""), wantFails: 3},
		{name: "minValues best effort", manifests: pool(", minValues: 3") + web(""), args: []string{"--min-values-policy", "BestEffort"}, wantNodes: 1,
			wantText: "minValues relaxed (--min-values-policy BestEffort), its requirements keep node.kubernetes.io/instance-type minValues 2"},
		{name: "bad policy", manifests: pool("") + web(""), args: []string{"--preference-policy", "Maybe"}, wantErr: `--preference-policy: preference policy "Maybe" is not Respect or Ignore`},
		{name: "missing config", manifests: pool("") + web(""), args: []string{"--scheduler-config", filepath.Join(dir, "none.yaml")}, wantErr: "reading --scheduler-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifests := write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.manifests)
			run := func(output string) (string, error) {
				cmd := newRootCommand()
				var out bytes.Buffer
				cmd.SetOut(&out)
				cmd.SetErr(&out)
				cmd.SetArgs(append([]string{"simulate", "-f", manifests, "--instance-types", catalogue, "-o", output}, tc.args...))
				err := cmd.ExecuteContext(t.Context())
				return out.String(), err
			}
			out, err := run("json")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("simulate: %v", err)
			}
			var got workload.Summary
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("decoding %q: %v", out, err)
			}
			if got.Nodes != tc.wantNodes || got.PodsFailed != tc.wantFails {
				t.Errorf("nodes %d, pods failed %d; want %d and %d", got.Nodes, got.PodsFailed, tc.wantNodes, tc.wantFails)
			}
			if tc.wantText != "" {
				table, err := run("table")
				if err != nil || !strings.Contains(table, tc.wantText) {
					t.Errorf("table (%v) lacks %q:\n%s", err, tc.wantText, table)
				}
			}
		})
	}
}
