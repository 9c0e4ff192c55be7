package boot

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInterpretShell covers what running userData with a shell interpreter brings: the
// commands userData uses around bootstrap.sh are bash's, not approximations.
func TestInterpretShell(t *testing.T) {
	const boot = `/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL`
	taintArgs := `--register-with-taints=karpenter.sh/unregistered:NoExecute`
	runInterpretCases(t, []interpretCase{
		{
			name:     "a function wrapping bootstrap.sh passes its arguments through \"$@\"",
			family:   "AL2",
			userData: al2Script("join() {\n  " + `/etc/eks/bootstrap.sh "$@"` + "\n}\njoin demo --b64-cluster-ca \"$CA\" --apiserver-endpoint \"$URL\" --kubelet-extra-args '" + taintArgs + "'"),
			want:     al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:     "if/else on a variable picks the branch bash picks",
			family:   "AL2",
			userData: al2Script("SPOT=true\nif [ \"$SPOT\" = true ]; then\n  ARGS='" + taintArgs + "'\nelse\n  ARGS='--max-pods=20'\nfi\n" + boot + ` --kubelet-extra-args "$ARGS"`),
			want:     al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:     "an array of extra args joined with ${A[*]}",
			family:   "AL2",
			userData: al2Script("A=(--node-labels=team=a " + taintArgs + ")\n" + boot + ` --kubelet-extra-args "${A[*]}"`),
			want: al2Reg(func(r *KubeletRegistration) {
				r.Taints = unregistered
				r.Labels = map[string]string{"team": "a"}
			}),
		},
		{
			name:       "set -e stops at a failing test before bootstrap.sh",
			family:     "AL2",
			userData:   al2Script("test -f /etc/not-there\n" + boot),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "Failed running /var/lib/cloud/instance/scripts/part-001 [1]",
		},
		{
			name:     "without set -e a failing command does not stop the script",
			family:   "AL2",
			userData: "#!/bin/bash\nCA=" + testCAB64 + "\nURL=" + testEndpoint + "\ncat /etc/not-there\n" + boot + "\n",
			want:     al2Reg(nil),
			wantLog:  "cat: /etc/not-there: No such file or directory",
		},
		{
			name:     "bootstrap.sh through bash -c",
			family:   "AL2",
			userData: al2Script(`bash -c "` + boot + ` --kubelet-extra-args '` + taintArgs + `'"`),
			want:     al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:   "a script written with a here-document, made executable and run",
			family: "AL2",
			userData: al2Script("cat <<'EOF' > /root/join.sh\n#!/bin/bash\n/etc/eks/bootstrap.sh \"$@\"\nEOF\nchmod +x /root/join.sh\n" +
				"bash /root/join.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '" + taintArgs + "'"),
			want: al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:   "a script written with a here-document and run by its path",
			family: "AL2",
			userData: al2Script("cat <<'EOF' > /root/join.sh\n#!/bin/bash -e\n/etc/eks/bootstrap.sh \"$@\"\nEOF\nchmod 0755 /root/join.sh\n" +
				"/root/join.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '" + taintArgs + "'"),
			want: al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:   "a drop-in written before bootstrap.sh sets the kubelet's extra args",
			family: "AL2",
			userData: al2Script("mkdir -p /etc/systemd/system/kubelet.service.d\ncat <<EOF > /etc/systemd/system/kubelet.service.d/20-taints.conf\n[Service]\n" +
				`Environment="KUBELET_EXTRA_ARGS=` + taintArgs + ` --node-labels=team=a"` + "\nEOF\n" + boot),
			want: al2Reg(func(r *KubeletRegistration) {
				r.Taints = unregistered
				r.Labels = map[string]string{"team": "a"}
			}),
		},
		{
			name:     "%% in bootstrap.sh's drop-in is systemd's literal %",
			family:   "AL2",
			userData: al2Script(boot + " --kubelet-extra-args '--eviction-hard=memory.available<5%%'"),
			want:     al2Reg(func(r *KubeletRegistration) { r.ExtraFlags = []string{"--eviction-hard=memory.available<5%"} }),
		},
		{
			name:   "bootstrap.sh's own drop-in sorts after a user's 20-*.conf and wins",
			family: "AL2",
			userData: al2Script("cat <<EOF > /etc/systemd/system/kubelet.service.d/20-taints.conf\n[Service]\nEnvironment=KUBELET_EXTRA_ARGS=--max-pods=5\nEOF\n" +
				boot + " --kubelet-extra-args '" + taintArgs + "'"),
			want: al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:   "a drop-in written after bootstrap.sh needs daemon-reload and a restart",
			family: "AL2",
			userData: al2Script(boot + "\ncat <<EOF > /etc/systemd/system/kubelet.service.d/90-taints.conf\n[Service]\nEnvironment=KUBELET_EXTRA_ARGS=" + taintArgs + "\nEOF\n" +
				"systemctl daemon-reload\nsystemctl restart kubelet"),
			want: al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:     "a drop-in written after bootstrap.sh without a restart changes nothing",
			family:   "AL2",
			userData: al2Script(boot + "\ncat <<EOF > /etc/systemd/system/kubelet.service.d/90-taints.conf\n[Service]\nEnvironment=KUBELET_EXTRA_ARGS=" + taintArgs + "\nEOF\n"),
			want:     al2Reg(nil),
		},
		{
			name:   "command -v finds the AMI's programs on the node, not on the host",
			family: "AL2",
			userData: al2Script("if command -v nodeadm >/dev/null; then\n  nodeadm init\nelif command -v jq >/dev/null && which aws; then\n  " +
				boot + " --kubelet-extra-args '" + taintArgs + "'\nfi"),
			want:    al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
			wantLog: "cloud-init[2411]: /usr/bin/aws",
		},
		{
			// The hand-written reader kept $(...) as literal text, which bootstrap.sh then failed
			// to decode; bash runs it.
			name:     "command substitution reads a file the script wrote",
			family:   "AL2",
			userData: "#!/bin/bash\necho " + testCAB64 + " > /root/ca.b64\n/etc/eks/bootstrap.sh demo --b64-cluster-ca \"$(cat /root/ca.b64)\" --apiserver-endpoint " + testEndpoint + "\n",
			want:     al2Reg(nil),
		},
		{
			name:     "output redirected to a file does not reach the console",
			family:   "AL2",
			userData: al2Script("exec >> /var/log/user-data.log 2>&1\necho secret-marker\n" + boot),
			want:     al2Reg(nil),
		},
		{
			name:     "AWS's logging idiom: output through tee and logger -s to the console",
			family:   "AL2",
			userData: al2Script("exec > >(tee /var/log/user-data.log | logger -t user-data -s 2>/dev/console) 2>&1\necho visible-marker\n" + boot),
			want:     al2Reg(nil),
			wantLog:  "user-data: visible-marker",
		},
		{
			name:       "a loop that waits for nothing is stopped",
			family:     "AL2",
			userData:   "#!/bin/bash\nwhile true; do sleep 1; done\n/etc/eks/bootstrap.sh demo\n",
			wantReason: ReasonBootstrapFailed,
			wantLog:    "the script never finishes",
		},
		{
			name:     "a loop waiting for a command ends at its first turn: commands succeed",
			family:   "AL2",
			userData: al2Script("until curl -sf http://169.254.169.254/latest/meta-data/; do sleep 1; done\n" + boot),
			want:     al2Reg(nil),
		},
		{
			name:   "Custom: a NodeConfig written to a file and read by nodeadm init",
			family: "Custom",
			userData: "#!/bin/bash\ncat <<EOF > /etc/eks/nodeadm.yaml\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: demo\n    apiServerEndpoint: " + testEndpoint +
				"\n    certificateAuthority: " + testCAB64 + "\n    cidr: 10.100.0.0/16\n  kubelet:\n    flags:\n    - --register-with-taints=karpenter.sh/unregistered:NoExecute\nEOF\n" +
				"nodeadm init --config-source file:///etc/eks/nodeadm.yaml\n",
			want: &KubeletRegistration{
				ClusterName: "demo", APIServerEndpoint: testEndpoint, CertificateAuthority: testCA,
				ClusterDNS: []string{"10.100.0.10"}, MaxPods: 17, Labels: map[string]string{}, Taints: unregistered,
			},
			wantLog: `level=info msg="Configuring kubelet"`,
		},
		{
			name:     "AL2023 shell parts run after nodeadm, their output on the console",
			family:   "AL2023",
			userData: mimeDoc(generatedNodeConfig, [2]string{"text/x-shellscript", "#!/bin/bash\necho from-the-script"}),
			want:     al2023Reg(nil),
			wantLog:  "cloud-init[2411]: from-the-script",
		},
		{
			name:     "a kubelet started in the background by a Custom script",
			family:   "Custom",
			userData: "#!/bin/bash\nnohup /usr/bin/kubelet --node-labels=a=b --register-with-taints=karpenter.sh/unregistered:NoExecute > /var/log/kubelet.log 2>&1 &\n",
			want: &KubeletRegistration{
				ClusterName: "demo", APIServerEndpoint: testEndpoint, CertificateAuthority: testCA,
				Labels: map[string]string{"a": "b"}, Taints: unregistered,
			},
		},
	})
}

