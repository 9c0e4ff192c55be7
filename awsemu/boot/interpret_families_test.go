package boot

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// mimeDoc joins parts (content type, body) into a MIME multi-part userData.
func mimeDoc(parts ...[2]string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n")
	for _, p := range parts {
		b.WriteString("--//\nContent-Type: " + p[0] + "\n\n" + p[1] + "\n")
	}
	b.WriteString("--//--\n")
	return b.String()
}

func nodeConfigPart(spec string) [2]string {
	return [2]string{nodeConfigMediaType, "---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n" + spec}
}

// generatedNodeConfig is the NodeConfig Joiner generates: cluster, registerWithTaints, labels.
var generatedNodeConfig = nodeConfigPart(`  cluster:
    name: demo
    apiServerEndpoint: ` + testEndpoint + `
    certificateAuthority: ` + testCAB64 + `
    cidr: 10.100.0.0/16
  kubelet:
    config:
      maxPods: 110
      registerWithTaints:
      - key: karpenter.sh/unregistered
        effect: NoExecute
    flags:
    - --node-labels="karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default"
`)

func al2023Reg(mutate func(*KubeletRegistration)) *KubeletRegistration {
	r := &KubeletRegistration{
		ClusterName: "demo", APIServerEndpoint: testEndpoint, CertificateAuthority: testCA,
		ClusterDNS: []string{"10.100.0.10"}, MaxPods: 110, Taints: unregistered,
		Labels: map[string]string{v1.CapacityTypeLabelKey: "on-demand", v1.NodePoolLabelKey: "default"},
	}
	if mutate != nil {
		mutate(r)
	}
	return r
}

func TestInterpretAL2023(t *testing.T) {
	runInterpretCases(t, []interpretCase{
		{
			name:     "generated NodeConfig alone registers the taint",
			family:   "AL2023",
			userData: mimeDoc(generatedNodeConfig),
			want:     al2023Reg(nil),
		},
		{
			name:   "S3: the user's --register-with-taints flag replaces the generated taint",
			family: "AL2023",
			userData: mimeDoc(nodeConfigPart(`  kubelet:
    config:
      clusterDNS: [172.20.0.10]
    flags:
    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute
`), generatedNodeConfig),
			want: al2023Reg(func(r *KubeletRegistration) {
				r.ClusterDNS = []string{"172.20.0.10"}
				r.Taints = []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}}
			}),
		},
		{
			name:   "user registerWithTaints in config is replaced by the later document's list",
			family: "AL2023",
			userData: mimeDoc(nodeConfigPart(`  kubelet:
    config:
      registerWithTaints:
      - {key: node.cilium.io/agent-not-ready, value: "true", effect: NoExecute}
`), generatedNodeConfig),
			want: al2023Reg(nil),
		},
		{
			name:   "later flags win, labels from every --node-labels merge",
			family: "AL2023",
			userData: mimeDoc(generatedNodeConfig, nodeConfigPart(`  kubelet:
    flags:
    - --node-labels=team=a
    - --max-pods=50
`)),
			want: al2023Reg(func(r *KubeletRegistration) {
				r.Labels["team"] = "a"
				r.MaxPods = 50
			}),
		},
		{
			name:   "kubelet config maps merge deeply",
			family: "AL2023",
			userData: mimeDoc(nodeConfigPart("  kubelet:\n    config:\n      featureGates: {A: true}\n      maxPods: 30\n"),
				generatedNodeConfig,
				nodeConfigPart("  kubelet:\n    config:\n      featureGates: {B: true}\n      clusterDNS: [10.0.0.2]\n")),
			want: al2023Reg(func(r *KubeletRegistration) { r.ClusterDNS = []string{"10.0.0.2"} }),
		},
		{
			name:     "shell parts run alongside",
			family:   "AL2023",
			userData: mimeDoc([2]string{"text/x-shellscript", "#!/bin/bash\necho hi"}, generatedNodeConfig),
			want:     al2023Reg(nil),
		},
		{
			name:     "a bare NodeConfig without MIME",
			family:   "AL2023",
			userData: generatedNodeConfig[1],
			want:     al2023Reg(nil),
		},
		{
			name:       "missing cidr",
			family:     "AL2023",
			userData:   mimeDoc(nodeConfigPart("  cluster:\n    name: demo\n    apiServerEndpoint: " + testEndpoint + "\n    certificateAuthority: " + testCAB64 + "\n")),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "CIDR is missing in cluster configuration",
		},
		{
			name:       "no NodeConfig at all",
			family:     "AL2023",
			userData:   mimeDoc([2]string{"text/x-shellscript", "#!/bin/bash\n/etc/eks/bootstrap.sh demo"}),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "could not find NodeConfig",
		},
		{
			name:       "wrong kind",
			family:     "AL2023",
			userData:   mimeDoc([2]string{nodeConfigMediaType, "apiVersion: node.eks.aws/v1alpha1\nkind: Config\n"}),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "no kind",
		},
		{
			name:       "malformed flag stops the kubelet",
			family:     "AL2023",
			userData:   mimeDoc(generatedNodeConfig, nodeConfigPart("  kubelet:\n    flags: [\"--max-pods=many\"]\n")),
			wantReason: ReasonKubeletFailed,
			wantLog:    "--max-pods",
		},
	})
}

