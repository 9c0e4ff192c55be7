package legacyboot_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	boot "github.com/joinerhq/joiner/awsemu/legacyboot"
)

var unregistered = corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestInterpretAL2(t *testing.T) {
	const head = "#!/bin/bash\nset -ex\nCA=Y2E=\nURL=https://demo.eks.local\n"
	tests := []struct {
		name    string
		script  string
		taints  []corev1.Taint
		labels  map[string]string
		cluster string
		err     string
	}{
		{
			name:    "S2: one-word --kubelet-extra-args= is dropped by bootstrap.sh",
			script:  `/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`,
			cluster: "demo",
		},
		{
			name:    "S2 fixed: two-word form registers the taint",
			script:  `/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'`,
			taints:  []corev1.Taint{unregistered},
			cluster: "demo",
		},
		{
			name:    "inner double quotes are removed by systemd",
			script:  `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints="karpenter.sh/unregistered:NoExecute" --node-labels=team=a,tier=web'`,
			taints:  []corev1.Taint{unregistered},
			labels:  map[string]string{"team": "a", "tier": "web"},
			cluster: "demo",
		},
		{
			name:    "variables expand inside double quotes, across continuation lines",
			script:  "TAINTS=karpenter.sh/unregistered:NoExecute\n/etc/eks/bootstrap.sh demo \\\n  --kubelet-extra-args \"--register-with-taints=$TAINTS\"",
			taints:  []corev1.Taint{unregistered},
			cluster: "demo",
		},
		{
			name:   "missing option value stops bootstrap.sh",
			script: `/etc/eks/bootstrap.sh demo --kubelet-extra-args`,
			err:    "unbound variable",
		},
		{
			name:   "no cluster name",
			script: `/etc/eks/bootstrap.sh --apiserver-endpoint $URL`,
			err:    "CLUSTER_NAME is not defined",
		},
		{
			name:   "malformed taint stops the kubelet",
			script: `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered'`,
			err:    "invalid taint spec",
		},
		{
			name:   "unterminated quote is a shell error",
			script: `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--node-labels=a=b`,
			err:    "unexpected EOF",
		},
		{
			name:   "no bootstrap call",
			script: `echo hello`,
			err:    "never calls /etc/eks/bootstrap.sh",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := boot.Interpret("AL2", b64(head+tt.script+"\n"))
			if tt.err != "" {
				if res.Err == nil || !strings.Contains(res.Err.Error(), tt.err) || res.Kubelet != nil {
					t.Fatalf("err %v kubelet %+v, want an error containing %q", res.Err, res.Kubelet, tt.err)
				}
				if !strings.Contains(strings.Join(res.Console, "\n"), tt.err) {
					t.Errorf("console does not show the failure: %v", res.Console)
				}
				return
			}
			if res.Err != nil {
				t.Fatalf("boot failed: %v\n%s", res.Err, strings.Join(res.Console, "\n"))
			}
			if res.Kubelet.ClusterName != tt.cluster {
				t.Errorf("cluster %q, want %q", res.Kubelet.ClusterName, tt.cluster)
			}
			if diff := cmp.Diff(tt.taints, res.Kubelet.Taints); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.labels, res.Kubelet.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

const mimeAL2 = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash -xe
exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1
/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint 'https://demo.eks.local' --b64-cluster-ca 'Y2E=' \
--dns-cluster-ip '10.100.0.10' \
--use-max-pods false \
--kubelet-extra-args '--node-labels="karpenter.sh/nodepool=default,nodegroup=karpenter" --register-with-taints="karpenter.sh/unregistered:NoExecute" --max-pods=29'
--//--
`

func TestInterpretAL2MIME(t *testing.T) {
	res := boot.Interpret("AL2", b64(mimeAL2))
	if res.Err != nil {
		t.Fatalf("boot failed: %v\n%s", res.Err, strings.Join(res.Console, "\n"))
	}
	k := res.Kubelet
	if k.ClusterName != "demo" || k.APIServerEndpoint != "https://demo.eks.local" || *k.MaxPods != 29 || k.ClusterDNS[0] != "10.100.0.10" {
		t.Errorf("kubelet: %+v", k)
	}
	if diff := cmp.Diff([]corev1.Taint{unregistered}, k.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"karpenter.sh/nodepool": "default", "nodegroup": "karpenter"}, k.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func nodeConfigs(docs ...string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n")
	for _, d := range docs {
		b.WriteString("--BOUNDARY\nContent-Type: application/node.eks.aws\n\n" + d + "\n")
	}
	b.WriteString("--BOUNDARY--\n")
	return b.String()
}

const generated = `apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    name: demo
    apiServerEndpoint: https://demo.eks.local
    certificateAuthority: Y2E=
    cidr: 10.100.0.0/16
  kubelet:
    config:
      maxPods: 58
      clusterDNS: [10.100.0.10]
    flags:
    - --node-labels=karpenter.sh/nodepool=default
    - --register-with-taints=karpenter.sh/unregistered:NoExecute`

const userCilium = `apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      clusterDNS: [172.20.0.10]
    flags:
    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute`

func TestInterpretAL2023(t *testing.T) {
	tests := []struct {
		name   string
		docs   []string
		taints []corev1.Taint
		dns    []string
		err    string
	}{
		{name: "generated config registers the taint", docs: []string{generated}, taints: []corev1.Taint{unregistered}, dns: []string{"10.100.0.10"}},
		{
			name:   "S3: a later user NodeConfig's flags replace the generated ones",
			docs:   []string{generated, userCilium},
			taints: []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}},
			dns:    []string{"172.20.0.10"},
		},
		{
			name: "registerWithTaints in the kubelet config",
			docs: []string{strings.Replace(generated, "    flags:\n    - --node-labels=karpenter.sh/nodepool=default\n    - --register-with-taints=karpenter.sh/unregistered:NoExecute",
				"      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute", 1)},
			taints: []corev1.Taint{unregistered}, dns: []string{"10.100.0.10"},
		},
		{name: "no cluster", docs: []string{userCilium}, err: "APIServerEndpoint are required"},
		{name: "not YAML", docs: []string{"kind: [NodeConfig"}, err: "could not parse NodeConfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := boot.Interpret("AL2023", b64(nodeConfigs(tt.docs...)))
			if tt.err != "" {
				if res.Err == nil || !strings.Contains(res.Err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", res.Err, tt.err)
				}
				return
			}
			if res.Err != nil {
				t.Fatalf("boot failed: %v\n%s", res.Err, strings.Join(res.Console, "\n"))
			}
			if diff := cmp.Diff(tt.taints, res.Kubelet.Taints); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dns, res.Kubelet.ClusterDNS); diff != "" {
				t.Errorf("clusterDNS (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInterpretRefusesGarbage(t *testing.T) {
	if res := boot.Interpret("AL2", "%%%"); res.Err == nil || res.Kubelet != nil {
		t.Errorf("non-base64 userData booted: %+v", res)
	}
	if res := boot.Interpret("Windows2022", b64("<powershell>")); res.Err == nil {
		t.Error("an uninterpreted family must say so")
	}
}

func TestInterpretBottlerocket(t *testing.T) {
	const settings = `[settings.kubernetes]
cluster-name = "demo"
api-server = "https://demo.eks.local"
max-pods = 110

[settings.kubernetes.node-labels]
"karpenter.sh/nodepool" = "default"

[settings.kubernetes.node-taints]
"karpenter.sh/unregistered" = [":NoExecute"]
"dedicated" = "gpu:NoSchedule"
`
	res := boot.Interpret("Bottlerocket", b64(settings))
	if res.Err != nil {
		t.Fatalf("boot failed: %v", res.Err)
	}
	k := res.Kubelet
	want := []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}, unregistered}
	if diff := cmp.Diff(want, k.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if k.ClusterName != "demo" || *k.MaxPods != 110 || k.Labels["karpenter.sh/nodepool"] != "default" {
		t.Errorf("kubelet: %+v", k)
	}
	if res := boot.Interpret("Bottlerocket", b64("[settings.kubernetes\ncluster-name = demo")); res.Err == nil {
		t.Error("unparsable TOML booted")
	}
}
