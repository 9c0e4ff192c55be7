package provider

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
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
		{alias: "al2@latest", userData: "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=team=a:NoSchedule,karpenter.sh/unregistered=:NoExecute,dedicated=batch:NoSchedule --node-labels=karpenter.sh/nodepool=general'\n",
			operatorTaint: corev1.Taint{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}},
	}
	for _, tt := range tests {
		t.Run(tt.alias+"/"+tt.operatorTaint.Key, func(t *testing.T) {
			e := newEnvWith(t, func(nc *awsv1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: tt.alias}}
				nc.Spec.UserData = &tt.userData
			})
			got, err := e.provider.Create(t.Context(), nodeClaim("boot", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
			if err != nil {
				t.Fatal(err)
			}
			id := instance.InstanceID(got.Status.ProviderID)
			api := &boot.FakeAPIServer{}
			kubelets := kubelets.New(e.state, e.clock, kubelets.Options{APIServer: api})
			e.clock.Step(state.PendingFor + state.BootDelay)
			if err := kubelets.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			var console []string
			e.state.View(func(w *state.World) { console = w.Regions["us-west-2"].Instances[id].Console })
			if len(api.Registered) != 1 {
				t.Fatalf("instance registered %d Nodes, want 1; console:\n%s", len(api.Registered), strings.Join(console, "\n"))
			}
			k := api.Registered[0].Spec
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
			if labels := api.Registered[0].Labels; labels[v1.NodePoolLabelKey] != "general" {
				t.Errorf("Node labels %v lack the nodepool", labels)
			}
		})
	}
}

// TestUserDataThatLosesTheTaint: an AL2 userData that calls bootstrap.sh itself without the
// required taint would boot a node Joiner never registers. Validation turns the class not Ready
// with the Problem's reason and fix, so Create refuses it; and Create itself refuses a Ready
// class with such userData (the class changed since the status was resolved) with the Problem,
// launching nothing.
func TestUserDataThatLosesTheTaint(t *testing.T) {
	userData := "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=team=a:NoSchedule'\n"
	e := newEnvAnyStatus(t, func(nc *awsv1.EC2NodeClass) {
		nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2@latest"}}
		nc.Spec.UserData = &userData
	})
	cond := meta.FindStatusCondition(e.nodeClass.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "UnregisteredTaintMissing" || !strings.Contains(cond.Message, "Fix:") {
		t.Errorf("ValidationSucceeded %+v, want False UnregisteredTaintMissing with a fix", cond)
	}
	claim := nodeClaim("lost", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large"))
	if _, err := e.provider.Create(t.Context(), claim); !cloudprovider.IsNodeClassNotReadyError(err) {
		t.Errorf("Create with the class not Ready: %v, want NodeClassNotReadyError", err)
	}

	meta.SetStatusCondition(&e.nodeClass.Status.Conditions, metav1.Condition{Type: awsv1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready"})
	if err := e.kube.Status().Update(t.Context(), e.nodeClass); err != nil {
		t.Fatal(err)
	}
	_, err := e.provider.Create(t.Context(), claim)
	ce := cloudprovider.AsCreateError(err)
	if ce == nil || ce.ConditionReason != "UnregisteredTaintMissing" || !strings.Contains(ce.ConditionMessage, "Fix:") {
		t.Fatalf("Create: %v, want a CreateError UnregisteredTaintMissing with a fix", err)
	}
	if list, _ := e.provider.List(t.Context()); len(list) != 0 {
		t.Errorf("%d instances launched", len(list))
	}
}