func TestInterpretBottlerocket(t *testing.T) {
	base := "[settings.kubernetes]\ncluster-name = \"demo\"\napi-server = \"" + testEndpoint + "\"\ncluster-certificate = \"" + testCAB64 + "\"\n"
	brReg := func(mutate func(*KubeletRegistration)) *KubeletRegistration {
		r := &KubeletRegistration{
			ClusterName: "demo", APIServerEndpoint: testEndpoint, CertificateAuthority: testCA,
			ClusterDNS: []string{"172.20.0.10"}, MaxPods: 17, Labels: map[string]string{},
		}
		if mutate != nil {
			mutate(r)
		}
		return r
	}
	runInterpretCases(t, []interpretCase{
		{
			name:   "labels, taints, max pods, dns",
			family: "Bottlerocket",
			userData: base + "max-pods = 110\ncluster-dns-ip = \"10.100.0.10\"\n" +
				"[settings.kubernetes.node-labels]\n\"karpenter.sh/nodepool\" = \"default\"\n" +
				"[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n\"dedicated\" = [\"ci:NoSchedule\", \"ci:NoExecute\"]\n" +
				"[settings.host-containers.admin]\nenabled = true\n",
			want: brReg(func(r *KubeletRegistration) {
				r.MaxPods = 110
				r.ClusterDNS = []string{"10.100.0.10"}
				r.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
				r.Taints = []corev1.Taint{
					{Key: "dedicated", Value: "ci", Effect: corev1.TaintEffectNoSchedule},
					{Key: "dedicated", Value: "ci", Effect: corev1.TaintEffectNoExecute},
					v1.UnregisteredNoExecuteTaint(),
				}
			}),
		},
		{
			name:     "minimal settings",
			family:   "Bottlerocket",
			userData: base,
			want:     brReg(nil),
		},
		{
			// The hand-written reader refused floats and dates; TOML has them and Bottlerocket's
			// reader takes them, so a setting the node does not use no longer refuses the document.
			name:     "floats, dates and arrays of tables in other settings",
			family:   "Bottlerocket",
			userData: base + "[settings.kernel]\nratio = 0.5\nsince = 2026-11-25T12:00:00Z\n[[settings.custom.items]]\nname = \"a\"\n",
			want:     brReg(nil),
		},
		{
			name:       "not TOML",
			family:     "Bottlerocket",
			userData:   "#!/bin/bash\n/etc/eks/bootstrap.sh demo\n",
			wantReason: ReasonUserDataInvalid,
			wantLog:    "Unable to deserialize user data as TOML",
		},
		{
			name:     "bare effect and a single string",
			family:   "Bottlerocket",
			userData: base + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\"NoExecute\"]\nspecial = \"true:NoSchedule\"\n",
			want: brReg(func(r *KubeletRegistration) {
				r.Taints = []corev1.Taint{v1.UnregisteredNoExecuteTaint(), {Key: "special", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
			}),
		},
		{
			name:       "taint with an unknown effect",
			family:     "Bottlerocket",
			userData:   base + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecut\"]\n",
			wantReason: ReasonUserDataInvalid,
			wantLog:    "Failed to set settings",
		},
		{
			name:       "no api-server",
			family:     "Bottlerocket",
			userData:   "[settings.kubernetes]\ncluster-name = \"demo\"\ncluster-certificate = \"" + testCAB64 + "\"\n",
			wantReason: ReasonBootstrapFailed,
			wantLog:    "api-server is not set",
		},
	})
}

func TestInterpretCustom(t *testing.T) {
	runInterpretCases(t, []interpretCase{
		{
			name:     "bootstrap.sh call read as AL2",
			family:   "Custom",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'`),
			want:     al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:     "direct kubelet call",
			family:   "Custom",
			userData: "#!/bin/bash\n/usr/bin/kubelet --kubeconfig /var/lib/kubelet/kubeconfig --register-with-taints=karpenter.sh/unregistered:NoExecute --node-labels a=b &\n",
			want: &KubeletRegistration{
				ClusterName: "demo", APIServerEndpoint: testEndpoint, CertificateAuthority: testCA,
				Labels: map[string]string{"a": "b"}, Taints: unregistered,
				ExtraFlags: []string{"--kubeconfig=/var/lib/kubelet/kubeconfig"},
			},
		},
		{
			name:     "NodeConfig parts read by nodeadm",
			family:   "Custom",
			userData: mimeDoc(generatedNodeConfig),
			want:     al2023Reg(nil),
		},
		{
			name:       "nothing starts a kubelet",
			family:     "Custom",
			userData:   "#!/bin/bash\nyum install -y htop\n",
			wantReason: ReasonNoBootstrap,
			wantLog:    "kubelet.service was never started",
		},
	})
}
