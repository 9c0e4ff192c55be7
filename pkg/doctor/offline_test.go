package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const scenarios = "../../test/scenarios/"

// finding is the part of a Finding a test pins: severity, object and reason, plus words its
// message and fix must contain.
type finding struct {
	severity, object, reason string
	message, fix             []string
}

func (f finding) key() string { return f.severity + " " + f.object + " " + f.reason }

// TestOfflineScenarios runs doctor -f over the five field scenarios and variants of them.
func TestOfflineScenarios(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		o     Options
		want  []finding
	}{{
		name:  "S1 as reported: aws-auth maps a role other than the node role",
		files: []string{scenarios + "s1-unmapped-node-role.yaml"},
		want: []finding{{severity: "Error", object: "ConfigMap/kube-system/aws-auth", reason: "AWSAuthMapsAnotherRole",
			message: []string{"KarpenterControllerRole-demo", "not node role arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"},
			fix:     []string{"- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo\n  username: system:node:{{EC2PrivateDNSName}}", "system:bootstrappers", "--type EC2_LINUX"}}},
	}, {
		name:  "S1 with the controller's IRSA ServiceAccount: the controller's role is named as the mistake",
		files: []string{scenarios + "s1-unmapped-node-role.yaml", "testdata/controller-irsa.yaml"},
		o:     Options{ClusterName: "demo"},
		want: []finding{{severity: "Error", object: "ConfigMap/kube-system/aws-auth", reason: "AWSAuthMapsControllerRole",
			message: []string{"the controller's role"}, fix: []string{"aws eks create-access-entry --cluster-name demo --principal-arn arn:aws:iam::111122223333:role/KarpenterNodeRole-demo --type EC2_LINUX"}}},
	}, {
		name:  "S1 in CONFIG_MAP mode: the fix is the mapRoles entry alone",
		files: []string{scenarios + "s1-unmapped-node-role.yaml"},
		o:     Options{AuthenticationMode: "CONFIG_MAP"},
		want: []finding{{severity: "Error", object: "ConfigMap/kube-system/aws-auth", reason: "AWSAuthMapsAnotherRole",
			fix: []string{"add to mapRoles in kube-system/aws-auth:\n- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"}}},
	}, {
		name:  "S1 with aws-auth fixed: no finding",
		files: []string{"testdata/s1-without-aws-auth.yaml", "testdata/s1-aws-auth-fixed.yaml"},
	}, {
		name:  "S1 without aws-auth: access entries cannot be seen, so never an Error",
		files: []string{"testdata/s1-without-aws-auth.yaml"},
		o:     Options{AccountID: "111122223333"},
		want: []finding{{severity: "Warning", object: "EC2NodeClass/default", reason: "NodeRoleMappingUnverified",
			fix: []string{"arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"}}},
	}, {
		name:  "S1 without aws-auth nor account: nothing to say about the role",
		files: []string{"testdata/s1-without-aws-auth.yaml"},
	}, {
		name:  "S1's fixed aws-auth in another account than the Pod Identity association's",
		files: []string{"testdata/s1-without-aws-auth.yaml", "testdata/s1-aws-auth-fixed.yaml", "testdata/controller-pod-identity.yaml"},
		want: []finding{{severity: "Error", object: "ConfigMap/kube-system/aws-auth", reason: "AWSAuthAccountMismatch",
			message: []string{"in account 111122223333", "in account 444455556666"}, fix: []string{"rolearn: arn:aws:iam::444455556666:role/KarpenterNodeRole-demo"}}},
	}, {
		name:  "S2: the single-word --kubelet-extra-args= is ignored by bootstrap.sh",
		files: []string{scenarios + "s2-custom-ami-taint-args.yaml"},
		want: []finding{
			{severity: "Error", object: "EC2NodeClass/custom-ami", reason: "BootstrapOptionIgnored",
				message: []string{"--kubelet-extra-args='--register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'"},
				fix:     []string{"--kubelet-extra-args '--register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'"}},
			{severity: "Advice", object: "EC2NodeClass/custom-ami", reason: "UserDataCallsBootstrap"},
		},
	}, {
		name:  "S3: advice only, the Cilium taint belongs in startupTaints",
		files: []string{scenarios + "s3-al2023-userdata-taint-override.yaml"},
		want: []finding{
			{severity: "Advice", object: "EC2NodeClass/default", reason: "UserDataClusterDNS", fix: []string{"spec.kubelet.clusterDNS"}},
			{severity: "Advice", object: "NodePool/default", reason: "AgentTaintNotInStartupTaints",
				message: []string{"Cilium"}, fix: []string{"startupTaints:\n      - key: node.cilium.io/agent-not-ready\n        value: \"true\"\n        effect: NoExecute"}},
		},
	}, {
		name:  "S4 manifests alone: the IAM policy is not in them, advice on the instance profile's role",
		files: []string{scenarios + "s4-runinstances-auth-check.yaml"},
		want: []finding{{severity: "Advice", object: "EC2NodeClass/batch", reason: "InstanceProfilePassRoleUnverified",
			fix: []string{"iam:PassRole", "BatchNodeInstanceProfile-demo"}}},
	}, {
		name:  "S4 with the classes' status: each failed validation is an Error of its own class",
		files: []string{"testdata/s4-status.yaml"},
		want: []finding{
			{severity: "Error", object: "EC2NodeClass/batch", reason: "RunInstancesAuthCheckFailed", message: []string{"iam:PassRole", "BatchNodeRole-demo"}},
			{severity: "Error", object: "EC2NodeClass/tenant-a", reason: "RunInstancesAuthCheckFailed", message: []string{"cost-center"}},
		},
	}, {
		name:  "S5: valid, no finding",
		files: []string{scenarios + "s5-arm64-nodepool.yaml"},
	}, {
		name:  "S5's mixed template: advice for a custom AMI of unknown architecture, a warning for a resolved single-arch AMI",
		files: []string{"testdata/s5-mixed-architectures.yaml"},
		want: []finding{
			{severity: "Warning", object: "NodePool/mixed-resolved", reason: "ArchitectureWithoutAMI",
				message: []string{"architecture arm64 only", "never launches a amd64 instance"}, fix: []string{"values: [arm64]"}},
			{severity: "Advice", object: "NodePool/mixed-custom", reason: "CustomAMIArchitecturesUnverified"},
		},
	}, {
		name:  "NodePool and pod findings",
		files: []string{"testdata/pools-and-pods.yaml"},
		want: []finding{
			{severity: "Warning", object: "NodePool/gpu", reason: "NodeClassNotFound", message: []string{"EC2NodeClass missing", "not in the manifests"}, fix: []string{"one of: default"}},
			{severity: "Warning", object: "Pod/ci/typo", reason: "PodFitsNoNodePool",
				message: []string{`NodePool armapps offers pod-type only "armapp" (the pod asks for pod-type In [armapps])`, "NodePool gpu has taint nvidia.com/gpu=true:NoSchedule"}},
			{severity: "Warning", object: "Pod/ml/trainer", reason: "PodFitsNoNodePool",
				message: []string{"NodePool gpu has taint nvidia.com/gpu=true:NoSchedule, which the pod does not tolerate", `NodePool armapps offers pod-type only "armapp"`}},
			{severity: "Warning", object: "ReplicaSet/default/web-7d9c", reason: "PodFitsNoNodePool", message: []string{"pod default/web-7d9c-x2x4z"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obs, err := ReadFiles(tc.files, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			r := Diagnose(obs)
			// Ranked by severity; within one severity the order is nodejoin's, not pinned here.
			var got, want []string
			for i, f := range r.Findings {
				got = append(got, string(f.Severity)+" "+f.Object+" "+f.Reason)
				if i > 0 && rank(f.Severity) < rank(r.Findings[i-1].Severity) {
					t.Errorf("finding %d (%s) after a less severe one", i, f.Severity)
				}
			}
			for _, f := range tc.want {
				want = append(want, f.key())
			}
			if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%s", diff, text(r))
			}
			for _, w := range tc.want {
				f := r.Findings[slices.Index(got, w.key())]
				for _, s := range w.message {
					if !strings.Contains(f.Message, s) {
						t.Errorf("%s message %q lacks %q", w.key(), f.Message, s)
					}
				}
				for _, s := range w.fix {
					if !strings.Contains(f.Fix, s) {
						t.Errorf("%s fix %q lacks %q", w.key(), f.Fix, s)
					}
				}
			}
			wantErrors := slices.ContainsFunc(tc.want, func(f finding) bool { return f.severity == "Error" })
			if r.HasError() != wantErrors {
				t.Errorf("HasError = %v, want %v", r.HasError(), wantErrors)
			}
		})
	}
}

func text(r *Report) string {
	var b strings.Builder
	_ = r.WriteText(&b)
	return b.String()
}

// TestOfflineAccount: where the account id comes from, and which wins.
func TestOfflineAccount(t *testing.T) {
	for _, tc := range []struct {
		name       string
		files      []string
		o          Options
		account    string
		source     string
		controller string
	}{
		{"none", []string{"testdata/s1-without-aws-auth.yaml"}, Options{}, "", "", ""},
		{"IRSA annotation", []string{"testdata/controller-irsa.yaml"}, Options{}, "111122223333", "ServiceAccount kube-system/karpenter", "arn:aws:iam::111122223333:role/KarpenterControllerRole-demo"},
		{"Pod Identity association", []string{"testdata/controller-pod-identity.yaml"}, Options{}, "444455556666", "ServiceAccount kube-system/karpenter", "arn:aws:iam::444455556666:role/KarpenterControllerRole-demo"},
		{"aws-auth roles", []string{scenarios + "s1-unmapped-node-role.yaml"}, Options{}, "111122223333", "aws-auth", ""},
		{"--account wins", []string{"testdata/controller-irsa.yaml"}, Options{AccountID: "999988887777"}, "999988887777", "--account", "arn:aws:iam::111122223333:role/KarpenterControllerRole-demo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, err := ReadFiles(tc.files, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if obs.AccountID != tc.account || !strings.Contains(obs.AccountSource, tc.source) || obs.ControllerRoleARN != tc.controller {
				t.Errorf("account %q from %q, controller %q; want %q from %q, controller %q", obs.AccountID, obs.AccountSource, obs.ControllerRoleARN, tc.account, tc.source, tc.controller)
			}
		})
	}
}

