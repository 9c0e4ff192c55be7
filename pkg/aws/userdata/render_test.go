package userdata

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// mimeDocument is a multipart/mixed userData of parts (each its headers, a blank line and its
// body), with the boundary B.
func mimeDocument(parts ...string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n")
	for _, p := range parts {
		b.WriteString("--B\n" + p + "\n")
	}
	b.WriteString("--B--\n")
	return b.String()
}

// baseOptions are the cluster and NodeClaim of most rendering tests.
func baseOptions(family, userData string) Options {
	return Options{
		Family:          family,
		ClusterName:     "demo",
		ClusterEndpoint: "https://demo.eks.example.com",
		CABundle:        "Y2EtYnVuZGxl",
		ClusterDNS:      "10.100.0.10",
		ClusterCIDR:     "10.100.0.0/16",
		Labels:          map[string]string{"karpenter.sh/nodepool": "default", "example.com/team": "web"},
		Taints:          []corev1.Taint{{Key: "example.com/dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}},
		MaxPods:         ptr.To[int32](29),
		UserData:        userData,
	}
}

func TestRenderUnknownFamily(t *testing.T) {
	_, err := Render(baseOptions("Windows2022", ""))
	if err == nil || !strings.HasPrefix(err.Error(), "rendering userdata, ") {
		t.Errorf("err = %v, want a wrapped unknown family error", err)
	}
}

func TestKubeletLabels(t *testing.T) {
	opts := Options{Labels: map[string]string{
		"example.com/team":                    "web",
		"karpenter.sh/nodepool":               "default",
		"kubernetes.io/arch":                  "amd64",
		"topology.kubernetes.io/zone":         "us-west-2a",
		"node.kubernetes.io/instance-type":    "m5.large",
		"team.node.kubernetes.io/role":        "web",
		"node-restriction.kubernetes.io/pool": "a",
		"example.kubernetes.io/x":             "y",
		"k8s.io/x":                            "y",
		"plain":                               "ok",
	}}
	want := map[string]string{
		"example.com/team": "web", "karpenter.sh/nodepool": "default", "kubernetes.io/arch": "amd64",
		"topology.kubernetes.io/zone": "us-west-2a", "node.kubernetes.io/instance-type": "m5.large",
		"team.node.kubernetes.io/role": "web", "plain": "ok",
	}
	if diff := cmp.Diff(want, opts.kubeletLabels()); diff != "" {
		t.Errorf("kubeletLabels (-want +got):\n%s", diff)
	}
	// A label the kubelet would refuse never reaches it, in any family.
	for _, family := range []string{awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2023, awsv1.AMIFamilyBottlerocket} {
		o := baseOptions(family, "")
		o.Labels["node-restriction.kubernetes.io/pool"] = "a"
		res, err := Render(o)
		if err != nil {
			t.Fatalf("Render %s: %v", family, err)
		}
		if strings.Contains(res.UserData, "node-restriction") || !strings.Contains(res.UserData, "example.com/team") {
			t.Errorf("%s: labels passed to the kubelet are wrong:\n%s", family, res.UserData)
		}
	}
}

func TestRenderTooLarge(t *testing.T) {
	big := "#!/bin/bash\n# " + strings.Repeat("x", MaxUserDataBytes) + "\n"
	_, err := Render(baseOptions(awsv1.AMIFamilyAL2, big))
	if err == nil || !strings.Contains(err.Error(), "over EC2's limit of 16384") {
		t.Errorf("err = %v, want the 16 KiB limit", err)
	}
	if _, err := Render(baseOptions(awsv1.AMIFamilyAL2, "#!/bin/bash\n# "+strings.Repeat("x", 8000)+"\n")); err != nil {
		t.Errorf("8 KB of userData: %v", err)
	}
}

func TestFamilyOf(t *testing.T) {
	tests := []struct {
		spec awsv1.EC2NodeClassSpec
		want string
	}{
		{spec: awsv1.EC2NodeClassSpec{AMIFamily: ptr.To("Custom"), AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}}, want: "Custom"},
		{spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}}, want: "AL2023"},
		{spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "bottlerocket@v1.20.3"}}}, want: "Bottlerocket"},
		{spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2@latest"}}}, want: "AL2"},
		{spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{ID: "ami-0123"}}}, want: ""},
	}
	for _, tt := range tests {
		if got := FamilyOf(&awsv1.EC2NodeClass{Spec: tt.spec}); got != tt.want {
			t.Errorf("FamilyOf(%+v) = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func TestRenderAL2(t *testing.T) {
	const script = "#!/bin/bash\necho hello\n"
	const mimeDoc = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n" +
		"--BOUNDARY\nContent-Type: text/x-shellscript\n\n#!/bin/bash\necho one\n" +
		"--BOUNDARY\nContent-Type: text/cloud-config\n\n#cloud-config\npackages: [jq]\n--BOUNDARY--\n"
	tests := []struct {
		name         string
		userData     string
		wantTypes    []string
		wantBodies   []string // operator bodies, in order, before Joiner's part
		wantFindings []finding
		wantJoiner   bool
	}{
		{name: "no userData", wantTypes: []string{"text/x-shellscript"}, wantJoiner: true},
		{name: "a script", userData: script, wantTypes: []string{"text/x-shellscript", "text/x-shellscript"}, wantBodies: []string{script}, wantJoiner: true},
		{name: "a MIME document keeps its parts", userData: mimeDoc, wantTypes: []string{"text/x-shellscript", "text/cloud-config", "text/x-shellscript"},
			wantBodies: []string{"#!/bin/bash\necho one", "#cloud-config\npackages: [jq]"}, wantJoiner: true},
		{name: "S2: a script calling bootstrap.sh wrongly", userData: s2Script, wantTypes: []string{"text/x-shellscript"}, wantBodies: []string{s2Script},
			wantFindings: []finding{{SeverityProblem, "BootstrapOptionIgnored"}, {SeverityAdvice, "UserDataCallsBootstrap"}}},
		{name: "a script calling bootstrap.sh rightly", userData: strings.Replace(s2Script, "--kubelet-extra-args=", "--kubelet-extra-args ", 1),
			wantTypes: []string{"text/x-shellscript"}, wantFindings: []finding{{SeverityAdvice, "UserDataCallsBootstrap"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Render(baseOptions(awsv1.AMIFamilyAL2, tt.userData))
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			parts, err := parseMIME(res.UserData)
			if err != nil {
				t.Fatalf("output is not MIME: %v\n%s", err, res.UserData)
			}
			var types, bodies []string
			for _, p := range parts {
				types = append(types, p.mediaType())
			}
			for _, p := range parts[:len(tt.wantBodies)] {
				bodies = append(bodies, p.body)
			}
			if diff := cmp.Diff(tt.wantTypes, types); diff != "" {
				t.Errorf("part types (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantBodies, bodies); diff != "" {
				t.Errorf("operator parts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFindings, findings(res.Warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%v", diff, res.Warnings)
			}
			calls := 0
			for _, p := range parts {
				calls += len(findBootstrapCalls(p.body))
			}
			if calls != 1 {
				t.Errorf("the document calls bootstrap.sh %d times, want once", calls)
			}
			if tt.wantJoiner {
				last := parts[len(parts)-1].body
				if got := CheckBootstrapScript(last); len(got) != 0 {
					t.Errorf("Joiner's own bootstrap part fails the bootstrap.sh check: %v\n%s", got, last)
				}
			}
		})
	}
}

func TestAL2BootstrapScript(t *testing.T) {
	opts := baseOptions(awsv1.AMIFamilyAL2, "")
	opts.Kubelet = &awsv1.KubeletConfiguration{
		SystemReserved:              map[string]awsv1.ReservedQuantity{"cpu": "100m", "memory": "100Mi"},
		EvictionHard:                map[string]awsv1.EvictionThreshold{"memory.available": "5%", "nodefs.available": "10%"},
		EvictionSoft:                map[string]awsv1.EvictionThreshold{"memory.available": "500Mi"},
		EvictionSoftGracePeriod:     map[string]metav1.Duration{"memory.available": {Duration: 90_000_000_000}},
		ImageGCHighThresholdPercent: ptr.To[int32](85),
		CPUCFSQuota:                 ptr.To(false),
	}
	script := al2BootstrapScript(opts)
	want := `#!/bin/bash -xe
/etc/eks/bootstrap.sh 'demo' \
  --apiserver-endpoint 'https://demo.eks.example.com' \
  --b64-cluster-ca 'Y2EtYnVuZGxl' \
  --dns-cluster-ip '10.100.0.10' \
  --use-max-pods false \
  --kubelet-extra-args '--node-labels="example.com/team=web,karpenter.sh/nodepool=default" --register-with-taints="example.com/dedicated=web:NoSchedule,karpenter.sh/unregistered:NoExecute" --max-pods=29 --system-reserved="cpu=100m,memory=100Mi" --eviction-hard="memory.available<5%%,nodefs.available<10%%" --eviction-soft="memory.available<500Mi" --eviction-soft-grace-period="memory.available=1m30s" --image-gc-high-threshold=85 --cpu-cfs-quota=false'
`
	if diff := cmp.Diff(want, script); diff != "" {
		t.Errorf("bootstrap part (-want +got):\n%s", diff)
	}
	// What the kubelet receives, after bootstrap.sh and systemd.
	calls := findBootstrapCalls(script)
	if len(calls) != 1 {
		t.Fatalf("found %d calls", len(calls))
	}
	args := systemdWords(calls[0].options["--kubelet-extra-args"].text)
	wantArgs := []string{
		"--node-labels=example.com/team=web,karpenter.sh/nodepool=default",
		"--register-with-taints=example.com/dedicated=web:NoSchedule,karpenter.sh/unregistered:NoExecute",
		"--max-pods=29", "--system-reserved=cpu=100m,memory=100Mi",
		"--eviction-hard=memory.available<5%,nodefs.available<10%", "--eviction-soft=memory.available<500Mi",
		"--eviction-soft-grace-period=memory.available=1m30s", "--image-gc-high-threshold=85", "--cpu-cfs-quota=false",
	}
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("kubelet arguments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"demo"}, []string{calls[0].positional[0].text}); diff != "" {
		t.Errorf("cluster name (-want +got):\n%s", diff)
	}
}

func TestRenderCustom(t *testing.T) {
	tests := []struct {
		name     string
		userData string
		want     []finding
	}{
		{name: "nothing visible", userData: "#!/bin/bash\n/opt/join.sh\n", want: []finding{{SeverityAdvice, "CustomUserDataTaintNotVisible"}}},
		{name: "a kubelet flag", userData: "#!/bin/bash\nkubelet --register-with-taints=karpenter.sh/unregistered:NoExecute\n"},
		{name: "a NodeConfig entry", userData: "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute\n"},
		{name: "Bottlerocket node-taints", userData: "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n"},
		{name: "a broken bootstrap.sh call", userData: s2Script, want: []finding{{SeverityProblem, "BootstrapOptionIgnored"}}},
		{name: "a working bootstrap.sh call", userData: strings.Replace(s2Script, "--kubelet-extra-args=", "--kubelet-extra-args ", 1)},
		{name: "S3 as Custom: a later flag drops the taint", userData: strings.Replace(s3UserData, "--//--", "--//\nContent-Type: application/node.eks.aws\n\n"+
			"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute\n--//--", 1),
			want: []finding{{SeverityProblem, "UnregisteredTaintMissing"}}},
		{name: "NodeConfig flag with the taint", userData: strings.Replace(s3UserData, "agent-not-ready=true:NoExecute", "agent-not-ready=true:NoExecute,karpenter.sh/unregistered:NoExecute", 1)},
		{name: "Bottlerocket without the taint", userData: "[settings.kubernetes]\ncluster-name = \"demo\"\n[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoSchedule\"]\n",
			want: []finding{{SeverityProblem, "UnregisteredTaintMissing"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Render(baseOptions(awsv1.AMIFamilyCustom, tt.userData))
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if res.UserData != tt.userData {
				t.Errorf("Custom userData changed:\n%s", res.UserData)
			}
			if diff := cmp.Diff(tt.want, findings(res.Warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%v", diff, res.Warnings)
			}
		})
	}
}
