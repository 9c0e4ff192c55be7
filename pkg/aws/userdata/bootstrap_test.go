package userdata

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// s2Script is the userData of scenario S2: the single-word --kubelet-extra-args= form.
const s2Script = `#!/bin/bash
set -ex
CLUSTER_NAME=demo
B64_CLUSTER_CA=$(aws eks describe-cluster --name "$CLUSTER_NAME" --query 'cluster.certificateAuthority.data' --output text)
API_SERVER_URL=$(aws eks describe-cluster --name "$CLUSTER_NAME" --query 'cluster.endpoint' --output text)
/etc/eks/bootstrap.sh "$CLUSTER_NAME" --b64-cluster-ca "$B64_CLUSTER_CA" --apiserver-endpoint "$API_SERVER_URL" --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'
`

type finding struct {
	Severity Severity
	Reason   string
}

func findings(ws []Warning) []finding {
	var out []finding
	for _, w := range ws {
		out = append(out, finding{w.Severity, w.Reason})
	}
	return out
}

func TestCheckBootstrapScript(t *testing.T) {
	const header = "#!/bin/bash\nset -ex\n"
	problem := func(reason string) finding { return finding{SeverityProblem, reason} }
	tests := []struct {
		name   string
		script string
		want   []finding
	}{
		{name: "S2: single-word --kubelet-extra-args= is ignored", script: s2Script, want: []finding{problem("BootstrapOptionIgnored")}},
		{name: "S2 fixed: two words, inner double quotes kept", script: strings.Replace(s2Script, "--kubelet-extra-args=", "--kubelet-extra-args ", 1)},
		{name: "two words, no inner quotes", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n"},
		{name: "two words in double quotes with other flags", script: header + `/etc/eks/bootstrap.sh demo --kubelet-extra-args "--node-labels=a=b --register-with-taints=example.com/x=y:NoSchedule,karpenter.sh/unregistered:NoExecute --max-pods=20"` + "\n"},
		{name: "kubelet flag in two-word form", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints karpenter.sh/unregistered:NoExecute'\n"},
		{name: "taint with a value", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered=true:NoExecute'\n"},
		{name: "cluster name last, line continuations", script: header + "/etc/eks/bootstrap.sh \\\n  --apiserver-endpoint https://x \\\n  --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute' \\\n  demo\n"},
		{name: "args through a variable", script: header + "ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute'\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n"},
		{name: "exported KUBELET_EXTRA_ARGS", script: header + "export KUBELET_EXTRA_ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute'\n/etc/eks/bootstrap.sh demo\n"},
		{name: "KUBELET_EXTRA_ARGS as the command's environment", script: header + "KUBELET_EXTRA_ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute' /etc/eks/bootstrap.sh demo\n"},
		{name: "a written script run by path is checked where it runs", script: header + "cat <<'EOF' > /root/join.sh\n/etc/eks/bootstrap.sh \"$@\"\nEOF\n/root/join.sh demo --kubelet-extra-args '--node-labels=a=b'\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "set -e and false before the call: it never runs", script: header + "false\n/etc/eks/bootstrap.sh demo\n"},
		{name: "KUBELET_EXTRA_ARGS set but not exported", script: header + "KUBELET_EXTRA_ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute'\n/etc/eks/bootstrap.sh demo\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "through bash, after &&", script: header + "yum update -y && bash /etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n"},
		{name: "no taint at all", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--node-labels=a=b'\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "no kubelet args", script: header + "/etc/eks/bootstrap.sh demo\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "old taint name", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/uninitialized:NoExecute'\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "wrong effect", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoSchedule'\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "the kubelet keeps the last --register-with-taints", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute --register-with-taints=a=b:NoSchedule'\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "bootstrap.sh keeps the last --kubelet-extra-args", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute' --kubelet-extra-args '--v=2'\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "single word without the taint", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args='--node-labels=a=b'\n", want: []finding{problem("BootstrapOptionIgnored"), problem("UnregisteredTaintMissing")}},
		{name: "single word before the cluster name", script: header + "/etc/eks/bootstrap.sh --kubelet-extra-args='--register-with-taints=karpenter.sh/unregistered:NoExecute' demo\n", want: []finding{problem("BootstrapOptionIgnored")}},
		{name: "no cluster name", script: header + "/etc/eks/bootstrap.sh --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n", want: []finding{problem("BootstrapClusterNameMissing")}},
		{name: "args only known at boot", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$(cat /etc/args)\"\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "args from a variable never assigned", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$EXTRA\"\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "args built with +=", script: header + "ARGS='--node-labels=a=b'\nARGS+=' --register-with-taints=karpenter.sh/unregistered:NoExecute'\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n"},
		{name: "args built with += without the taint", script: header + "ARGS='--node-labels=a=b'\nARGS+=' --v=2'\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "+= on a variable never assigned", script: header + "ARGS+=' --v=2'\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "the script edits bootstrap.sh", script: header + "sed -i '/^KUBELET_EXTRA_ARGS=/a KUBELET_EXTRA_ARGS+=\" --register-with-taints=karpenter.sh/unregistered:NoExecute\"' /etc/eks/bootstrap.sh\n/etc/eks/bootstrap.sh demo\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "the script writes the kubelet config", script: header + "jq '.registerWithTaints=[{\"key\":\"karpenter.sh/unregistered\",\"effect\":\"NoExecute\"}]' c.json > /etc/kubernetes/kubelet/kubelet-config.json\n/etc/eks/bootstrap.sh demo\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "a comment naming the taint changes nothing", script: header + "# karpenter.sh/unregistered is required\n/etc/eks/bootstrap.sh demo\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "no bootstrap.sh", script: header + "echo hello\n"},
		{name: "bootstrap.sh only in a comment", script: header + "# /etc/eks/bootstrap.sh demo\n"},
		{name: "bootstrap.sh only in a here-document", script: header + "cat <<'EOF' > /tmp/notes\n/etc/eks/bootstrap.sh demo\nEOF\necho done\n"},
		{name: "bootstrap.sh only in a quoted string", script: header + "echo '/etc/eks/bootstrap.sh demo'\n"},
		// Differences found by reading the script as bash does (mvdan.cc/sh) rather than line by line.
		{name: "a function that is never called runs nothing", script: header + "join() {\n  /etc/eks/bootstrap.sh demo\n}\necho no join\n"},
		{name: "a function's call is checked with its arguments", script: header + "join() {\n  /etc/eks/bootstrap.sh \"$1\" --kubelet-extra-args \"$2\"\n}\njoin demo '--node-labels=a=b'\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "a function's call with the taint passes", script: header + "join() {\n  /etc/eks/bootstrap.sh \"$1\" --kubelet-extra-args \"$2\"\n}\njoin demo '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n"},
		{name: "args set in one branch only cannot be verified", script: header + "ARGS='--node-labels=a=b'\nif grep -q gpu /proc/cpuinfo; then ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute'; fi\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "args set alike in both branches are known", script: header + "if grep -q gpu /proc/cpuinfo; then ARGS='--v=2'; else ARGS='--v=2'; fi\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "an assignment in a subshell does not reach the call", script: header + "ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute'\n( ARGS='--v=2' )\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n"},
		{name: "a call after exit never runs", script: header + "exit 0\n/etc/eks/bootstrap.sh demo\n"},
		{name: "export of a variable the script never assigned is unknown", script: header + "export KUBELET_EXTRA_ARGS\n/etc/eks/bootstrap.sh demo\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "a call through eval is read", script: header + "eval \"/etc/eks/bootstrap.sh demo --kubelet-extra-args '--v=2'\"\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "a call through bash -c is read", script: header + "bash -c \"/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\"\n"},
		{name: "a drop-in in a function never called is not another way", script: header + "taints() {\n  cat > /etc/systemd/system/kubelet.service.d/90.conf <<'EOF'\n[Service]\nEnvironment='KUBELET_EXTRA_ARGS=--register-with-taints=karpenter.sh/unregistered:NoExecute'\nEOF\n}\n/etc/eks/bootstrap.sh demo\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "a drop-in in a function that is called is", script: header + "taints() {\n  cat > /etc/systemd/system/kubelet.service.d/90.conf <<'EOF'\n[Service]\nEnvironment='KUBELET_EXTRA_ARGS=--register-with-taints=karpenter.sh/unregistered:NoExecute'\nEOF\n}\ntaints\n/etc/eks/bootstrap.sh demo\n", want: []finding{{SeverityAdvice, "BootstrapTaintUnverifiable"}}},
		{name: "a branch a known condition skips is not another way", script: header + "MODE=plain\nif [ \"$MODE\" = custom ]; then\n  echo '--register-with-taints=karpenter.sh/unregistered:NoExecute' > /etc/kubelet-args\nfi\n/etc/eks/bootstrap.sh demo\n", want: []finding{problem("UnregisteredTaintMissing")}},
		{name: "ANSI-C quoting", script: header + "/etc/eks/bootstrap.sh demo --kubelet-extra-args $'--register-with-taints=karpenter.sh/unregistered:NoExecute\\t--v=2'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckBootstrapScript(tt.script)
			if diff := cmp.Diff(tt.want, findings(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nwarnings: %v", diff, got)
			}
		})
	}
}

func TestCheckBootstrapScriptS2Message(t *testing.T) {
	got := CheckBootstrapScript(s2Script)
	if len(got) != 1 {
		t.Fatalf("got %d warnings, want 1: %v", len(got), got)
	}
	for _, want := range []string{"line 6", "--kubelet-extra-args=", "two words", "karpenter.sh/unregistered:NoExecute"} {
		if !strings.Contains(got[0].Message, want) {
			t.Errorf("message %q does not contain %q", got[0].Message, want)
		}
	}
	wantFix := `write it as two words: --kubelet-extra-args '--register-with-taints="karpenter.sh/unregistered:NoExecute"'`
	if diff := cmp.Diff(wantFix, got[0].Fix); diff != "" {
		t.Errorf("fix (-want +got):\n%s", diff)
	}
	// The fix, applied, passes the check.
	fixed := strings.Replace(s2Script, `--kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`, strings.TrimPrefix(got[0].Fix, "write it as two words: "), 1)
	if again := CheckBootstrapScript(fixed); len(again) != 0 {
		t.Errorf("the suggested fix still fails the check: %v", again)
	}
}

func TestSystemdWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{in: `--register-with-taints="karpenter.sh/unregistered:NoExecute"`, want: []string{"--register-with-taints=karpenter.sh/unregistered:NoExecute"}},
		{in: `--node-labels="a=b,c=d"  --max-pods=29`, want: []string{"--node-labels=a=b,c=d", "--max-pods=29"}},
		{in: `--eviction-hard="nodefs.available<10%%" 'x y'`, want: []string{"--eviction-hard=nodefs.available<10%", "x y"}},
		{in: "", want: nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, systemdWords(tt.in)); diff != "" {
			t.Errorf("systemdWords(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
