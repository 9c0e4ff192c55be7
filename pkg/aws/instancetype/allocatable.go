package instancetype

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Info is what EC2 reports of an instance type that its capacity depends on.
type Info struct {
	// Name is the instance type, such as m5.large.
	Name string
	// VCPUs is the default vCPU count.
	VCPUs int64
	// MemoryMiB is the memory EC2 advertises, in MiB.
	MemoryMiB int64
	// MaxENIs is the number of network interfaces of the default network card.
	MaxENIs int64
	// IPv4PerENI is the number of private IPv4 addresses per network interface.
	IPv4PerENI int64
	// Architecture is EC2's processor architecture: x86_64 or arm64.
	Architecture string
	// InstanceStoreGB is the total size of the instance-store disks, in GB (10^9 bytes), as EC2
	// reports it (InstanceStorageInfo.TotalSizeInGB); 0 when the type has none.
	InstanceStoreGB int64
}

// Settings are what the node class and the operator decide about capacity.
type Settings struct {
	// Family is the AMI family (awsv1.AMIFamilyAL2...): AL2 reserves kube memory for the
	// ENI-limited pod count whatever maxPods says, as its bootstrap.sh does.
	Family string
	// Kubelet is the EC2NodeClass spec.kubelet; nil for defaults.
	Kubelet *awsv1.KubeletConfiguration
	// VMMemoryOverheadPercent is the share of advertised memory the hypervisor and kernel keep
	// (0.075 by default, an operator option).
	VMMemoryOverheadPercent float64
	// EphemeralStorage is the size of the volume holding the kubelet's state (the root volume,
	// 20Gi by default).
	EphemeralStorage resource.Quantity
	// InstanceStorePolicy is the EC2NodeClass spec.instanceStorePolicy; "" when unset. With
	// RAID0, the kubelet's state lives on the instance-store array of the types that have one.
	InstanceStorePolicy awsv1.InstanceStorePolicy
}

// EphemeralStorage is the size of the filesystem holding the kubelet's state on the instance
// type: with instanceStorePolicy RAID0 and instance-store disks, their total size (EC2's GB,
// 10^9 bytes, as upstream Karpenter counts it; the RAID-0 array spans them all), else the root
// volume of the settings.
func EphemeralStorage(info Info, s Settings) resource.Quantity {
	if s.InstanceStorePolicy == awsv1.InstanceStorePolicyRAID0 && info.InstanceStoreGB > 0 {
		return *resource.NewQuantity(info.InstanceStoreGB*1000*1000*1000, resource.DecimalSI)
	}
	return s.EphemeralStorage.DeepCopy()
}

// DefaultVMMemoryOverheadPercent is the default of Settings.VMMemoryOverheadPercent.
const DefaultVMMemoryOverheadPercent = 0.075

// ENILimitedPods is the number of pods the AWS VPC CNI can give addresses to:
// ENIs × (IPv4 per ENI − 1) + 2 (the primary address of each ENI is the node's; two host-network
// pods need none).
func ENILimitedPods(info Info) int64 {
	return info.MaxENIs*(info.IPv4PerENI-1) + 2
}

// Pods is the node's pod capacity: spec.kubelet.maxPods, else the ENI-limited count; capped by
// podsPerCore × vCPUs when podsPerCore is set and not 0.
func Pods(info Info, kubelet *awsv1.KubeletConfiguration) int64 {
	pods := ENILimitedPods(info)
	if kubelet != nil && kubelet.MaxPods != nil {
		pods = int64(*kubelet.MaxPods)
	}
	if kubelet != nil && kubelet.PodsPerCore != nil && *kubelet.PodsPerCore > 0 {
		pods = min(pods, int64(*kubelet.PodsPerCore)*info.VCPUs)
	}
	return pods
}

// Capacity is the node's capacity: vCPUs, advertised memory less ceil(MiB × overhead percent)
// MiB, pods, and the ephemeral storage (EphemeralStorage).
func Capacity(info Info, s Settings) corev1.ResourceList {
	overheadMiB := int64(math.Ceil(float64(info.MemoryMiB) * s.VMMemoryOverheadPercent))
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(info.VCPUs, resource.DecimalSI),
		corev1.ResourceMemory:           mebibytes(info.MemoryMiB - overheadMiB),
		corev1.ResourcePods:             *resource.NewQuantity(Pods(info, s.Kubelet), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: EphemeralStorage(info, s),
	}
}

