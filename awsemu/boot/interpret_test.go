package boot

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

const (
	testCA       = "-----BEGIN CERTIFICATE-----\nMIIC-demo-ca\n-----END CERTIFICATE-----\n"
	testEndpoint = "https://ABCDEF0123456789.gr7.us-west-2.eks.amazonaws.com"
)

var testCAB64 = base64.StdEncoding.EncodeToString([]byte(testCA))

func testCluster() Cluster {
	return Cluster{
		Name: "demo", Endpoint: testEndpoint, CertificateAuthority: testCAB64,
		ServiceCIDR: "10.100.0.0/16", KubernetesVersion: "1.33",
	}
}

func testInstance(family, userData string) Instance {
	return Instance{
		ID: "i-0123456789abcdef0", Region: "us-west-2", Zone: "us-west-2a",
		PrivateDNSName: nodeName, PrivateIP: "10.0.1.23", VPCCIDR: "10.0.0.0/16",
		InstanceType: "t3.medium", Architecture: "amd64", AMIFamily: family, UserData: []byte(userData),
		RoleARN: nodeRole, VCPU: 2, MemoryMiB: 4096, ENIMaxPods: 17,
	}
}

// al2Script is a shell script with CA and URL assigned, then the given bootstrap line.
func al2Script(bootstrap string) string {
	return "#!/bin/bash\nset -ex\nCA=" + testCAB64 + "\nURL=" + testEndpoint + "\n" + bootstrap + "\n"
}

var unregistered = []corev1.Taint{v1.UnregisteredNoExecuteTaint()}

type interpretCase struct {
	name       string
	family     string
	userData   string
	wantReason string // empty: the kubelet starts
	want       *KubeletRegistration
	wantLog    string // a console line must contain it
}

func runInterpretCases(t *testing.T, tests []interpretCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, console, err := Interpret(testInstance(tt.family, tt.userData), testCluster())
			if tt.wantReason != "" {
				var be *BootError
				if !errors.As(err, &be) || be.Reason != tt.wantReason {
					t.Fatalf("Interpret() error = %v, want reason %s\nconsole:\n%s", err, tt.wantReason, strings.Join(console, "\n"))
				}
				if diff := cmp.Diff(console, be.Console); diff != "" {
					t.Errorf("BootError.Console differs from the returned console:\n%s", diff)
				}
			} else if err != nil {
				t.Fatalf("Interpret() error = %v\nconsole:\n%s", err, strings.Join(console, "\n"))
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, reg, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(KubeletRegistration{}, "KubeletArgs")); diff != "" {
					t.Errorf("registration (-want +got):\n%s", diff)
				}
			}
			if tt.wantLog != "" && !strings.Contains(strings.Join(console, "\n"), tt.wantLog) {
				t.Errorf("console lacks %q:\n%s", tt.wantLog, strings.Join(console, "\n"))
			}
		})
	}
}

// al2Reg is the registration of a successful AL2 bootstrap with the test cluster.
func al2Reg(mutate func(*KubeletRegistration)) *KubeletRegistration {
	r := &KubeletRegistration{
		ClusterName: "demo", APIServerEndpoint: testEndpoint, CertificateAuthority: testCA,
		ClusterDNS: []string{"172.20.0.10"}, MaxPods: 17, Labels: map[string]string{},
	}
	if mutate != nil {
		mutate(r)
	}
	return r
}