func TestInterpretShellConsole(t *testing.T) {
	_, console, err := Interpret(testInstance("AL2", al2Script("exec >> /var/log/user-data.log 2>&1\necho secret-marker\n/etc/eks/bootstrap.sh demo")), testCluster())
	if err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(console, "\n"); strings.Contains(text, "secret-marker") {
		t.Errorf("output sent to a file reached the console:\n%s", text)
	}
}

// TestNodeRecordsCommands: every command the node does not model is recorded and succeeds,
// and none reaches the host.
func TestNodeRecordsCommands(t *testing.T) {
	n := newNode(testInstance("AL2", ""), testCluster())
	n.installBootstrap()
	lines, status := n.runScript(context.Background(), script{name: "part-001", body: "#!/bin/bash -e\nyum install -y htop\nrm -rf /\ntouch /tmp/x && [ -f /tmp/x ] && echo made\n"})
	if status != 0 {
		t.Fatalf("status = %d\n%s", status, strings.Join(lines, "\n"))
	}
	want := [][]string{{"yum", "install", "-y", "htop"}, {"rm", "-rf", "/"}, {"touch", "/tmp/x"}}
	if diff := cmp.Diff(want, n.commands); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if !slices.Contains(lines, cloudInit+"made") {
		t.Errorf("console lacks the echo after touch: %q", lines)
	}
}

