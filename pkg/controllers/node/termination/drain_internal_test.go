package termination

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func TestTierAndMustLeave(t *testing.T) {
	daemonSet := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}}
	tests := []struct {
		name      string
		pod       corev1.Pod
		wantTier  int
		wantLeave bool
	}{
		{name: "plain", pod: corev1.Pod{}, wantTier: tierDefault, wantLeave: true},
		{name: "critical", pod: corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "system-cluster-critical"}}, wantTier: tierCritical, wantLeave: true},
		{name: "daemonset", pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: daemonSet}}, wantTier: tierDaemonSet, wantLeave: true},
		{name: "critical daemonset", pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: daemonSet}, Spec: corev1.PodSpec{PriorityClassName: "system-node-critical"}}, wantTier: tierCriticalDaemonSet, wantLeave: true},
		{name: "succeeded", pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, wantTier: tierDefault, wantLeave: false},
		{name: "mirror", pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}}}, wantTier: tierDefault, wantLeave: false},
		{name: "tolerates disrupted", pod: corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: v1.DisruptedTaintKey, Operator: corev1.TolerationOpExists}}}}, wantTier: tierDefault, wantLeave: false},
		{name: "tolerates everything", pod: corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}, wantTier: tierDefault, wantLeave: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tier(&tt.pod); got != tt.wantTier {
				t.Errorf("tier = %d, want %d", got, tt.wantTier)
			}
			if got := mustLeave(&tt.pod); got != tt.wantLeave {
				t.Errorf("mustLeave = %v, want %v", got, tt.wantLeave)
			}
		})
	}
}
