package cloudprovider_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

func TestAllocatable(t *testing.T) {
	tests := []struct {
		name     string
		it       cloudprovider.InstanceType
		wantText map[corev1.ResourceName]string
	}{
		{
			name: "capacity minus every overhead part",
			it: cloudprovider.InstanceType{
				Capacity: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("2"),
					corev1.ResourceMemory: resource.MustParse("8Gi"),
					corev1.ResourcePods:   resource.MustParse("29"),
				},
				Overhead: cloudprovider.Overhead{
					KubeReserved:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("70m"), corev1.ResourceMemory: resource.MustParse("442Mi")},
					SystemReserved:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
					EvictionThreshold: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")},
				},
			},
			wantText: map[corev1.ResourceName]string{corev1.ResourceCPU: "1830m", corev1.ResourceMemory: "7550Mi", corev1.ResourcePods: "29"},
		},
		{
			name: "never below zero",
			it: cloudprovider.InstanceType{
				Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Overhead: cloudprovider.Overhead{KubeReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
			},
			wantText: map[corev1.ResourceName]string{corev1.ResourceCPU: "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[corev1.ResourceName]string{}
			for name, q := range tt.it.Allocatable() {
				got[name] = q.String()
			}
			if diff := cmp.Diff(tt.wantText, got); diff != "" {
				t.Errorf("Allocatable (-want +got):\n%s", diff)
			}
		})
	}
}
