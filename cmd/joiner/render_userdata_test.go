package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func runJoiner(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runJoinerWithInput(t, "", args...)
}

func runJoinerWithInput(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCommand()
	cmd.SetIn(strings.NewReader(stdin))
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

// flagLines returns the lines of out that carry the flag, trimmed.
func flagLines(out, flag string) []string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, flag) {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return lines
}

func TestRenderUserDataScenarios(t *testing.T) {
	const scenarios = "../../test/scenarios/"
	tests := []struct {
		name string
		args []string
		// wantTaintFlags are the lines of the output that set --register-with-taints.
		wantTaintFlags []string
		wantStderr     []string
		wantErr        string
	}{
		{
			name:           "S1: AL2 without userData",
			args:           []string{"-f", scenarios + "s1-unmapped-node-role.yaml", "--nodeclass", "default", "--nodepool", "default", "--cluster-name", "demo"},
			wantTaintFlags: []string{`--kubelet-extra-args '--node-labels="karpenter.sh/nodepool=default,nodegroup=karpenter" --register-with-taints="karpenter.sh/unregistered:NoExecute"'`},
		},
		{
			name:       "S2: bootstrap.sh with the single-word --kubelet-extra-args=",
			args:       []string{"-f", scenarios + "s2-custom-ami-taint-args.yaml", "--nodeclass", "custom-ami", "--nodepool", "default"},
			wantStderr: []string{"Problem BootstrapOptionIgnored", "single word --kubelet-extra-args=", "Fix: write it as two words: --kubelet-extra-args '--register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'", "Advice UserDataCallsBootstrap"},
			wantErr:    "EC2NodeClass custom-ami: 1 problem(s)",
			// The operator's own call, and no second one.
			wantTaintFlags: []string{`/etc/eks/bootstrap.sh "$CLUSTER_NAME" --b64-cluster-ca "$B64_CLUSTER_CA" --apiserver-endpoint "$API_SERVER_URL" --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`},
		},
		{
			name: "S3: AL2023 userData with its own --register-with-taints",
			args: []string{"-f", scenarios + "s3-al2023-userdata-taint-override.yaml", "--nodepool", "default", "--cluster-dns", "172.20.0.10"},
			wantTaintFlags: []string{
				"- --register-with-taints=karpenter.sh/unregistered:NoExecute,node.cilium.io/agent-not-ready=true:NoExecute",
			},
			wantStderr: []string{"Advice UserDataClusterDNS", "spec.kubelet.clusterDNS: [172.20.0.10]", "Advice UserDataTaintNotInNodePool", "spec.template.spec.startupTaints:", "- key: node.cilium.io/agent-not-ready"},
		},
		{
			name:           "S5: NodePool found from the EC2NodeClass",
			args:           []string{"-f", scenarios + "s5-arm64-nodepool.yaml", "--nodeclass", "cicd-armapps"},
			wantTaintFlags: []string{"- --register-with-taints=karpenter.sh/unregistered:NoExecute"},
		},
		{
			name:    "NodePool using another EC2NodeClass",
			args:    []string{"-f", scenarios + "s2-custom-ami-taint-args.yaml", "--nodeclass", "other", "--nodepool", "default"},
			wantErr: "NodePool default uses EC2NodeClass custom-ami, not other",
		},
		{
			name:    "no such NodePool",
			args:    []string{"-f", scenarios + "s3-al2023-userdata-taint-override.yaml", "--nodepool", "nope"},
			wantErr: "no NodePool nope",
		},
		{
			name:    "no manifests",
			args:    []string{"--nodepool", "default"},
			wantErr: "-f is required",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runJoiner(t, append([]string{"render-userdata"}, tt.args...)...)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v\n%s", err, stderr)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if tt.wantTaintFlags != nil {
				if diff := cmp.Diff(tt.wantTaintFlags, flagLines(stdout, "register-with-taints")); diff != "" {
					t.Errorf("--register-with-taints lines (-want +got):\n%s\n%s", diff, stdout)
				}
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, stderr)
				}
			}
			if len(tt.wantStderr) == 0 && stderr != "" {
				t.Errorf("unexpected warnings:\n%s", stderr)
			}
		})
	}
}

// TestRenderUserDataS2Fixed feeds S2 with the two-word form through standard input: the working
// userData is not flagged.
func TestRenderUserDataS2Fixed(t *testing.T) {
	raw, err := os.ReadFile("../../test/scenarios/s2-custom-ami-taint-args.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.ReplaceAll(string(raw), "--kubelet-extra-args='--register-with-taints", "--kubelet-extra-args '--register-with-taints")
	if fixed == string(raw) {
		t.Fatal("the scenario no longer has the single-word form")
	}
	_, stderr, err := runJoinerWithInput(t, fixed, "render-userdata", "-f", "-", "--nodeclass", "custom-ami")
	if err != nil {
		t.Fatalf("render-userdata: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "Problem") {
		t.Errorf("working userData flagged:\n%s", stderr)
	}
	if !strings.Contains(stderr, "Advice UserDataCallsBootstrap") {
		t.Errorf("no advice about the bootstrap.sh call:\n%s", stderr)
	}
}