// KubeReserved is the EKS formula, each resource replaced by spec.kubelet.kubeReserved when set:
// cpu 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25% of every other
// (in millicores, fractions dropped per range); memory 11 MiB per pod + 255 MiB (pods being the
// ENI-limited count on AL2); ephemeral-storage 1Gi.
func KubeReserved(info Info, s Settings) (corev1.ResourceList, error) {
	pods := Pods(info, s.Kubelet)
	if s.Family == awsv1.AMIFamilyAL2 {
		pods = ENILimitedPods(info)
	}
	cpuMilli := info.VCPUs * 1000
	var reservedMilli int64
	for _, r := range []struct {
		start, end int64
		percent    float64
	}{{0, 1000, 6}, {1000, 2000, 1}, {2000, 4000, 0.5}, {4000, math.MaxInt64, 0.25}} {
		if cpuMilli <= r.start {
			break
		}
		reservedMilli += int64(float64(min(cpuMilli, r.end)-r.start) * r.percent / 100)
	}
	reserved := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(reservedMilli, resource.DecimalSI),
		corev1.ResourceMemory:           mebibytes(11*pods + 255),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
	}
	if s.Kubelet != nil {
		if err := override(reserved, s.Kubelet.KubeReserved); err != nil {
			return nil, fmt.Errorf("spec.kubelet.kubeReserved, %w", err)
		}
	}
	return reserved, nil
}

// SystemReserved is spec.kubelet.systemReserved; nothing by default.
func SystemReserved(s Settings) (corev1.ResourceList, error) {
	reserved := corev1.ResourceList{}
	if s.Kubelet != nil {
		if err := override(reserved, s.Kubelet.SystemReserved); err != nil {
			return nil, fmt.Errorf("spec.kubelet.systemReserved, %w", err)
		}
	}
	return reserved, nil
}

// EvictionThreshold is the memory and ephemeral storage the kubelet's eviction thresholds keep
// free: by default memory.available 100Mi and nodefs.available 10%; when spec.kubelet sets
// evictionHard or evictionSoft for a signal, the larger of the two replaces the default.
// Percentages are of the capacity (memory after the VM overhead), rounded up to a byte.
func EvictionThreshold(capacity corev1.ResourceList, s Settings) (corev1.ResourceList, error) {
	memory, storage := capacity[corev1.ResourceMemory], capacity[corev1.ResourceEphemeralStorage]
	threshold := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("100Mi"),
		corev1.ResourceEphemeralStorage: percentOf(storage, 10),
	}
	if s.Kubelet == nil {
		return threshold, nil
	}
	for signal, name := range map[string]corev1.ResourceName{"memory.available": corev1.ResourceMemory, "nodefs.available": corev1.ResourceEphemeralStorage} {
		base := memory
		if name == corev1.ResourceEphemeralStorage {
			base = storage
		}
		var largest *resource.Quantity
		for _, set := range []map[string]awsv1.EvictionThreshold{s.Kubelet.EvictionHard, s.Kubelet.EvictionSoft} {
			value, ok := set[signal]
			if !ok {
				continue
			}
			q, err := thresholdQuantity(base, string(value))
			if err != nil {
				return nil, fmt.Errorf("eviction threshold %s=%s, %w", signal, value, err)
			}
			if largest == nil || q.Cmp(*largest) > 0 {
				largest = &q
			}
		}
		if largest != nil {
			threshold[name] = *largest
		}
	}
	return threshold, nil
}

// Overhead is the kube-reserved, system-reserved and eviction parts of an instance type under
// the settings.
func Overhead(info Info, s Settings) (cloudprovider.Overhead, error) {
	kube, err := KubeReserved(info, s)
	if err != nil {
		return cloudprovider.Overhead{}, err
	}
	system, err := SystemReserved(s)
	if err != nil {
		return cloudprovider.Overhead{}, err
	}
	eviction, err := EvictionThreshold(Capacity(info, s), s)
	if err != nil {
		return cloudprovider.Overhead{}, err
	}
	return cloudprovider.Overhead{KubeReserved: kube, SystemReserved: system, EvictionThreshold: eviction}, nil
}

func override[V ~string](list corev1.ResourceList, values map[string]V) error {
	for name, value := range values {
		q, err := resource.ParseQuantity(string(value))
		if err != nil {
			return fmt.Errorf("%s=%s, %w", name, value, err)
		}
		list[corev1.ResourceName(name)] = q
	}
	return nil
}

// thresholdQuantity reads an eviction threshold: a quantity, or a percentage of base.
func thresholdQuantity(base resource.Quantity, value string) (resource.Quantity, error) {
	if p, ok := strings.CutSuffix(value, "%"); ok {
		percent, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return resource.Quantity{}, err
		}
		return percentOf(base, percent), nil
	}
	return resource.ParseQuantity(value)
}

// percentOf is percent % of q in bytes (or units), rounded up.
func percentOf(q resource.Quantity, percent float64) resource.Quantity {
	return *resource.NewQuantity(int64(math.Ceil(float64(q.Value())*percent/100)), resource.BinarySI)
}

func mebibytes(n int64) resource.Quantity {
	return *resource.NewQuantity(n*1024*1024, resource.BinarySI)
}
