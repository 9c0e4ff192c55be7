package provider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/awsemu/legacyboot"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
)

// TestLaunchedNodesBootWithRequiredTaints launches through the provider for each AMI family,
// with operator userData that registers its own taint, lets the emulator boot the instance
// (reading the userData as the AMI would), and checks the kubelet registers with the required
// karpenter.sh/unregistered:NoExecute taint, the NodeClaim's taint and the operator's.
func TestLaunchedNodesBootWithRequiredTaints(t *testing.T) {
	tests := []struct {
		alias, userData string
		operatorTaint   corev1.Taint
	}{
		{alias: "al2023@latest", userData: `apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    flags:
      - --register-with-taints=team=a:NoSchedule
`, operatorTaint: corev1.Taint{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}},
		{alias: "bottlerocket@latest", userData: `[settings.kubernetes.node-taints]
"team" = ["a:NoSchedule"]
[settings.host-containers.admin]
enabled = true
`, operatorTaint: corev1.Taint{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}},
		{alias: "al2@latest", userData: "#!/bin/bash\necho preparing the host\n"},
	}
	for _, tt := range tests {
		t.Run(tt.alias, func(t *testing.T) {
			booter := legacyboot.NewBooter()
			e := newEnvWith(t, booter, func(nc *awsv1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: tt.alias}}
				nc.Spec.UserData = &tt.userData
			})
			got, err := e.provider.Create(t.Context(), nodeClaim("boot", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
			if err != nil {
				t.Fatal(err)
			}
			id := instance.InstanceID(got.Status.ProviderID)
			e.clock.Step(state.PendingFor + legacyboot.Delay)
			var console []string
			e.state.View(func(w *state.World) { console = w.Regions["us-west-2"].Instances[id].Console })
			k, ok := booter.Kubelet(id)
			if !ok {
				t.Fatalf("instance did not boot; console:\n%v", console)
			}
			want := []corev1.Taint{
				{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute},
				{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule},
			}
			if tt.operatorTaint.Key != "" {
				want = append(want, tt.operatorTaint)
			}
			for _, w := range want {
				found := false
				for _, have := range k.Taints {
					found = found || (have.Key == w.Key && have.Value == w.Value && have.Effect == w.Effect)
				}
				if !found {
					t.Errorf("kubelet taints %v lack %v", k.Taints, w)
				}
			}
			if k.Labels[v1.NodePoolLabelKey] != "general" {
				t.Errorf("kubelet labels %v lack the nodepool", k.Labels)
			}
		})
	}
}
