package instancetype

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// TestEphemeralStorageInstanceStore checks ephemeral-storage capacity and allocatable under
// instanceStorePolicy: RAID0 puts the kubelet's state on the instance-store array, so a type with
// instance-store disks counts their total size (EC2's GB, 10^9 bytes); a type without keeps the
// root volume, and without the policy the disks are not counted.
func TestEphemeralStorageInstanceStore(t *testing.T) {
	m5dlarge := Info{Name: "m5d.large", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10, InstanceStoreGB: 100}
	i3large := Info{Name: "i3.large", VCPUs: 2, MemoryMiB: 15616, MaxENIs: 3, IPv4PerENI: 10, InstanceStoreGB: 475}
	const gb = int64(1000 * 1000 * 1000)
	tests := []struct {
		name          string
		info          Info
		policy        awsv1.InstanceStorePolicy
		kubelet       *awsv1.KubeletConfiguration
		wantCapacity  int64
		wantAllocated int64
	}{
		// 100 GB − 1Gi kube-reserved − ceil(10% of 100 GB) nodefs.available.
		{name: "m5d.large RAID0", info: m5dlarge, policy: awsv1.InstanceStorePolicyRAID0,
			wantCapacity: 100 * gb, wantAllocated: 100*gb - gi - 10*gb},
		{name: "i3.large RAID0", info: i3large, policy: awsv1.InstanceStorePolicyRAID0,
			wantCapacity: 475 * gb, wantAllocated: 475*gb - gi - 47500000000},
		// kubeReserved ephemeral-storage and evictionHard nodefs.available apply to the array.
		{name: "i3.large RAID0 reservations", info: i3large, policy: awsv1.InstanceStorePolicyRAID0,
			kubelet: &awsv1.KubeletConfiguration{
				KubeReserved: map[string]awsv1.ReservedQuantity{"ephemeral-storage": "5Gi"},
				EvictionHard: map[string]awsv1.EvictionThreshold{"nodefs.available": "20%"},
			},
			wantCapacity: 475 * gb, wantAllocated: 475*gb - 5*gi - 95*gb},
		// No instance store: the root volume, 20Gi − 1Gi − 2Gi.
		{name: "m5.large RAID0", info: m5large, policy: awsv1.InstanceStorePolicyRAID0,
			wantCapacity: 20 * gi, wantAllocated: 17 * gi},
		// No policy: the disks are left alone and the root volume holds the kubelet's state.
		{name: "m5d.large without policy", info: m5dlarge,
			wantCapacity: 20 * gi, wantAllocated: 17 * gi},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Settings{Family: awsv1.AMIFamilyAL2023, Kubelet: tt.kubelet, VMMemoryOverheadPercent: DefaultVMMemoryOverheadPercent,
				EphemeralStorage: resource.MustParse("20Gi"), InstanceStorePolicy: tt.policy}
			overhead, err := Overhead(tt.info, s)
			if err != nil {
				t.Fatalf("Overhead: %v", err)
			}
			it := cloudprovider.InstanceType{Name: tt.info.Name, Capacity: Capacity(tt.info, s), Overhead: overhead}
			if got := ptr.To(it.Capacity[corev1.ResourceEphemeralStorage]).Value(); got != tt.wantCapacity {
				t.Errorf("ephemeral-storage capacity = %d, want %d", got, tt.wantCapacity)
			}
			if got := ptr.To(it.Allocatable()[corev1.ResourceEphemeralStorage]).Value(); got != tt.wantAllocated {
				t.Errorf("ephemeral-storage allocatable = %d, want %d", got, tt.wantAllocated)
			}
		})
	}
}

// TestListInstanceStoreRAID0 lists through EC2 (the emulator's catalogue) and checks that a pod
// asking for more ephemeral storage than the root volume fits the instance-store types only
// when the node class sets instanceStorePolicy: RAID0.
func TestListInstanceStoreRAID0(t *testing.T) {
	p, _, _ := newTestProvider(t)
	request := resource.MustParse("50Gi") // more than the 20Gi root volume, less than m5d.large's 100 GB
	fits := func(nodeClass *awsv1.EC2NodeClass) map[string]bool {
		its, err := p.List(t.Context(), nodeClass)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, it := range its {
			alloc := it.Allocatable()[corev1.ResourceEphemeralStorage]
			out[it.Name] = alloc.Cmp(request) >= 0
		}
		return out
	}
	plain := fits(&awsv1.EC2NodeClass{})
	raid := fits(&awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{InstanceStorePolicy: ptr.To(awsv1.InstanceStorePolicyRAID0)}})
	for name, want := range map[string]bool{"m5d.large": true, "i3.large": true, "c5d.large": true, "m5.large": false} {
		if plain[name] {
			t.Errorf("%s fits %s of ephemeral storage without instanceStorePolicy, want only its 20Gi root volume", name, request.String())
		}
		if raid[name] != want {
			t.Errorf("%s fits %s of ephemeral storage with instanceStorePolicy RAID0: %v, want %v", name, request.String(), raid[name], want)
		}
	}
}