func TestSplitSystemd(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		relax   bool
		want    []string
		wantErr bool
	}{
		{name: "inner double quotes removed", in: `--register-with-taints="karpenter.sh/unregistered:NoExecute" --max-pods=110`, want: []string{"--register-with-taints=karpenter.sh/unregistered:NoExecute", "--max-pods=110"}},
		{name: "quoted blanks stay in a word", in: `'KUBELET_EXTRA_ARGS=--a=1 --b=2'`, want: []string{"KUBELET_EXTRA_ARGS=--a=1 --b=2"}},
		{name: "escapes", in: `a\ b c\"d e\sf 'g\'h'`, want: []string{"a b", `c"d`, "e f", "g'h"}},
		{name: "the $VAR split keeps escaped characters", in: `a\sb c\"d`, relax: true, want: []string{"asb", `c"d`}},
		{name: "unterminated strict keeps the words before", in: `x 'a b`, want: []string{"x"}, wantErr: true},
		{name: "unterminated relaxed", in: `"a b`, relax: true, want: []string{"a b"}},
		{name: "empty", in: "  ", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitSystemd(tt.in, tt.relax)
			if (err != nil) != tt.wantErr {
				t.Fatalf("splitSystemd() error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("splitSystemd() (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzSplitSystemd(f *testing.F) {
	f.Add(`'K=--a="b c"' d\ e`, true)
	f.Fuzz(func(t *testing.T, s string, relax bool) {
		_, _ = splitSystemd(s, relax) // must not panic
	})
}

// FuzzInterpretAL2 runs arbitrary scripts through the interpreter: it must not panic, hang or
// touch the host.
func FuzzInterpretAL2(f *testing.F) {
	for _, seed := range []string{
		"#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=a:NoSchedule'\n",
		"#!/bin/bash -e\nf() { echo $1; }\nf x; for i in 1 2; do echo $i; done > /tmp/o; cat < /tmp/o\n",
		"#!/bin/bash\nexec > >(tee /var/log/x | logger -s) 2>&1\necho $(cat <(echo hi))\n",
		"#!/bin/bash\nwhile :; do :; done\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, userData string) {
		_, _, _ = Interpret(testInstance("AL2", userData), testCluster())
	})
}

// TestProcessSubstitutionNotRead: a substitution whose output nobody reads, and one that never
// reads its input, end when the script does.
func TestProcessSubstitutionNotRead(t *testing.T) {
	n := newNode(testInstance("AL2", ""), testCluster())
	body := "#!/bin/bash\nexec 0< <(while true; do echo y; done)\nexec > >(true)\necho lost\nexit 0\n"
	_, status := n.runScript(context.Background(), script{name: "part-001", body: body})
	if status != 0 {
		t.Errorf("status = %d, want 0", status)
	}
}

// BenchmarkInterpretAL2 is the cost of one AL2 boot's userData run: Karpenter's MIME document
// with AWS's logging idiom (a process substitution) and a bootstrap.sh call.
func BenchmarkInterpretAL2(b *testing.B) {
	userData := mimeDoc([2]string{"text/x-shellscript", "#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n" +
		"/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint '" + testEndpoint + "' --b64-cluster-ca '" + testCAB64 + "' \\\n--use-max-pods false \\\n" +
		"--kubelet-extra-args '--node-labels=\"karpenter.sh/nodepool=default\" --register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'"})
	in, c := testInstance("AL2", userData), testCluster()
	for b.Loop() {
		if _, _, err := Interpret(in, c); err != nil {
			b.Fatal(err)
		}
	}
}
