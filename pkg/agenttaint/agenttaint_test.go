package agenttaint_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		taint corev1.Taint
		want  bool
	}{
		{taint("node.cilium.io/agent-not-ready", "true", corev1.TaintEffectNoExecute), true},
		// Agents remove by key: any effect or value is theirs.
		{taint("node.cilium.io/agent-not-ready", "", corev1.TaintEffectNoSchedule), true},
		{taint("cni.istio.io/not-ready", "true", corev1.TaintEffectNoSchedule), true},
		{taint("ebs.csi.aws.com/agent-not-ready", "", corev1.TaintEffectNoExecute), true},
		{taint("efs.csi.aws.com/agent-not-ready", "", corev1.TaintEffectNoExecute), true},
		{taint("node.kubernetes.io/network-unavailable", "", corev1.TaintEffectNoSchedule), true},
		{taint("node.cilium.io/agent-not-ready-x", "", corev1.TaintEffectNoSchedule), false},
		{taint("dedicated", "gpu", corev1.TaintEffectNoSchedule), false},
		{taint(v1.UnregisteredTaintKey, "", corev1.TaintEffectNoExecute), false},
	} {
		if got := agenttaint.Is(tc.taint); got != tc.want {
			t.Errorf("Is(%s) = %v, want %v", tc.taint.ToString(), got, tc.want)
		}
	}
}

func TestWithout(t *testing.T) {
	own := taint("dedicated", "ci", corev1.TaintEffectNoSchedule)
	cilium := taint("node.cilium.io/agent-not-ready", "true", corev1.TaintEffectNoExecute)
	in := []corev1.Taint{cilium, own, taint("ebs.csi.aws.com/agent-not-ready", "", corev1.TaintEffectNoExecute)}
	got := agenttaint.Without(in)
	if diff := cmp.Diff([]corev1.Taint{own}, got); diff != "" {
		t.Errorf("Without (-want +got):\n%s", diff)
	}
	if in[0] != cilium || len(in) != 3 {
		t.Errorf("Without modified its input: %v", in)
	}
	plain := []corev1.Taint{own}
	if got := agenttaint.Without(plain); &got[0] != &plain[0] {
		t.Errorf("Without copied a slice with no agent taint")
	}
}

func TestUndeclared(t *testing.T) {
	cilium := taint("node.cilium.io/agent-not-ready", "true", corev1.TaintEffectNoExecute)
	ebs := taint("ebs.csi.aws.com/agent-not-ready", "", corev1.TaintEffectNoExecute)
	network := taint("node.kubernetes.io/network-unavailable", "", corev1.TaintEffectNoSchedule)
	own := taint("dedicated", "ci", corev1.TaintEffectNoSchedule)
	for _, tc := range []struct {
		name              string
		observed, startup []corev1.Taint
		want              []corev1.Taint
	}{
		{name: "nothing observed"},
		{name: "operator's own taint is not advice", observed: []corev1.Taint{own}},
		{name: "undeclared cilium", observed: []corev1.Taint{own, cilium}, want: []corev1.Taint{cilium}},
		{name: "declared cilium", observed: []corev1.Taint{cilium}, startup: []corev1.Taint{cilium}},
		{name: "declared with another effect is not the same taint", observed: []corev1.Taint{cilium},
			startup: []corev1.Taint{taint(cilium.Key, "true", corev1.TaintEffectNoSchedule)}, want: []corev1.Taint{cilium}},
		{name: "the control plane's taint needs no declaration", observed: []corev1.Taint{network}},
		{name: "each once, in order", observed: []corev1.Taint{ebs, cilium, ebs}, want: []corev1.Taint{ebs, cilium}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, agenttaint.Undeclared(tc.observed, tc.startup)); diff != "" {
				t.Errorf("Undeclared (-want +got):\n%s", diff)
			}
		})
	}
}

// The YAML of the advice must be a NodePool fragment that declares exactly the taints.
func TestStartupTaintsYAMLRoundTrips(t *testing.T) {
	taints := []corev1.Taint{
		taint("node.cilium.io/agent-not-ready", "true", corev1.TaintEffectNoExecute),
		taint("ebs.csi.aws.com/agent-not-ready", "", corev1.TaintEffectNoExecute),
	}
	var np v1.NodePool
	if err := yaml.UnmarshalStrict([]byte(agenttaint.StartupTaintsYAML(taints)), &np); err != nil {
		t.Fatalf("advice YAML does not parse as a NodePool, %v", err)
	}
	if diff := cmp.Diff(taints, np.Spec.Template.Spec.StartupTaints); diff != "" {
		t.Errorf("startupTaints (-want +got):\n%s", diff)
	}
	msg := agenttaint.Advice("default", "on node ip-10-0-1-2", taints[:1])
	for _, want := range []string{"node.cilium.io/agent-not-ready=true:NoExecute", "Cilium", "NodePool default", "startupTaints:", "on node ip-10-0-1-2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("advice %q does not contain %q", msg, want)
		}
	}
}
