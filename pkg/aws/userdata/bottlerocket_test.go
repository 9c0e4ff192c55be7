package userdata

import (
	"maps"
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
	doc, err := parseBottlerocket(res.UserData)
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
	if diff := cmp.Diff(want, map[string]any(doc)); diff != "" {
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
	// go-toml writes keys sorted and strings as literal strings when they need no escapes.
	want := `[settings]
[settings.kubernetes]
api-server = 'https://demo.eks.example.com'
cluster-certificate = 'Y2EtYnVuZGxl'
cluster-dns-ip = '10.100.0.10'
cluster-name = 'demo'
max-pods = 29

[settings.kubernetes.node-labels]
'example.com/team' = 'web'
'karpenter.sh/nodepool' = 'default'

[settings.kubernetes.node-taints]
'example.com/dedicated' = ['web:NoSchedule']
'karpenter.sh/unregistered' = [':NoExecute']
'node.cilium.io/agent-not-ready' = ['true:NoExecute']
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

// bottlerocketOperatorTOML has a setting of every TOML shape: unknown settings, dotted keys,
// inline tables, arrays of tables, multi-line strings, escapes, floats, dates and times.
const bottlerocketOperatorTOML = `# Bottlerocket settings
[settings]
motd = "Hello\tfrom \"TOML\" \u00e9"
host-containers.admin.enabled = true
ntp = { time-servers = ["169.254.169.123"], options = [] }

[settings.bootstrap-containers.setup]
source = "example.com/setup:1"
user-data = """
line one
line \
  two"""
mode = 'once'

[[settings.container-registry.credentials]]
registry = "docker.io"
auth = 'abc=='

[[settings.container-registry.credentials]]
registry = "quay.io"

[settings.kernel.sysctl]
"net.ipv4.ip_forward" = "1"
ratio = 1.5
when = 1979-05-27T07:32:00Z
day = 1979-05-27
hex = 0x1F

[settings.kubernetes]
"max-pods" = 110 # replaced by Joiner's
shutdown-grace-period = "30s"

[settings.kubernetes.node-taints]
"dedicated" = [
  "gpu:NoSchedule", # multi-line
  "gpu:NoExecute",
]
`

// TestRenderBottlerocketKeepsSettings checks that every setting the operator wrote is in the
// rendered document with the same value and type, except those Joiner writes itself.
func TestRenderBottlerocketKeepsSettings(t *testing.T) {
	operator, err := parseBottlerocket(bottlerocketOperatorTOML)
	if err != nil {
		t.Fatalf("parseBottlerocket: %v", err)
	}
	res, err := Render(baseOptions(awsv1.AMIFamilyBottlerocket, bottlerocketOperatorTOML))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	rendered, err := parseBottlerocket(res.UserData)
	if err != nil {
		t.Fatalf("rendered userData does not parse: %v\n%s", err, res.UserData)
	}
	settings := rendered["settings"].(map[string]any)
	k8s := settings["kubernetes"].(map[string]any)
	if got := k8s["max-pods"]; got != int64(29) {
		t.Errorf("max-pods = %v, want Joiner's 29", got)
	}
	wantTaints := map[string]any{
		"dedicated":                 []any{"gpu:NoSchedule", "gpu:NoExecute"},
		"example.com/dedicated":     []any{"web:NoSchedule"},
		"karpenter.sh/unregistered": []any{":NoExecute"},
	}
	if diff := cmp.Diff(wantTaints, k8s["node-taints"]); diff != "" {
		t.Errorf("node-taints are not the union (-want +got):\n%s", diff)
	}
	// Everything else is the operator's, unchanged.
	wantSettings := operator["settings"].(map[string]any)
	delete(wantSettings, "kubernetes")
	gotSettings := maps.Clone(settings)
	delete(gotSettings, "kubernetes")
	if diff := cmp.Diff(wantSettings, gotSettings); diff != "" {
		t.Errorf("operator settings changed (-want +got):\n%s\n%s", diff, res.UserData)
	}
	if got := k8s["shutdown-grace-period"]; got != "30s" {
		t.Errorf("settings.kubernetes.shutdown-grace-period = %v, want the operator's 30s", got)
	}
	// Writing is stable: the rendered document renders to itself.
	again, err := Render(baseOptions(awsv1.AMIFamilyBottlerocket, res.UserData))
	if err != nil {
		t.Fatalf("Render of the rendered document: %v", err)
	}
	if diff := cmp.Diff(res.UserData, again.UserData); diff != "" {
		t.Errorf("rendering is not stable (-first +second):\n%s", diff)
	}
}

// FuzzRenderBottlerocket renders arbitrary TOML: whatever parses either renders to TOML that
// parses, carries the required taint and keeps every setting outside settings.kubernetes, or is
// refused with a rendering error.
func FuzzRenderBottlerocket(f *testing.F) {
	f.Add(bottlerocketOperatorTOML)
	f.Add("")
	f.Add("settings = 1\n")
	f.Add("[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = \"NoExecute\"\n")
	f.Fuzz(func(t *testing.T, userData string) {
		operator, err := parseBottlerocket(userData)
		res, renderErr := Render(baseOptions(awsv1.AMIFamilyBottlerocket, userData))
		if err != nil {
			if renderErr == nil {
				t.Fatalf("TOML that does not parse rendered: %v", err)
			}
			return
		}
		if renderErr != nil {
			if !strings.HasPrefix(renderErr.Error(), "rendering userdata, ") {
				t.Fatalf("error not wrapped: %v", renderErr)
			}
			return
		}
		rendered, err := parseBottlerocket(res.UserData)
		if err != nil {
			t.Fatalf("rendered userData does not parse: %v\n%s", err, res.UserData)
		}
		taints, found := bottlerocketNodeTaints(res.UserData)
		if !found || !hasTaint(taints, corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}) {
			t.Fatalf("rendered userData lacks the required taint:\n%s", res.UserData)
		}
		for key, want := range operator {
			if key == "settings" {
				continue
			}
			if diff := cmp.Diff(want, rendered[key]); diff != "" {
				t.Fatalf("top-level %q changed (-want +got):\n%s", key, diff)
			}
		}
	})
}
