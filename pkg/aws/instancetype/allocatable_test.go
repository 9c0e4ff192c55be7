package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

const (
	mi = int64(1024 * 1024)
	gi = 1024 * mi
)

// allocatable is what the test compares: cpu in millicores, memory and ephemeral storage in
// bytes, pods.
type allocatable struct {
	CPUMilli, Memory, Pods, Ephemeral int64
}

// Instance types as EC2 describes them (vCPUs, MiB, ENIs of the default card, IPv4 per ENI).
var (
	t3micro   = Info{Name: "t3.micro", VCPUs: 2, MemoryMiB: 1024, MaxENIs: 2, IPv4PerENI: 2}
	t3small   = Info{Name: "t3.small", VCPUs: 2, MemoryMiB: 2048, MaxENIs: 3, IPv4PerENI: 4}
	t3medium  = Info{Name: "t3.medium", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 6}
	t2small   = Info{Name: "t2.small", VCPUs: 1, MemoryMiB: 2048, MaxENIs: 3, IPv4PerENI: 4}
	t4gmedium = Info{Name: "t4g.medium", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 6}
	m5large   = Info{Name: "m5.large", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10}
	m5xlarge  = Info{Name: "m5.xlarge", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15}
	m54xlarge = Info{Name: "m5.4xlarge", VCPUs: 16, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30}
	c5large   = Info{Name: "c5.large", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10}
	c6gxlarge = Info{Name: "c6g.xlarge", VCPUs: 4, MemoryMiB: 8192, MaxENIs: 4, IPv4PerENI: 15}
	r52xlarge = Info{Name: "r5.2xlarge", VCPUs: 8, MemoryMiB: 65536, MaxENIs: 4, IPv4PerENI: 15}
)