// TestReadErrors: bad input is an error naming the file and the fix.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badYAML := write("bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
	noKind := write("nokind.yaml", "metadata:\n  name: x\n")
	unknownField := write("field.yaml", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: x\nspec:\n  amiFamly: AL2\n")
	badMapRoles := write("mr.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-auth\n  namespace: kube-system\ndata:\n  mapRoles:\n    a: b\n")
	for _, tc := range []struct {
		name  string
		files []string
		o     Options
		want  []string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, Options{}, []string{"nope.yaml", "no such file", "pass the path of a YAML or JSON manifest"}},
		{"bad YAML", []string{badYAML}, Options{}, []string{"bad.yaml", "correct the YAML"}},
		{"no kind", []string{noKind}, Options{}, []string{"nokind.yaml", "document 1 has no apiVersion or kind"}},
		{"unknown field", []string{unknownField}, Options{}, []string{"field.yaml", "EC2NodeClass x", "amiFamly", "correct or remove the field"}},
		{"mapRoles not a string", []string{badMapRoles}, Options{}, []string{"mr.yaml", "ConfigMap aws-auth", "data.mapRoles must be a string"}},
		{"bad account", []string{scenarios + "s5-arm64-nodepool.yaml"}, Options{AccountID: "1111"}, []string{"--account 1111", "12 digits"}},
		{"bad mode", []string{scenarios + "s5-arm64-nodepool.yaml"}, Options{AuthenticationMode: "CONFIGMAP"}, []string{"--authentication-mode CONFIGMAP", "API_AND_CONFIG_MAP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFiles(tc.files, tc.o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

// TestWriteText: the text report ranks findings and keeps multi-line fixes under them.
func TestWriteText(t *testing.T) {
	obs, err := ReadFiles([]string{scenarios + "s2-custom-ami-taint-args.yaml", scenarios + "s1-unmapped-node-role.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := text(Diagnose(obs))
	for _, s := range []string{
		"ERROR    ConfigMap/kube-system/aws-auth  AWSAuthMapsAnotherRole\n",
		"  Fix:\n    run aws eks create-access-entry",
		"\n    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo\n      username: system:node:{{EC2PrivateDNSName}}\n",
		"ADVICE   EC2NodeClass/custom-ami  UserDataCallsBootstrap",
		"account 111122223333 (from kube-system/aws-auth mapRoles",
		"of EC2NodeClass custom-ami, so its kubelets are Unauthorized and nodes never register (unless an EC2_LINUX access entry maps it: Joiner could not read the access entries). The same holds for EC2NodeClass default.",
		"offline check of 2 EC2NodeClasses, 2 NodePools, 5 pods: 2 errors, 0 warnings, 1 advice\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	if strings.Index(out, "ADVICE") < strings.LastIndex(out, "ERROR") {
		t.Errorf("advice before an error:\n%s", out)
	}
}
