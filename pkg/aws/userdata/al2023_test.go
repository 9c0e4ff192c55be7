package userdata

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// s3UserData is the userData of scenario S3, as the EC2NodeClass carries it.
const s3UserData = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

---
apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      clusterDNS:
        - 172.20.0.10
    flags:
      - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute

--//--
`

// nodeadmResult is what the kubelet ends up with.
type nodeadmResult struct {
	// Taints the node registers with, as key[=value]:Effect, sorted.
	Taints []string
	Config map[string]any
	Flags  []string
}

// nodeadmEffective models how nodeadm and the kubelet combine the NodeConfig parts of a userData.
// Documents merge in MIME order (reversed with reverse, to show that order does not matter): maps
// merge key by key, a later scalar wins, a later list replaces an earlier one, except kubelet
// flags, which are appended with appendFlags (covering both readings of nodeadm's merge). The
// kubelet registers with the taints of its last --register-with-taints flag, which overrides
// config registerWithTaints.
func nodeadmEffective(t *testing.T, userData string, reverse, appendFlags bool) nodeadmResult {
	t.Helper()
	parts, err := parseMIME(userData)
	if err != nil {
		t.Fatalf("parsing rendered userData: %v", err)
	}
	var docs []map[string]any
	for _, p := range parts {
		if p.mediaType() != contentTypeNodeConfig {
			continue
		}
		ds, err := yamlDocuments(p.body)
		if err != nil {
			t.Fatalf("parsing NodeConfig: %v", err)
		}
		docs = append(docs, ds...)
	}
	if reverse {
		slices.Reverse(docs)
	}
	merged := map[string]any{}
	for _, d := range docs {
		deepMerge(merged, d, "", appendFlags)
	}
	spec, _ := merged["spec"].(map[string]any)
	kubelet, _ := spec["kubelet"].(map[string]any)
	config, _ := kubelet["config"].(map[string]any)
	var flags []string
	if list, ok := kubelet["flags"].([]any); ok {
		for _, f := range list {
			flags = append(flags, fmt.Sprint(f))
		}
	}
	var taints []corev1.Taint
	if value, ok := lastFlag(flags, "--register-with-taints"); ok {
		taints, _ = parseTaints(value)
	} else if raw, ok := config["registerWithTaints"]; ok {
		taints = taintsFromConfig(raw)
	}
	var out []string
	for _, taint := range taints {
		out = append(out, formatTaint(taint))
	}
	slices.Sort(out)
	return nodeadmResult{Taints: out, Config: config, Flags: flags}
}

func deepMerge(dst, src map[string]any, path string, appendFlags bool) {
	for k, v := range src {
		p := path + "." + k
		if sm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
				dst[k] = dm
			}
			deepMerge(dm, sm, p, appendFlags)
			continue
		}
		if list, ok := v.([]any); ok && appendFlags && p == ".spec.kubelet.flags" {
			existing, _ := dst[k].([]any)
			dst[k] = append(slices.Clone(existing), list...)
			continue
		}
		dst[k] = v
	}
}

func TestNodeadmModelReproducesS3(t *testing.T) {
	// Without Joiner's merge (the operator's part appended after a generated one, as upstream
	// did), the model loses the required taint: the test model is faithful to S3.
	generated := "--//\nContent-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n    - --register-with-taints=karpenter.sh/unregistered:NoExecute\n"
	naive := strings.Replace(s3UserData, "--//\nContent-Type", generated+"--//\nContent-Type", 1)
	got := nodeadmEffective(t, naive, false, false)
	if diff := cmp.Diff([]string{"node.cilium.io/agent-not-ready=true:NoExecute"}, got.Taints); diff != "" {
		t.Errorf("naive merge taints (-want +got):\n%s", diff)
	}
}

func TestRenderAL2023S3(t *testing.T) {
	for _, clusterDNS := range []string{"10.100.0.10", ""} {
		opts := baseOptions(awsv1.AMIFamilyAL2023, s3UserData)
		opts.Taints = nil
		opts.ClusterDNS = clusterDNS
		res, err := Render(opts)
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		for _, reverse := range []bool{false, true} {
			for _, appendFlags := range []bool{false, true} {
				t.Run(fmt.Sprintf("dns=%q reverse=%v append=%v", clusterDNS, reverse, appendFlags), func(t *testing.T) {
					got := nodeadmEffective(t, res.UserData, reverse, appendFlags)
					want := []string{"karpenter.sh/unregistered:NoExecute", "node.cilium.io/agent-not-ready=true:NoExecute"}
					if diff := cmp.Diff(want, got.Taints); diff != "" {
						t.Errorf("effective taints (-want +got):\n%s\n%s", diff, res.UserData)
					}
					wantDNS := []any{"172.20.0.10"}
					if clusterDNS != "" {
						wantDNS = []any{clusterDNS}
					}
					if diff := cmp.Diff(wantDNS, got.Config["clusterDNS"]); diff != "" {
						t.Errorf("effective clusterDNS (-want +got):\n%s", diff)
					}
					if n := strings.Count(strings.Join(got.Flags, " "), "--register-with-taints"); n != 1 {
						t.Errorf("kubelet gets %d --register-with-taints flags, want 1: %v", n, got.Flags)
					}
				})
			}
		}
		wantFindings := []finding{{SeverityAdvice, "UserDataClusterDNS"}, {SeverityAdvice, "UserDataTaintNotInNodePool"}}
		if diff := cmp.Diff(wantFindings, findings(res.Warnings)); diff != "" {
			t.Errorf("warnings (-want +got):\n%s\n%v", diff, res.Warnings)
		}
		advice := res.Warnings[1]
		for _, want := range []string{"startupTaints", "key: node.cilium.io/agent-not-ready", `value: "true"`, "effect: NoExecute"} {
			if !strings.Contains(advice.Fix, want) {
				t.Errorf("startup taint advice %q does not contain %q", advice.Fix, want)
			}
		}
		if !strings.Contains(res.Warnings[0].Fix, "spec.kubelet.clusterDNS: [172.20.0.10]") {
			t.Errorf("clusterDNS advice %q does not suggest spec.kubelet.clusterDNS", res.Warnings[0].Fix)
		}
	}
}

func TestRenderAL2023(t *testing.T) {
	const keep = "---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  containerd:\n    config: |\n      [plugins]\n"
	mimeOf := mimeDocument
	nodeConfigPart := func(body string) string { return "Content-Type: application/node.eks.aws\n\n" + body }
	tests := []struct {
		name         string
		userData     string
		kubelet      *awsv1.KubeletConfiguration
		wantTypes    []string
		wantKept     string // the first part's body, when it must be kept verbatim
		want         nodeadmResult
		wantFindings []finding
	}{
		{
			name:      "no userData",
			wantTypes: []string{contentTypeNodeConfig},
			want: nodeadmResult{
				Taints: []string{"example.com/dedicated=web:NoSchedule", "karpenter.sh/unregistered:NoExecute"},
				Flags:  []string{"--node-labels=example.com/team=web,karpenter.sh/nodepool=default", "--register-with-taints=example.com/dedicated=web:NoSchedule,karpenter.sh/unregistered:NoExecute"},
			},
		},
		{
			name:      "a shell script and an unrelated NodeConfig are kept as written",
			userData:  mimeOf("Content-Type: text/x-shellscript\n\n#!/bin/bash\necho hi", nodeConfigPart(keep)),
			wantTypes: []string{"text/x-shellscript", contentTypeNodeConfig, contentTypeNodeConfig},
			wantKept:  "#!/bin/bash\necho hi",
			want: nodeadmResult{
				Taints: []string{"example.com/dedicated=web:NoSchedule", "karpenter.sh/unregistered:NoExecute"},
				Flags:  []string{"--node-labels=example.com/team=web,karpenter.sh/nodepool=default", "--register-with-taints=example.com/dedicated=web:NoSchedule,karpenter.sh/unregistered:NoExecute"},
			},
		},
		{
			name: "a bare NodeConfig with flags, config taints, labels and maxPods",
			userData: "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: other\n  kubelet:\n    config:\n      maxPods: 110\n      shutdownGracePeriod: 30s\n" +
				"      registerWithTaints:\n      - key: example.com/gpu\n        effect: NoSchedule\n    flags:\n    - --v=2\n    - --node-labels=example.com/team=db,example.com/extra=1\n    - --register-with-taints=karpenter.sh/unregistered=x:NoExecute\n",
			wantTypes: []string{contentTypeNodeConfig, contentTypeNodeConfig},
			want: nodeadmResult{
				Taints: []string{"example.com/dedicated=web:NoSchedule", "example.com/gpu:NoSchedule", "karpenter.sh/unregistered:NoExecute"},
				Flags: []string{"--v=2", "--node-labels=example.com/extra=1,example.com/team=web,karpenter.sh/nodepool=default",
					"--register-with-taints=example.com/dedicated=web:NoSchedule,example.com/gpu:NoSchedule,karpenter.sh/unregistered:NoExecute"},
			},
			wantFindings: []finding{
				{SeverityAdvice, "UserDataClusterSettingReplaced"}, {SeverityAdvice, "UserDataKubeletSettingReplaced"},
				{SeverityAdvice, "UserDataTaintNotInNodePool"}, {SeverityAdvice, "UserDataLabelReplaced"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := baseOptions(awsv1.AMIFamilyAL2023, tt.userData)
			opts.Kubelet = tt.kubelet
			res, err := Render(opts)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			parts, err := parseMIME(res.UserData)
			if err != nil {
				t.Fatalf("output is not MIME: %v", err)
			}
			var types []string
			for _, p := range parts {
				types = append(types, p.mediaType())
			}
			if diff := cmp.Diff(tt.wantTypes, types); diff != "" {
				t.Errorf("part types (-want +got):\n%s", diff)
			}
			if tt.wantKept != "" && parts[0].body != tt.wantKept {
				t.Errorf("first part changed: %q", parts[0].body)
			}
			if tt.wantKept != "" && parts[1].body != keep {
				t.Errorf("unrelated NodeConfig changed: %q", parts[1].body)
			}
			for _, reverse := range []bool{false, true} {
				got := nodeadmEffective(t, res.UserData, reverse, false)
				if diff := cmp.Diff(tt.want.Taints, got.Taints); diff != "" {
					t.Errorf("reverse=%v taints (-want +got):\n%s", reverse, diff)
				}
				if diff := cmp.Diff(tt.want.Flags, got.Flags); diff != "" {
					t.Errorf("reverse=%v flags (-want +got):\n%s", reverse, diff)
				}
				if got.Config["maxPods"] != float64(29) {
					t.Errorf("reverse=%v maxPods = %v, want Joiner's 29", reverse, got.Config["maxPods"])
				}
			}
			if diff := cmp.Diff(tt.wantFindings, findings(res.Warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%v", diff, res.Warnings)
			}
		})
	}
}

func TestRenderAL2023KubeletConfig(t *testing.T) {
	opts := baseOptions(awsv1.AMIFamilyAL2023, "")
	opts.Kubelet = &awsv1.KubeletConfiguration{
		ClusterDNS:                  []string{"172.20.0.10"},
		SystemReserved:              map[string]awsv1.ReservedQuantity{"cpu": "100m"},
		KubeReserved:                map[string]awsv1.ReservedQuantity{"memory": "1Gi"},
		EvictionHard:                map[string]awsv1.EvictionThreshold{"memory.available": "5%"},
		ImageGCHighThresholdPercent: ptr.To[int32](85),
		ImageGCLowThresholdPercent:  ptr.To[int32](80),
		CPUCFSQuota:                 ptr.To(false),
	}
	res, err := Render(opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	got := nodeadmEffective(t, res.UserData, false, false)
	want := map[string]any{
		"clusterDNS":                  []any{"172.20.0.10"},
		"maxPods":                     float64(29),
		"systemReserved":              map[string]any{"cpu": "100m"},
		"kubeReserved":                map[string]any{"memory": "1Gi"},
		"evictionHard":                map[string]any{"memory.available": "5%"},
		"imageGCHighThresholdPercent": float64(85),
		"imageGCLowThresholdPercent":  float64(80),
		"cpuCFSQuota":                 false,
		"registerWithTaints": []any{
			map[string]any{"key": "example.com/dedicated", "value": "web", "effect": "NoSchedule"},
			map[string]any{"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
		},
	}
	if diff := cmp.Diff(want, got.Config); diff != "" {
		t.Errorf("kubelet config (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.UserData, "apiServerEndpoint: https://demo.eks.example.com") || !strings.Contains(res.UserData, "cidr: 10.100.0.0/16") {
		t.Errorf("cluster details missing:\n%s", res.UserData)
	}
}

func TestRenderAL2023Errors(t *testing.T) {
	res, err := Render(baseOptions(awsv1.AMIFamilyAL2023, s2Script))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if diff := cmp.Diff([]finding{{SeverityAdvice, "UserDataCallsBootstrap"}}, findings(res.Warnings)); diff != "" {
		t.Errorf("AL2 habits on AL2023 (-want +got):\n%s", diff)
	}
	for _, userData := range []string{
		"just some text",
		"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: application/node.eks.aws\n\n: : not yaml [\n--B--\n",
	} {
		if _, err := Render(baseOptions(awsv1.AMIFamilyAL2023, userData)); err == nil || !strings.HasPrefix(err.Error(), "rendering userdata, ") {
			t.Errorf("Render(%q) error = %v, want a rendering error", userData, err)
		}
	}
}

// An effect the kubelet does not know (NoScedule) makes the kubelet refuse to start; Joiner's merge
// drops the entry, so the operator must hear about it both when Joiner renders (AL2023) and when it
// passes the userData as written (Custom).
func TestInvalidTaintEffect(t *testing.T) {
	userData := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n" +
		"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n      - \"--register-with-taints=team=a:NoScedule\"\n--//--\n"
	res, err := Render(baseOptions(awsv1.AMIFamilyAL2023, userData))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var got []Warning
	for _, w := range res.Warnings {
		if w.Reason == "InvalidKubeletTaint" {
			got = append(got, w)
		}
	}
	if len(got) != 1 || got[0].Severity != SeverityProblem || !strings.Contains(got[0].Message, "team=a:NoScedule") {
		t.Errorf("AL2023 render: want one InvalidKubeletTaint problem naming team=a:NoScedule, got %v", res.Warnings)
	}
	custom := findings(CheckCustom(userData))
	if !slices.Contains(custom, finding{SeverityProblem, "InvalidKubeletTaint"}) {
		t.Errorf("CheckCustom: want an InvalidKubeletTaint problem, got %v", custom)
	}
	valid := strings.Replace(userData, "NoScedule", "NoSchedule", 1)
	if slices.Contains(findings(CheckCustom(valid)), finding{SeverityProblem, "InvalidKubeletTaint"}) {
		t.Errorf("CheckCustom reports a valid taint as invalid")
	}
}
