package userdata

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

func TestReadRegistration(t *testing.T) {
	const sh = "#!/bin/bash\nset -ex\n"
	unregistered := corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}
	gpu := corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	const taintFlag = "--register-with-taints=karpenter.sh/unregistered:NoExecute"
	mime := mimeDocument
	tests := []struct {
		name     string
		family   string
		userData string
		want     Registration
	}{
		{name: "AL2 two words, single quotes", family: awsv1.AMIFamilyAL2,
			userData: sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + " --node-labels=a=b'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{"a": "b"}, KubeletFlags: []string{taintFlag, "--node-labels=a=b"}}},
		{name: "AL2 double quotes inside single quotes, removed by systemd", family: awsv1.AMIFamilyAL2,
			userData: sh + `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints="karpenter.sh/unregistered:NoExecute,gpu=true:NoSchedule"'` + "\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{gpu, unregistered}, Labels: map[string]string{}, KubeletFlags: []string{"--register-with-taints=karpenter.sh/unregistered:NoExecute,gpu=true:NoSchedule"}}},
		{name: "AL2 escaped double quotes in double quotes", family: awsv1.AMIFamilyAL2,
			userData: sh + `/etc/eks/bootstrap.sh demo --kubelet-extra-args "--node-labels=\"a=b c\" ` + taintFlag + `"` + "\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{"a": "b c"}, KubeletFlags: []string{"--node-labels=a=b c", taintFlag}}},
		{name: "AL2 $'...' quoting", family: awsv1.AMIFamilyAL2,
			userData: sh + `/etc/eks/bootstrap.sh demo --kubelet-extra-args $'--node-labels=x=y\t` + taintFlag + `'` + "\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{"x": "y"}, KubeletFlags: []string{"--node-labels=x=y", taintFlag}}},
		{name: "AL2 single word option is ignored by bootstrap.sh", family: awsv1.AMIFamilyAL2,
			userData: sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args='" + taintFlag + "'\n",
			want:     Registration{Starts: true, Labels: map[string]string{}}},
		{name: "AL2 variables, += and ${X:-default}", family: awsv1.AMIFamilyAL2,
			userData: sh + "LABELS=\"${LABELS:-team=web}\"\nARGS=\"--node-labels=$LABELS\"\nARGS+=' " + taintFlag + "'\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{"team": "web"}, KubeletFlags: []string{"--node-labels=team=web", taintFlag}}},
		{name: "AL2 exported KUBELET_EXTRA_ARGS", family: awsv1.AMIFamilyAL2,
			userData: sh + "export KUBELET_EXTRA_ARGS='" + taintFlag + "'\n/etc/eks/bootstrap.sh demo\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 KUBELET_EXTRA_ARGS not exported does not reach bootstrap.sh", family: awsv1.AMIFamilyAL2,
			userData: sh + "KUBELET_EXTRA_ARGS='" + taintFlag + "'\n/etc/eks/bootstrap.sh demo\n",
			want:     Registration{Starts: true, Labels: map[string]string{}}},
		{name: "AL2 through a function", family: awsv1.AMIFamilyAL2,
			userData: sh + "join() {\n  local args=\"$2\"\n  /etc/eks/bootstrap.sh \"$1\" --kubelet-extra-args \"$args\"\n}\njoin demo '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 a function never called starts nothing", family: awsv1.AMIFamilyAL2,
			userData: sh + "join() {\n  /etc/eks/bootstrap.sh demo\n}\n",
			want:     Registration{}},
		{name: "AL2 a here-document is not a call", family: awsv1.AMIFamilyAL2,
			userData: sh + "cat <<'EOF' > /tmp/notes\n/etc/eks/bootstrap.sh demo\nEOF\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 set -o errexit and a [[ ]] known false ends the script", family: awsv1.AMIFamilyAL2,
			userData: "#!/bin/bash\nset -o errexit\nA=1\n[[ $A == 2 ]]\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{}},
		{name: "AL2 set -e: a command whose status only the boot knows is taken to succeed", family: awsv1.AMIFamilyAL2,
			userData: sh + "yum install -y jq\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 set -e is not inherited by bash -c", family: awsv1.AMIFamilyAL2,
			userData: sh + "bash -c 'false; /etc/eks/bootstrap.sh demo --kubelet-extra-args " + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 without set -e a failing command does not stop the script", family: awsv1.AMIFamilyAL2,
			userData: "#!/bin/bash\nfalse\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 set -e: a failure in a branch only the boot decides leaves the call conditional", family: awsv1.AMIFamilyAL2,
			userData: sh + "if [ -f /etc/x ]; then false; fi\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 a script written by a here-document and run by path", family: awsv1.AMIFamilyAL2,
			userData: sh + "cat <<'EOF' > /root/join.sh\n#!/bin/bash\n/etc/eks/bootstrap.sh \"$@\"\nEOF\nchmod +x /root/join.sh\n/root/join.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 a written script run with bash sees exported variables only", family: awsv1.AMIFamilyAL2,
			userData: sh + "ARGS='" + taintFlag + "'\nexport KUBELET_EXTRA_ARGS='--v=2'\ncat <<'EOF' > join.sh\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"${ARGS:-$KUBELET_EXTRA_ARGS}\"\nEOF\nbash -x ./join.sh\n",
			want:     Registration{Starts: true, Labels: map[string]string{}, KubeletFlags: []string{"--v=2"}}},
		{name: "AL2 an exit in a written script ends it, not the userData", family: awsv1.AMIFamilyAL2,
			userData: sh + "printf x > /tmp/x\necho 'exit 0' > /root/pre.sh\nbash /root/pre.sh\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 a file appended to, then sourced", family: awsv1.AMIFamilyAL2,
			userData: sh + "echo 'A=--node-labels=x=y' > /root/env\necho \"A+=' " + taintFlag + "'\" >> /root/env\nsource /root/env\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$A\"\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{"x": "y"}, KubeletFlags: []string{"--node-labels=x=y", taintFlag}}},
		{name: "AL2 the last call wins", family: awsv1.AMIFamilyAL2,
			userData: sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--v=2'\n",
			want:     Registration{Starts: true, Labels: map[string]string{}, KubeletFlags: []string{"--v=2"}}},
		{name: "AL2 exit before the call", family: awsv1.AMIFamilyAL2,
			userData: sh + "exit 0\n/etc/eks/bootstrap.sh demo\n",
			want:     Registration{}},
		{name: "AL2 a variable set in a subshell does not count", family: awsv1.AMIFamilyAL2,
			userData: sh + "ARGS='" + taintFlag + "'\n( ARGS='--v=2' )\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 eval of known text", family: awsv1.AMIFamilyAL2,
			userData: sh + "CMD=\"/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\"\neval \"$CMD\"\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 bash -c", family: awsv1.AMIFamilyAL2,
			userData: sh + "sudo bash -c \"/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\"\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 MIME with a cloud-config part first", family: awsv1.AMIFamilyAL2,
			userData: mime("Content-Type: text/cloud-config\n\n#cloud-config\npackages: [jq]\n", "Content-Type: text/x-shellscript\n\n"+sh+"/etc/eks/bootstrap.sh demo --kubelet-extra-args '"+taintFlag+"'\n"),
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2023 NodeConfig flags override config registerWithTaints", family: awsv1.AMIFamilyAL2023,
			userData: mime("Content-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute\n    flags:\n    - --node-labels=a=b\n    - --register-with-taints=gpu=true:NoSchedule\n"),
			want:     Registration{Starts: true, Taints: []corev1.Taint{gpu}, Labels: map[string]string{"a": "b"}, KubeletFlags: []string{"--node-labels=a=b", "--register-with-taints=gpu=true:NoSchedule"}}},
		{name: "AL2023 every NodeConfig's flags are appended; labels add up, the last taints win", family: awsv1.AMIFamilyAL2023,
			userData: mime("Content-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n    - --register-with-taints=gpu=true:NoSchedule\n    - --node-labels=a=b,x=1\n",
				"Content-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n    - --node-labels=\"c=d,x=2\"\n    - "+taintFlag+"\n"),
			want: Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{"a": "b", "c": "d", "x": "2"},
				KubeletFlags: []string{"--register-with-taints=gpu=true:NoSchedule", "--node-labels=a=b,x=1", "--node-labels=c=d,x=2", taintFlag}}},
		{name: "AL2 labels of every --node-labels add up", family: awsv1.AMIFamilyAL2,
			userData: sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--node-labels=a=b --node-labels c=d " + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{"a": "b", "c": "d"}, KubeletFlags: []string{"--node-labels=a=b", "--node-labels", "c=d", taintFlag}}},
		{name: "AL2023 config registerWithTaints alone", family: awsv1.AMIFamilyAL2023,
			userData: "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}}},
		{name: "Bottlerocket with unknown settings", family: awsv1.AMIFamilyBottlerocket,
			userData: bottlerocketOperatorTOML + "\n[settings.kubernetes.node-labels]\n\"team\" = \"gpu\"\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}, {Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}, Labels: map[string]string{"team": "gpu"}}},
		{name: "AL2 a call in a branch registers as read, or not at all", family: awsv1.AMIFamilyAL2,
			userData: sh + "if [ -x /etc/eks/bootstrap.sh ]; then\n  /etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\nfi\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "AL2 a condition on known values picks the branch", family: awsv1.AMIFamilyAL2,
			userData: sh + "MODE=gpu\nif [[ $MODE == gpu ]]; then\n  ARGS='--register-with-taints=gpu=true:NoSchedule'\nelse\n  ARGS='" + taintFlag + "'\nfi\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{gpu}, Labels: map[string]string{}, KubeletFlags: []string{"--register-with-taints=gpu=true:NoSchedule"}}},
		{name: "AL2 a call after && on a command", family: awsv1.AMIFamilyAL2,
			userData: sh + "yum install -y jq && /etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
		{name: "Custom reads a bootstrap.sh call", family: awsv1.AMIFamilyCustom,
			userData: sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			want:     Registration{Starts: true, Taints: []corev1.Taint{unregistered}, Labels: map[string]string{}, KubeletFlags: []string{taintFlag}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadRegistration(tt.family, tt.userData)
			if err != nil {
				t.Fatalf("ReadRegistration: %v", err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(Registration{}, "Source"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("registration (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadRegistrationUnknown checks that what only the boot knows is said to be unknown.
func TestReadRegistrationUnknown(t *testing.T) {
	const sh = "#!/bin/bash\n"
	const taintFlag = "--register-with-taints=karpenter.sh/unregistered:NoExecute"
	for name, userData := range map[string]string{
		"command substitution":                          sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$(cat /etc/args)\"\n",
		"backquotes":                                    sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args \"`cat /etc/args`\"\n",
		"a variable never assigned":                     sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$EXTRA\"\n",
		"an unquoted unknown before":                    sh + "/etc/eks/bootstrap.sh demo $(cat /etc/opts) --kubelet-extra-args '" + taintFlag + "'\n",
		"set in one branch only":                        sh + "ARGS='" + taintFlag + "'\nif grep -q gpu /etc/x; then ARGS='--v=2'; fi\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n",
		"a conditional call after another":              sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\nif grep -q gpu /proc/cpuinfo; then\n  /etc/eks/bootstrap.sh demo --kubelet-extra-args '--v=2'\nfi\n",
		"a call on a condition on an unknown value":     sh + "/etc/eks/bootstrap.sh demo\nif [ \"$(cat /etc/mode)\" = gpu ]; then\n  /etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\nfi\n",
		"after source":                                  sh + "ARGS='" + taintFlag + "'\nsource /etc/profile.d/custom.sh\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n",
		"read from input":                               sh + "read -r ARGS < /etc/args\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n",
		"a drop-in written in a here-document":          sh + "cat > /etc/systemd/system/kubelet.service.d/90-taints.conf <<'EOF'\n[Service]\nEnvironment='KUBELET_EXTRA_ARGS=--register-with-taints=a=b:NoSchedule'\nEOF\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
		"an earlier part edits bootstrap.sh":            "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/x-shellscript\n\n" + sh + "sed -i 's/x/y/' /etc/eks/bootstrap.sh\n--B\nContent-Type: text/x-shellscript\n\n" + sh + "/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n--B--\n",
		"the script edits bootstrap.sh":                 sh + "sed -i 's/x/y/' /etc/eks/bootstrap.sh\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
		"the script rewrites bootstrap.sh":              sh + "cat > /etc/eks/bootstrap.sh <<'EOF'\necho hi\nEOF\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
		"a script it downloads and runs":                sh + "curl -fsSL -o /root/join.sh https://example.com/join.sh\nbash /root/join.sh demo\n",
		"a script it copies and runs by path":           sh + "cp /opt/join.sh /root/join.sh\n/root/join.sh demo\n",
		"a script written in a branch the boot decides": sh + "if grep -q gpu /proc/cpuinfo; then\n  echo '/etc/eks/bootstrap.sh demo' > /root/join.sh\nfi\nsh /root/join.sh\n",
		"a written script for another interpreter":      sh + "cat > /root/join.py <<'EOF'\n#!/usr/bin/python3\nimport os\nEOF\n/root/join.py\n",
		"a written script with unknown content":         sh + "cat > /root/join.sh <<EOF\n/etc/eks/bootstrap.sh $(cat /etc/name)\nEOF\n/root/join.sh\n",
		"sourcing a file with unknown content":          sh + "ARGS='" + taintFlag + "'\ncp /opt/env /root/env\n. /root/env\n/etc/eks/bootstrap.sh demo --kubelet-extra-args \"$ARGS\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ReadRegistration(awsv1.AMIFamilyAL2, userData)
			if err != nil {
				t.Fatalf("ReadRegistration: %v", err)
			}
			if got.Unknown == "" {
				t.Errorf("registration is not marked unknown: %v", got)
			}
		})
	}
}

// TestReadRegistrationOfRenderedUserData reads what Render writes: the node registers with the
// required taints and the NodePool's labels, in every family.
func TestReadRegistrationOfRenderedUserData(t *testing.T) {
	for _, family := range []string{awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2023, awsv1.AMIFamilyBottlerocket} {
		t.Run(family, func(t *testing.T) {
			opts := baseOptions(family, "")
			res, err := Render(opts)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got, err := ReadRegistration(family, res.UserData)
			if err != nil {
				t.Fatalf("ReadRegistration: %v", err)
			}
			if !got.Starts || got.Unknown != "" {
				t.Fatalf("registration = %v, want a known one", got)
			}
			if diff := cmp.Diff(opts.requiredTaints(), got.Taints); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(opts.kubeletLabels(), got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckCustomNodeadmAppendsFlags: nodeadm appends the kubelet flags of every NodeConfig, so
// a later NodeConfig without --register-with-taints does not drop an earlier one's.
func TestCheckCustomNodeadmAppendsFlags(t *testing.T) {
	doc := func(flags string) string {
		return "---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n" + flags
	}
	withTaint := doc("    - --register-with-taints=karpenter.sh/unregistered:NoExecute\n") + doc("    - --v=2\n")
	if got := CheckCustom(withTaint); len(got) != 0 {
		t.Errorf("CheckCustom = %v, want nothing: the flags are appended and the taint stays", got)
	}
	overridden := doc("    - --register-with-taints=karpenter.sh/unregistered:NoExecute\n") + doc("    - --register-with-taints=gpu=true:NoSchedule\n")
	if diff := cmp.Diff([]finding{{SeverityProblem, "UnregisteredTaintMissing"}}, findings(CheckCustom(overridden))); diff != "" {
		t.Errorf("a later --register-with-taints replaces the taints (-want +got):\n%s", diff)
	}
}

// A kubelet given a --register-with-taints entry it cannot parse exits at startup, so the node
// never registers: the reading says no kubelet starts, and why.
func TestReadRegistrationInvalidTaint(t *testing.T) {
	for family, userData := range map[string]string{
		awsv1.AMIFamilyAL2023: "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n    - \"--register-with-taints=team=a:NoScedule\"\n",
		awsv1.AMIFamilyAL2:    "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=team=a:NoScedule'\n",
		awsv1.AMIFamilyCustom: "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute --register-with-taints=team=a:NoScedule'\n",
	} {
		t.Run(family, func(t *testing.T) {
			got, err := ReadRegistration(family, userData)
			if err != nil {
				t.Fatalf("ReadRegistration: %v", err)
			}
			if got.Starts || got.Unknown != "" || !strings.Contains(got.Source, `"team=a:NoScedule"`) {
				t.Errorf("want a kubelet that refuses to start on team=a:NoScedule, got %v", got)
			}
		})
	}
}