func TestInterpretAL2(t *testing.T) {
	const s2Broken = `/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`
	runInterpretCases(t, []interpretCase{
		{
			name:     "S2: one-word --kubelet-extra-args= is dropped, the taint is lost",
			family:   "AL2",
			userData: al2Script(s2Broken),
			want: al2Reg(func(r *KubeletRegistration) {
				r.IgnoredArguments = []string{`--kubelet-extra-args=--register-with-taints="karpenter.sh/unregistered:NoExecute"`}
			}),
		},
		{
			name:     "two words with inner double quotes keep the taint",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints="karpenter.sh/unregistered:NoExecute"'`),
			want:     al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:     "two words without inner quotes keep the taint",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'`),
			want:     al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:     "double-quoted extra args with labels and taints",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca "$CA" --apiserver-endpoint "$URL" --kubelet-extra-args "--node-labels=nodegroup=karpenter,karpenter.sh/nodepool=default --register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=ci:NoSchedule"`),
			want: al2Reg(func(r *KubeletRegistration) {
				r.Labels = map[string]string{"nodegroup": "karpenter", v1.NodePoolLabelKey: "default"}
				r.Taints = []corev1.Taint{v1.UnregisteredNoExecuteTaint(), {Key: "dedicated", Value: "ci", Effect: corev1.TaintEffectNoSchedule}}
			}),
		},
		{
			name:     "--use-max-pods false with --max-pods=110 in the extra args",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --use-max-pods false --kubelet-extra-args '--max-pods=110'`),
			want:     al2Reg(func(r *KubeletRegistration) { r.MaxPods = 110 }),
		},
		{
			name:     "--use-max-pods false alone leaves the kubelet default",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --use-max-pods false`),
			want:     al2Reg(func(r *KubeletRegistration) { r.MaxPods = 0 }),
		},
		{
			name:     "--dns-cluster-ip",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --dns-cluster-ip 10.100.0.10`),
			want:     al2Reg(func(r *KubeletRegistration) { r.ClusterDNS = []string{"10.100.0.10"} }),
		},
		{
			name:     "without --b64-cluster-ca and --apiserver-endpoint bootstrap.sh calls DescribeCluster",
			family:   "AL2",
			userData: "#!/bin/bash\n/etc/eks/bootstrap.sh demo\n",
			want:     al2Reg(func(r *KubeletRegistration) { r.ClusterDNS = []string{"10.100.0.10"} }),
		},
		{
			name:     "--b64-cluster-ca without --apiserver-endpoint: DescribeCluster sets both",
			family:   "AL2",
			userData: "#!/bin/bash\n/etc/eks/bootstrap.sh demo --b64-cluster-ca b3RoZXI=\n",
			want:     al2Reg(func(r *KubeletRegistration) { r.ClusterDNS = []string{"10.100.0.10"} }),
		},
		{
			name:       "unsupported --container-runtime",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --container-runtime cri-o`),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "Container runtime cri-o is not supported.",
		},
		{
			name:       "DescribeCluster for a cluster that does not exist",
			family:     "AL2",
			userData:   "#!/bin/bash\n/etc/eks/bootstrap.sh other --apiserver-endpoint " + testEndpoint + "\n",
			wantReason: ReasonBootstrapFailed,
			wantLog:    "No cluster found for name: other.",
		},
		{
			name:       "--b64-cluster-ca that is not base64",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca not-base64! --apiserver-endpoint $URL`),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "base64: invalid input",
		},
		{
			name:       "an option without its value: $2 unbound",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint`),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "$2: unbound variable",
		},
		{
			// --b64-cluster-ca takes "--apiserver-endpoint" as its value, the URL becomes a
			// positional argument, and with no endpoint bootstrap.sh asks DescribeCluster.
			name:     "unset variable vanishes and shifts the options",
			family:   "AL2",
			userData: "#!/bin/bash\n/etc/eks/bootstrap.sh demo --b64-cluster-ca $UNSET --apiserver-endpoint " + testEndpoint + "\n",
			want: al2Reg(func(r *KubeletRegistration) {
				r.ClusterDNS = []string{"10.100.0.10"}
				r.IgnoredArguments = []string{testEndpoint}
			}),
		},
		{
			name:       "set -u and an unset variable stop the script before bootstrap.sh",
			family:     "AL2",
			userData:   "#!/bin/bash\nset -euo pipefail\n/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint " + testEndpoint + "\n",
			wantReason: ReasonBootstrapFailed,
			wantLog:    "CA: unbound variable",
		},
		{
			name:       "unterminated quote: the script fails, no kubelet",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute`),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "unexpected EOF while looking for matching `''",
		},
		{
			name:       "no cluster name",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh --b64-cluster-ca $CA --apiserver-endpoint $URL`),
			wantReason: ReasonBootstrapFailed,
			wantLog:    "CLUSTER_NAME is not defined",
		},
		{
			name:     "one-word option before the cluster name becomes the cluster name",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh --kubelet-extra-args=--max-pods=20 demo --b64-cluster-ca $CA --apiserver-endpoint $URL`),
			want: al2Reg(func(r *KubeletRegistration) {
				r.ClusterName = "--kubelet-extra-args=--max-pods=20"
				r.IgnoredArguments = []string{"demo"}
			}),
		},
		{
			name:       "malformed taint stops the kubelet",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered'`),
			wantReason: ReasonKubeletFailed,
			wantLog:    "invalid taint spec",
		},
		{
			name:       "kubelet refuses node-role.kubernetes.io labels",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--node-labels=node-role.kubernetes.io/worker=true'`),
			wantReason: ReasonKubeletFailed,
			wantLog:    "unknown 'kubernetes.io' or 'k8s.io' labels",
		},
		{
			name:       "stray word in the extra args is an unknown command",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--max-pods=20 extra'`),
			wantReason: ReasonKubeletFailed,
			wantLog:    "unknown command extra",
		},
		{
			name:       "a kubelet flag removed in 1.27 stops the kubelet",
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--container-runtime=remote --max-pods=20'`),
			wantReason: ReasonKubeletFailed,
			wantLog:    "unknown flag: --container-runtime",
		},
		{
			name:     "unknown kubelet flags are kept",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--v=2 --image-gc-high-threshold 80 --register-node'`),
			want: al2Reg(func(r *KubeletRegistration) {
				r.ExtraFlags = []string{"--v=2", "--image-gc-high-threshold=80", "--register-node"}
			}),
		},
		{
			// The drop-in reads Environment='KUBELET_EXTRA_ARGS=--node-labels='a=b c': systemd
			// takes KUBELET_EXTRA_ARGS=--node-labels=a=b as the first word, then the quote
			// opened after c never closes and it stops reading the line.
			name:     "a single quote inside the extra args breaks the drop-in",
			family:   "AL2",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args "--node-labels='a=b c"`),
			want:     al2Reg(func(r *KubeletRegistration) { r.Labels = map[string]string{"a": "b"} }),
			wantLog:  "systemd[1]: /etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf:2: Invalid syntax",
		},
		{
			name:     "exported KUBELET_EXTRA_ARGS is bootstrap.sh's default",
			family:   "AL2",
			userData: al2Script("export KUBELET_EXTRA_ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute'\n/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL"),
			want:     al2Reg(func(r *KubeletRegistration) { r.Taints = unregistered }),
		},
		{
			name:   "Karpenter-style MIME multi-part with line continuations",
			family: "AL2",
			userData: "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n" +
				"#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n" +
				"/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint '" + testEndpoint + "' --b64-cluster-ca '" + testCAB64 + "' \\\n" +
				"--dns-cluster-ip '10.100.0.10' \\\n--use-max-pods false \\\n" +
				"--kubelet-extra-args '--node-labels=\"karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default\" --register-with-taints=\"karpenter.sh/unregistered:NoExecute\" --max-pods=110'\n--//--\n",
			want: al2Reg(func(r *KubeletRegistration) {
				r.ClusterDNS = []string{"10.100.0.10"}
				r.MaxPods = 110
				r.Labels = map[string]string{v1.CapacityTypeLabelKey: "on-demand", v1.NodePoolLabelKey: "default"}
				r.Taints = unregistered
			}),
			wantLog: "+ /etc/eks/bootstrap.sh demo --apiserver-endpoint",
		},
		{
			name:     "bootstrap.sh inside an if body and through sudo env",
			family:   "AL2",
			userData: al2Script("if [ -x /etc/eks/bootstrap.sh ]; then sudo -E env A=1 /etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL; fi"),
			want:     al2Reg(nil),
		},
		{
			name:   "base64-encoded MIME part",
			family: "AL2",
			userData: "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n" +
				wrap76(base64.StdEncoding.EncodeToString([]byte(al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--max-pods=29'`)))) + "\n--b--\n",
			want: al2Reg(func(r *KubeletRegistration) { r.MaxPods = 29 }),
		},
		{
			name:       "userData that is not a script starts nothing",
			family:     "AL2",
			userData:   "/etc/eks/bootstrap.sh demo\n",
			wantReason: ReasonNoBootstrap,
			wantLog:    "Unhandled non-multipart",
		},
		{
			name:       "script without bootstrap.sh",
			family:     "AL2",
			userData:   "#!/bin/bash\necho hello\n",
			wantReason: ReasonNoBootstrap,
		},
	})
}

// wrap76 wraps s at 76 characters, as MIME encoders do.
func wrap76(s string) string {
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	b.WriteString(s)
	return b.String()
}
