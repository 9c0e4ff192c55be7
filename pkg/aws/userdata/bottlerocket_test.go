package userdata

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

func TestRenderBottlerocket(t *testing.T) {
	const operator = `[settings.kubernetes]
cluster-name = "other"
"max-pods" = 110
image-gc-high-threshold-percent = 85

[settings.kubernetes.node-labels]
"example.com/team" = "db"
"example.com/extra" = "1"

[settings.kubernetes.node-taints]
"node.cilium.io/agent-not-ready" = ["true:NoExecute"]
"karpenter.sh/unregistered" = "x:NoExecute"
"example.com/dedicated" = "NoSchedule"

[settings.host-containers.admin]
enabled = true

[[settings.container-registry.credentials]]
registry = "docker.io"

[settings.made-up-future-setting]
knob = [1, 2, 3]
`
	opts := baseOptions(awsv1.AMIFamilyBottlerocket, operator)
	opts.Kubelet = &awsv1.KubeletConfiguration{
		SystemReserved: map[string]awsv1.ReservedQuantity{"cpu": "100m"},
		CPUCFSQuota:    ptr.To(false),
	}
	res, err := Render(opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	doc, err := parseTOML(res.UserData)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, res.UserData)
	}
	want := map[string]any{"settings": map[string]any{
		"kubernetes": map[string]any{
			"cluster-name":                    "demo",
			"api-server":                      "https://demo.eks.example.com",
			"cluster-certificate":             "Y2EtYnVuZGxl",
			"cluster-dns-ip":                  "10.100.0.10",
			"max-pods":                        int64(29),
			"image-gc-high-threshold-percent": int64(85),
			"cpu-cfs-quota-enforced":          false,
			"system-reserved":                 map[string]any{"cpu": "100m"},
			"node-labels":                     map[string]any{"example.com/team": "web", "example.com/extra": "1", "karpenter.sh/nodepool": "default"},
			"node-taints": map[string]any{
				"node.cilium.io/agent-not-ready": []any{"true:NoExecute"},
				"karpenter.sh/unregistered":      []any{":NoExecute"},
				"example.com/dedicated":          []any{"web:NoSchedule"},
			},
		},
		"host-containers":        map[string]any{"admin": map[string]any{"enabled": true}},
		"container-registry":     map[string]any{"credentials": []any{map[string]any{"registry": "docker.io"}}},
		"made-up-future-setting": map[string]any{"knob": []any{int64(1), int64(2), int64(3)}},
	}}
	if diff := cmp.Diff(want, doc.plain()); diff != "" {
		t.Errorf("merged settings (-want +got):\n%s\n%s", diff, res.UserData)
	}
	if !strings.Contains(res.UserData, "knob = [1, 2, 3]") {
		t.Errorf("unknown setting not kept verbatim:\n%s", res.UserData)
	}
	wantFindings := []finding{
		{SeverityAdvice, "UserDataSettingReplaced"}, // cluster-name
		{SeverityAdvice, "UserDataSettingReplaced"}, // max-pods
		{SeverityAdvice, "UserDataSettingReplaced"}, // node-labels example.com/team
		{SeverityAdvice, "UserDataTaintNotInNodePool"},
	}
	if diff := cmp.Diff(wantFindings, findings(res.Warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\n%v", diff, res.Warnings)
	}
}

func TestRenderBottlerocketEmpty(t *testing.T) {
	opts := baseOptions(awsv1.AMIFamilyBottlerocket, "")
	opts.StartupTaints = []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}}
	res, err := Render(opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	want := `[settings.kubernetes]
cluster-name = "demo"
api-server = "https://demo.eks.example.com"
cluster-certificate = "Y2EtYnVuZGxl"
cluster-dns-ip = "10.100.0.10"
max-pods = 29

[settings.kubernetes.node-labels]
"example.com/team" = "web"
"karpenter.sh/nodepool" = "default"

[settings.kubernetes.node-taints]
"example.com/dedicated" = ["web:NoSchedule"]
"karpenter.sh/unregistered" = [":NoExecute"]
"node.cilium.io/agent-not-ready" = ["true:NoExecute"]
`
	if diff := cmp.Diff(want, res.UserData); diff != "" {
		t.Errorf("userData (-want +got):\n%s", diff)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
}

func TestRenderBottlerocketErrors(t *testing.T) {
	for _, userData := range []string{
		"[settings.kubernetes\n",
		"settings = 1\n",
		"[settings]\nkubernetes = \"x\"\n",
		"[settings.kubernetes]\nnode-taints = \"x\"\n",
	} {
		if _, err := Render(baseOptions(awsv1.AMIFamilyBottlerocket, userData)); err == nil || !strings.HasPrefix(err.Error(), "rendering userdata, ") {
			t.Errorf("Render(%q) error = %v, want a rendering error", userData, err)
		}
	}
}
