package nodejoin

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

var testCluster = userdata.Cluster{Name: "demo", Endpoint: "https://demo.eks.example", CABundle: "Q0E=", DNS: "10.100.0.10", CIDR: "10.100.0.0/16"}

func classWith(family, userData string) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMIFamily: &family, Role: "KarpenterNodeRole-demo",
		AMISelectorTerms: []awsv1.AMISelectorTerm{{ID: "ami-0123456789abcdef0"}}}}
	if userData != "" {
		nc.Spec.UserData = &userData
	}
	nc.Name = "default"
	return nc
}

func pool(name string, startupTaints ...corev1.Taint) *v1.NodePool {
	p := &v1.NodePool{}
	p.Name = name
	p.Spec.Template.Spec.StartupTaints = startupTaints
	p.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "default"}
	return p
}

const al2Head = "#!/bin/bash\nset -ex\n"

func nodeConfig(kubelet string) string {
	return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n" + kubelet
}

func mime(parts ...string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n")
	for i := 0; i+1 < len(parts); i += 2 {
		b.WriteString("--BOUNDARY\nContent-Type: " + parts[i] + "\n\n" + parts[i+1] + "\n")
	}
	b.WriteString("--BOUNDARY--\n")
	return b.String()
}

// TestUserDataVariants: userData of every family, as the kubelet would receive it. want lists the
// findings' severity and reason; nil means no finding at all.
func TestUserDataVariants(t *testing.T) {
	const bootstrap = "/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL "
	cases := []struct {
		name, family, userData string
		pools                  []*v1.NodePool
		want                   []string
		wantFix                string // a substring of some finding's Fix
		wantMessage            string // a substring of some finding's Message
	}{
		// AL2: Joiner's own bootstrap.sh call, or the operator's.
		{name: "AL2 no userData", family: awsv1.AMIFamilyAL2},
		{name: "AL2 a script without bootstrap.sh", family: awsv1.AMIFamilyAL2, userData: al2Head + "yum install -y htop\n"},
		{name: "AL2 two-word kubelet-extra-args with the taint (S2 fixed)", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "CA=x\nURL=https://demo\n" + bootstrap + "--kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n",
			want:     []string{"Advice UserDataCallsBootstrap"}},
		{name: "AL2 inner double quotes systemd removes", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "CA=x\nURL=https://demo\n" + bootstrap + "--kubelet-extra-args '--register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'\n",
			want:     []string{"Advice UserDataCallsBootstrap"}},
		{name: "AL2 exported KUBELET_EXTRA_ARGS", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "CA=x\nURL=https://demo\nexport KUBELET_EXTRA_ARGS='--register-with-taints=karpenter.sh/unregistered:NoExecute'\n" + bootstrap + "\n",
			want:     []string{"Advice UserDataCallsBootstrap"}},
		{name: "AL2 continuation lines", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "CA=x\nURL=https://demo\n/etc/eks/bootstrap.sh demo \\\n  --b64-cluster-ca $CA \\\n  --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=ci:NoSchedule'\n",
			want:     []string{"Advice UserDataCallsBootstrap"}},
		{name: "AL2 one-word kubelet-extra-args (S2)", family: awsv1.AMIFamilyAL2,
			userData:    al2Head + "CA=x\nURL=https://demo\n" + bootstrap + "--kubelet-extra-args='--register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'\n",
			want:        []string{"Error BootstrapOptionIgnored", "Advice UserDataCallsBootstrap"},
			wantFix:     "The corrected line: " + bootstrap + "--kubelet-extra-args '--register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'",
			wantMessage: "The line: " + bootstrap + "--kubelet-extra-args="},
		{name: "AL2 one-word option before the cluster name", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "/etc/eks/bootstrap.sh --b64-cluster-ca=x demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n",
			want:     []string{"Error BootstrapOptionIgnored", "Advice UserDataCallsBootstrap"}},
		{name: "AL2 old taint name", family: awsv1.AMIFamilyAL2,
			userData: al2Head + bootstrap + "--kubelet-extra-args '--register-with-taints=karpenter.sh/uninitialized:NoExecute'\n",
			want:     []string{"Error UnregisteredTaintMissing", "Advice UserDataCallsBootstrap"}, wantMessage: "uninitialized"},
		{name: "AL2 no taint at all", family: awsv1.AMIFamilyAL2,
			userData: al2Head + bootstrap + "--kubelet-extra-args '--node-labels=team=ci'\n",
			want:     []string{"Error UnregisteredTaintMissing", "Advice UserDataCallsBootstrap"}},
		{name: "AL2 blank after a comma in the taint list", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "CA=x\nURL=https://demo\n" + bootstrap + "--kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute, dedicated=ci:NoSchedule'\n",
			want:     []string{"Error InvalidKubeletArguments", "Advice UserDataCallsBootstrap"},
			wantFix:  "--register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=ci:NoSchedule'"},
		{name: "AL2 unknown effect", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "CA=x\nURL=https://demo\n" + bootstrap + "--kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=ci:NoSchedul'\n",
			want:     []string{"Error InvalidKubeletArguments", "Advice UserDataCallsBootstrap"},
			wantFix:  "dedicated=ci:NoSchedule'"},
		{name: "AL2 escaped quotes reach the kubelet", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "CA=x\nURL=https://demo\n" + bootstrap + "--kubelet-extra-args '--register-with-taints=\\\"karpenter.sh/unregistered:NoExecute\\\"'\n",
			want:     []string{"Error InvalidKubeletArguments", "Advice UserDataCallsBootstrap"}, wantMessage: "quotes",
			wantFix: "write the line as: " + bootstrap + "--kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'"},
		{name: "AL2 kubelet args from a command substitution", family: awsv1.AMIFamilyAL2,
			userData: al2Head + bootstrap + "--kubelet-extra-args \"$(cat /etc/kubelet-args)\"\n",
			want:     []string{"Warning BootstrapTaintUnverifiable", "Advice UserDataCallsBootstrap"}},
		{name: "AL2 call in a function never called", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "join() {\n  " + bootstrap + "\n}\necho ready\n"},
		{name: "AL2 bootstrap.sh in a comment", family: awsv1.AMIFamilyAL2,
			userData: al2Head + "# /etc/eks/bootstrap.sh demo --kubelet-extra-args=--foo\necho hi\n"},

		// AL2023: Joiner appends its NodeConfig and unions the taints.
		{name: "AL2023 no userData", family: awsv1.AMIFamilyAL2023},
		{name: "AL2023 NodeConfig with labels only", family: awsv1.AMIFamilyAL2023,
			userData: mime("application/node.eks.aws", nodeConfig("    flags:\n    - --node-labels=team=ci\n"))},
		{name: "AL2023 Cilium taint flag (S3) without the agent declared", family: awsv1.AMIFamilyAL2023,
			userData: mime("application/node.eks.aws", nodeConfig("    config:\n      clusterDNS: [172.20.0.10]\n    flags:\n    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute\n")),
			want:     []string{"Advice AgentTaintNotInStartupTaints", "Advice UserDataClusterDNS"},
			wantFix:  "startupTaints:\n      - key: node.cilium.io/agent-not-ready\n        value: \"true\"\n        effect: NoExecute"},
		{name: "AL2023 Cilium taint declared in startupTaints", family: awsv1.AMIFamilyAL2023,
			userData: mime("application/node.eks.aws", nodeConfig("    flags:\n    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute\n")),
			pools:    []*v1.NodePool{pool("default", corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute})}},
		{name: "AL2023 an operator taint the NodePool does not list", family: awsv1.AMIFamilyAL2023,
			userData: mime("application/node.eks.aws", nodeConfig("    flags:\n    - --register-with-taints=dedicated=ci:NoSchedule\n")),
			want:     []string{"Advice UserDataTaintNotInNodePool"}},
		{name: "AL2023 an agent taint and an operator taint", family: awsv1.AMIFamilyAL2023,
			userData: mime("application/node.eks.aws", nodeConfig("    flags:\n    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute,dedicated=ci:NoSchedule\n")),
			want:     []string{"Advice AgentTaintNotInStartupTaints", "Advice UserDataTaintNotInNodePool"}},
		{name: "AL2023 shell part only", family: awsv1.AMIFamilyAL2023,
			userData: mime("text/x-shellscript", al2Head+"echo hi\n")},
		{name: "AL2023 clusterDNS in userData", family: awsv1.AMIFamilyAL2023,
			userData: mime("application/node.eks.aws", nodeConfig("    config:\n      clusterDNS: [172.20.0.10]\n")),
			want:     []string{"Advice UserDataClusterDNS"}},
		{name: "AL2023 NodeConfig that is not YAML", family: awsv1.AMIFamilyAL2023,
			userData: mime("application/node.eks.aws", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: [unclosed\n"),
			want:     []string{"Error UserDataInvalid"}},

		// Bottlerocket: TOML settings, taints unioned.
		{name: "Bottlerocket no userData", family: awsv1.AMIFamilyBottlerocket},
		{name: "Bottlerocket own settings", family: awsv1.AMIFamilyBottlerocket,
			userData: "[settings.kubernetes]\nmax-pods = 20\n[settings.kubernetes.node-labels]\nteam = \"ci\"\n"},
		{name: "Bottlerocket EBS agent taint", family: awsv1.AMIFamilyBottlerocket,
			userData: "[settings.kubernetes.node-taints]\n\"ebs.csi.aws.com/agent-not-ready\" = [\":NoExecute\"]\n",
			want:     []string{"Advice AgentTaintNotInStartupTaints"}},
		{name: "Bottlerocket not TOML", family: awsv1.AMIFamilyBottlerocket, userData: "[settings.kubernetes\n",
			want: []string{"Error UserDataInvalid"}},

		// Custom: passed verbatim.
		{name: "Custom bootstrap.sh with the taint", family: awsv1.AMIFamilyCustom,
			userData: al2Head + bootstrap + "--kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n"},
		{name: "Custom S2 as reported", family: awsv1.AMIFamilyCustom,
			userData: al2Head + bootstrap + "--kubelet-extra-args='--register-with-taints=\"karpenter.sh/uninitialized\"'\n",
			want:     []string{"Error BootstrapOptionIgnored", "Error UnregisteredTaintMissing"}},
		{name: "Custom bootstrap.sh without the taint", family: awsv1.AMIFamilyCustom,
			userData: al2Head + bootstrap + "\n",
			want:     []string{"Error UnregisteredTaintMissing"}},
		{name: "Custom NodeConfig whose flag replaces the taint", family: awsv1.AMIFamilyCustom,
			userData: nodeConfig("    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute\n    flags:\n    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute\n"),
			want:     []string{"Error UnregisteredTaintMissing", "Advice AgentTaintNotInStartupTaints"}},
		{name: "Custom NodeConfig with the taint flag", family: awsv1.AMIFamilyCustom,
			userData: nodeConfig("    flags:\n    - --register-with-taints=karpenter.sh/unregistered:NoExecute\n")},
		{name: "Custom Bottlerocket without the taint", family: awsv1.AMIFamilyCustom,
			userData: "[settings.kubernetes]\ncluster-name = \"demo\"\n[settings.kubernetes.node-taints]\n\"dedicated\" = [\"ci:NoSchedule\"]\n",
			want:     []string{"Error UnregisteredTaintMissing"}},
		{name: "Custom Bottlerocket with the taint", family: awsv1.AMIFamilyCustom,
			userData: "[settings.kubernetes]\ncluster-name = \"demo\"\n[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n"},
		{name: "Custom script Joiner cannot read", family: awsv1.AMIFamilyCustom,
			userData: al2Head + "/usr/local/bin/start-kubelet\n",
			want:     []string{"Warning CustomUserDataTaintNotVisible"}},
	}
	noFinding := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pools := tc.pools
			if pools == nil {
				pools = []*v1.NodePool{pool("default")}
			}
			got := Check(Inputs{NodeClass: classWith(tc.family, tc.userData), NodePools: pools, Cluster: testCluster})
			var reasons []string
			for _, f := range got {
				reasons = append(reasons, string(f.Severity)+" "+f.Reason)
			}
			if diff := cmp.Diff(tc.want, reasons); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%v", diff, got)
			}
			if tc.wantFix != "" && !slices.ContainsFunc(got, func(f Finding) bool { return strings.Contains(f.Fix, tc.wantFix) }) {
				t.Errorf("no fix contains %q: %v", tc.wantFix, got)
			}
			if tc.wantMessage != "" && !slices.ContainsFunc(got, func(f Finding) bool { return strings.Contains(f.Message, tc.wantMessage) }) {
				t.Errorf("no message contains %q: %v", tc.wantMessage, got)
			}
		})
		if tc.want == nil {
			noFinding++
		}
	}
	if len(cases) < 30 || noFinding < 5 {
		t.Errorf("%d variants, %d without finding: the issue asks for at least 30 and 5", len(cases), noFinding)
	}
}
