package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEvictionCost(t *testing.T) {
	pod := func(deletionCost string, priority *int32) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{Priority: priority}}
		if deletionCost != "" {
			p.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{corev1.PodDeletionCost: deletionCost}}
		}
		return p
	}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want float64
	}{
		{name: "plain", pod: pod("", nil), want: 1},
		{name: "deletion-cost", pod: pod("134217728", nil), want: 2}, // 2^27
		{name: "negative-deletion-cost", pod: pod("-134217728", nil), want: 0},
		{name: "unreadable-deletion-cost", pod: pod("lots", nil), want: 1},
		{name: "priority", pod: pod("", new(int32(1<<25))), want: 2},
		{name: "system-critical-clamped", pod: pod("", new(int32(2000001000))), want: 10},
	} {
		if got := evictionCost(tt.pod); got != tt.want {
			t.Errorf("%s: evictionCost = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Two cheap pods go before one expensive one.
	cheap := &candidate{node: nil, pods: []*corev1.Pod{pod("-134217728", nil), pod("-134217728", nil)}}
	dear := &candidate{pods: []*corev1.Pod{pod("134217728", nil)}}
	if podsCost(cheap.pods) >= podsCost(dear.pods) {
		t.Errorf("podsCost(two pods of deletion cost -2^27) = %v, not below one pod of 2^27 (%v)", podsCost(cheap.pods), podsCost(dear.pods))
	}
}