// TestAllocatable checks allocatable against values worked out by hand from the formulas in
// docs/allocatable.md. Defaults: AL2023, VM overhead 7.5%, 20Gi root volume, so ephemeral storage
// is 20Gi - 1Gi kube-reserved - 2Gi (nodefs.available 10%) = 17Gi, and memory is
// MiB - ceil(MiB × 0.075) - (11 × pods + 255) - 100 (memory.available).
func TestAllocatable(t *testing.T) {
	tests := []struct {
		name    string
		info    Info
		family  string
		kubelet *awsv1.KubeletConfiguration
		want    allocatable
	}{
		// pods 2×(2−1)+2 = 4; cpu 2000 − (60+10) = 1930m; memory 1024 − 77 − 299 − 100 = 548Mi.
		{name: "t3.micro", info: t3micro, want: allocatable{1930, 548 * mi, 4, 17 * gi}},
		// pods 3×3+2 = 11; memory 2048 − 154 − 376 − 100 = 1418Mi.
		{name: "t3.small", info: t3small, want: allocatable{1930, 1418 * mi, 11, 17 * gi}},
		// pods 3×5+2 = 17; memory 4096 − 308 − 442 − 100 = 3246Mi.
		{name: "t3.medium", info: t3medium, want: allocatable{1930, 3246 * mi, 17, 17 * gi}},
		// one vCPU: cpu 1000 − 60 = 940m; memory as t3.small.
		{name: "t2.small", info: t2small, want: allocatable{940, 1418 * mi, 11, 17 * gi}},
		// arm64 makes no difference to the formulas.
		{name: "t4g.medium", info: t4gmedium, want: allocatable{1930, 3246 * mi, 17, 17 * gi}},
		// pods 3×9+2 = 29; memory 8192 − 615 − 574 − 100 = 6903Mi.
		{name: "m5.large", info: m5large, want: allocatable{1930, 6903 * mi, 29, 17 * gi}},
		// pods 4×14+2 = 58; cpu 4000 − (60+10+10) = 3920m; memory 16384 − 1229 − 893 − 100 = 14162Mi.
		{name: "m5.xlarge", info: m5xlarge, want: allocatable{3920, 14162 * mi, 58, 17 * gi}},
		// pods 8×29+2 = 234; cpu 16000 − (80 + 12000×0.25%) = 15890m; memory 65536 − 4916 − 2829 − 100 = 57691Mi.
		{name: "m5.4xlarge", info: m54xlarge, want: allocatable{15890, 57691 * mi, 234, 17 * gi}},
		// pods 29; memory 4096 − 308 − 574 − 100 = 3114Mi.
		{name: "c5.large", info: c5large, want: allocatable{1930, 3114 * mi, 29, 17 * gi}},
		// pods 58; memory 8192 − 615 − 893 − 100 = 6584Mi.
		{name: "c6g.xlarge", info: c6gxlarge, want: allocatable{3920, 6584 * mi, 58, 17 * gi}},
		// pods 58; cpu 8000 − (80 + 4000×0.25%) = 7910m; memory 65536 − 4916 − 893 − 100 = 59627Mi.
		{name: "r5.2xlarge", info: r52xlarge, want: allocatable{7910, 59627 * mi, 58, 17 * gi}},
		// maxPods 110: memory 7577 − (11×110+255 = 1465) − 100 = 6012Mi.
		{name: "m5.large maxPods 110", info: m5large, kubelet: &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)},
			want: allocatable{1930, 6012 * mi, 110, 17 * gi}},
		// AL2 reserves for the ENI-limited 29 pods whatever maxPods says: 7577 − 574 − 100.
		{name: "m5.large maxPods 110 on AL2", info: m5large, family: awsv1.AMIFamilyAL2, kubelet: &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)},
			want: allocatable{1930, 6903 * mi, 110, 17 * gi}},
		// podsPerCore 10 × 4 vCPUs = 40 < 58: memory 15155 − (11×40+255 = 695) − 100 = 14360Mi.
		{name: "m5.xlarge podsPerCore 10", info: m5xlarge, kubelet: &awsv1.KubeletConfiguration{PodsPerCore: ptr.To[int32](10)},
			want: allocatable{3920, 14360 * mi, 40, 17 * gi}},
		// kubeReserved cpu 200m replaces 70m; systemReserved 100m and 100Mi; eviction memory is the
		// larger of hard 5% (of 7577Mi ≈ 378.9Mi) and soft 500Mi; nodefs 15% of 20Gi = 3Gi.
		// cpu 2000 − 200 − 100 = 1700m; memory 7577 − 574 − 100 − 500 = 6403Mi; ephemeral 20 − 1 − 3 = 16Gi.
		{name: "m5.large with reservations", info: m5large, kubelet: &awsv1.KubeletConfiguration{
			KubeReserved:   map[string]awsv1.ReservedQuantity{"cpu": "200m"},
			SystemReserved: map[string]awsv1.ReservedQuantity{"cpu": "100m", "memory": "100Mi"},
			EvictionHard:   map[string]awsv1.EvictionThreshold{"memory.available": "5%", "nodefs.available": "15%"},
			EvictionSoft:   map[string]awsv1.EvictionThreshold{"memory.available": "500Mi"},
		}, want: allocatable{1700, 6403 * mi, 29, 16 * gi}},
		// evictionHard memory.available 10% of 7577Mi (7945060352 bytes) = ceil(794506035.2) bytes.
		{name: "m5.large eviction 10%", info: m5large, kubelet: &awsv1.KubeletConfiguration{
			EvictionHard: map[string]awsv1.EvictionThreshold{"memory.available": "10%"},
		}, want: allocatable{1930, (7577-574)*mi - 794506036, 29, 17 * gi}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			family := tt.family
			if family == "" {
				family = awsv1.AMIFamilyAL2023
			}
			s := Settings{Family: family, Kubelet: tt.kubelet, VMMemoryOverheadPercent: DefaultVMMemoryOverheadPercent, EphemeralStorage: resource.MustParse("20Gi")}
			overhead, err := Overhead(tt.info, s)
			if err != nil {
				t.Fatalf("Overhead: %v", err)
			}
			it := cloudprovider.InstanceType{Name: tt.info.Name, Capacity: Capacity(tt.info, s), Overhead: overhead}
			a := it.Allocatable()
			got := allocatable{
				CPUMilli:  ptr.To(a[corev1.ResourceCPU]).MilliValue(),
				Memory:    ptr.To(a[corev1.ResourceMemory]).Value(),
				Pods:      ptr.To(a[corev1.ResourcePods]).Value(),
				Ephemeral: ptr.To(a[corev1.ResourceEphemeralStorage]).Value(),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOverheadErrors(t *testing.T) {
	for _, k := range []*awsv1.KubeletConfiguration{
		{KubeReserved: map[string]awsv1.ReservedQuantity{"cpu": "lots"}},
		{SystemReserved: map[string]awsv1.ReservedQuantity{"memory": "1X"}},
		{EvictionHard: map[string]awsv1.EvictionThreshold{"memory.available": "x%"}},
	} {
		if _, err := Overhead(m5large, Settings{Kubelet: k, EphemeralStorage: resource.MustParse("20Gi")}); err == nil {
			t.Errorf("Overhead(%+v) succeeded, want an error", k)
		}
	}
}
