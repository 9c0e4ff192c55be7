package lifecycle

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNotReadyMessage(t *testing.T) {
	ready := func(status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message}
	}
	tests := []struct {
		name       string
		conditions []corev1.NodeCondition
		want       []string
		notWant    []string
	}{
		{
			name: "no Ready condition yet",
			want: []string{"Node n1 is not Ready", "has not reported a Ready condition"},
		},
		{
			name: "VPC CNI not started",
			conditions: []corev1.NodeCondition{ready(corev1.ConditionFalse, "KubeletNotReady",
				"container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized")},
			want: []string{"Ready=False, KubeletNotReady", "cni plugin not initialized", "aws-node", "spec.nodeName=n1", "AmazonEKS_CNI_Policy", "free IP addresses"},
		},
		{
			name:       "container runtime down",
			conditions: []corev1.NodeCondition{ready(corev1.ConditionFalse, "KubeletNotReady", "container runtime is down")},
			want:       []string{"(containerd) is not running"},
			notWant:    []string{"aws-node"},
		},
		{
			name:       "PLEG",
			conditions: []corev1.NodeCondition{ready(corev1.ConditionFalse, "KubeletNotReady", "PLEG is not healthy: pleg was last seen active 3m0s ago")},
			want:       []string{"pod lifecycle event generator"},
		},
		{
			name: "kubelet stopped posting, with memory pressure",
			conditions: []corev1.NodeCondition{
				ready(corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."),
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse},
			},
			want:    []string{"Ready=Unknown, NodeStatusUnknown", "also reports MemoryPressure", "stopped reporting", "security groups"},
			notWant: []string{"DiskPressure"},
		},
		{
			name:       "an unknown kubelet message is quoted without a guess",
			conditions: []corev1.NodeCondition{ready(corev1.ConditionFalse, "KubeletNotReady", "something new")},
			want:       []string{"KubeletNotReady): something new"},
			notWant:    []string{"Likely cause"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := &corev1.Node{}
			node.Name = "n1"
			node.Status.Conditions = tt.conditions
			got := notReadyMessage(node)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("message %q does not contain %q", got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("message %q contains %q", got, w)
				}
			}
		})
	}
}

func TestTaintsLeftMessageNamesTheAgent(t *testing.T) {
	node := &corev1.Node{}
	node.Name = "n1"
	got := taintsLeftMessage(node, []corev1.Taint{
		{Key: "ebs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute},
		{Key: "example.com/custom", Value: "x", Effect: corev1.TaintEffectNoSchedule},
	})
	for _, w := range []string{"ebs.csi.aws.com/agent-not-ready:NoExecute", "example.com/custom=x:NoSchedule", "Amazon EBS CSI driver removes ebs.csi.aws.com/agent-not-ready"} {
		if !strings.Contains(got, w) {
			t.Errorf("message %q does not contain %q", got, w)
		}
	}
	if strings.Contains(got, "example.com/custom once") {
		t.Errorf("message %q names an agent for a taint no catalogued agent removes", got)
	}
}
