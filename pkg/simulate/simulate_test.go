package simulate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const docs = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: bottlerocket}
spec:
  amiSelectorTerms: [{alias: bottlerocket@latest}]
  role: r
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: big-disk}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: r
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
  blockDeviceMappings:
    - {deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 100Gi, volumeType: gp3, iops: 6000}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: br}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: bottlerocket}
      requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m7g]}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: disk}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: big-disk}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: missing}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: not-in-the-files}
`

// TestNodeCostsPerNodePool: each NodePool's node costs its own EC2NodeClass's volumes (the
// AMI family's defaults when it sets none, AL2023's when the files lack it) plus the per-node
// cost, and its instance types are the built-in catalogue's for the region.
func TestNodeCostsPerNodePool(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(file, []byte(docs), 0o600); err != nil {
		t.Fatal(err)
	}
	in, costs, err := Input(Options{Files: []string{file}, Region: "eu-west-1", NodeCost: 0.01, Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	month := func(v float64) float64 { return v / 730 }
	want := map[string]float64{
		"br":      month(24*0.08) + 0.01,             // Bottlerocket: 4Gi OS + 20Gi data, gp3
		"disk":    month(100*0.08+3000*0.005) + 0.01, // 100Gi gp3 with 3,000 IOPS above the included
		"missing": month(20*0.08) + 0.01,             // AL2023's 20Gi gp3
	}
	if len(costs) != len(want) {
		t.Fatalf("costs %+v", costs)
	}
	for _, c := range costs {
		if math.Abs(c.Total()-want[c.NodePool]) > 1e-12 || math.Abs(in.NodeCosts[c.NodePool]-want[c.NodePool]) > 1e-12 {
			t.Errorf("NodePool %s costs %v (input %v), want %v", c.NodePool, c.Total(), in.NodeCosts[c.NodePool], want[c.NodePool])
		}
	}
	if len(in.InstanceTypes) < 300 {
		t.Errorf("%d instance types from the catalogue of eu-west-1, want hundreds", len(in.InstanceTypes))
	}
	for _, it := range in.InstanceTypes {
		for _, o := range it.Offerings {
			if !strings.HasPrefix(o.Zone, "eu-west-1") {
				t.Fatalf("%s is offered in %s, outside eu-west-1", it.Name, o.Zone)
			}
		}
	}
	if _, _, err := Input(Options{Files: []string{file}, WorkloadFile: file}); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("-f with --workload: %v", err)
	}
}
