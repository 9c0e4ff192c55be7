package podevents

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestChanged(t *testing.T) {
	now := metav1.Now()
	pod := func(nodeName string, edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if edit != nil {
			edit(p)
		}
		return p
	}
	daemon := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds", Controller: ptr.To(true)}}
	}
	mirror := func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }
	tests := []struct {
		name     string
		old, new *corev1.Pod
		want     string
	}{
		{"bound", pod("", nil), pod("n", nil), "n"},
		{"still unbound", pod("", nil), pod("", nil), ""},
		{"status change of a running pod", pod("n", nil), pod("n", func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.1" }), ""},
		{"succeeded", pod("n", nil), pod("n", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), "n"},
		{"failed", pod("n", nil), pod("n", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), "n"},
		{"terminating", pod("n", nil), pod("n", func(p *corev1.Pod) { p.DeletionTimestamp = &now }), "n"},
		{"daemonset pod bound", pod("", daemon), pod("n", daemon), ""},
		{"mirror pod terminating", pod("n", mirror), pod("n", func(p *corev1.Pod) { mirror(p); p.DeletionTimestamp = &now }), ""},
	}
	for _, tt := range tests {
		if got := changed(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: changed = %q, want %q", tt.name, got, tt.want)
		}
	}
}
