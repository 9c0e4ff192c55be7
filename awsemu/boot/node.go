package boot

import (
	"cmp"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultMaxPods is the kubelet's maxPods when nothing sets it.
const defaultMaxPods = 110

// ProviderID returns the providerID the AWS cloud provider gives the instance's Node:
// aws:///ZONE/ID.
func ProviderID(in Instance) string {
	return fmt.Sprintf("aws:///%s/%s", in.Zone, in.ID)
}

// NodeFor returns the Node a kubelet configured by reg registers for the instance, as it looks
// once the cloud provider has initialised it: named after the private DNS name (or the
// kubelet's --hostname-override), with the providerID, the kubelet's and the cloud provider's
// well-known labels (--node-labels override the kubelet's own, the cloud provider's override
// both), the registration taints, capacity from the instance, allocatable minus kube-reserved
// and the eviction threshold, and a Ready condition stamped now.
//
// Approximation: the node.cloudprovider.kubernetes.io/uninitialized taint that an external
// cloud provider adds and removes is not shown; the Node is returned already initialised.
func NodeFor(in Instance, reg *KubeletRegistration, kubeletVersion string, now time.Time) *corev1.Node {
	name := cmp.Or(reg.HostnameOverride, in.PrivateDNSName)
	labels := map[string]string{
		corev1.LabelHostname:      name,
		corev1.LabelOSStable:      "linux",
		corev1.LabelArchStable:    in.Architecture,
		"beta.kubernetes.io/os":   "linux",
		"beta.kubernetes.io/arch": in.Architecture,
	}
	maps.Copy(labels, reg.Labels)
	maps.Copy(labels, map[string]string{
		corev1.LabelInstanceTypeStable:      in.InstanceType,
		corev1.LabelInstanceType:            in.InstanceType,
		corev1.LabelTopologyZone:            in.Zone,
		corev1.LabelTopologyRegion:          in.Region,
		corev1.LabelFailureDomainBetaZone:   in.Zone,
		corev1.LabelFailureDomainBetaRegion: in.Region,
	})
	capacity, allocatable := resourcesFor(in, reg)
	ts := metav1.NewTime(now)
	if kubeletVersion != "" && !strings.HasPrefix(kubeletVersion, "v") {
		kubeletVersion = "v" + kubeletVersion + ".0-eks"
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: labels,
			Annotations: map[string]string{
				"alpha.kubernetes.io/provided-node-ip":                   in.PrivateIP,
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: ProviderID(in),
			Taints:     append([]corev1.Taint(nil), reg.Taints...),
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Conditions: []corev1.NodeCondition{
				pressure(corev1.NodeMemoryPressure, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", ts),
				pressure(corev1.NodeDiskPressure, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", ts),
				pressure(corev1.NodePIDPressure, "KubeletHasSufficientPID", "kubelet has sufficient PID available", ts),
				{
					Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
					Message: "kubelet is posting ready status", LastHeartbeatTime: ts, LastTransitionTime: ts,
				},
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: in.PrivateIP},
				{Type: corev1.NodeHostName, Address: name},
				{Type: corev1.NodeInternalDNS, Address: in.PrivateDNSName},
			},
			NodeInfo: corev1.NodeSystemInfo{
				Architecture: in.Architecture, OperatingSystem: "linux",
				KubeletVersion: kubeletVersion, ContainerRuntimeVersion: "containerd://1.7.27",
				SystemUUID: in.ID, BootID: in.ID,
			},
		},
	}
}

func pressure(t corev1.NodeConditionType, reason, msg string, ts metav1.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastHeartbeatTime: ts, LastTransitionTime: ts}
}

// resourcesFor computes capacity and allocatable the way EKS AMIs configure the kubelet:
// kube-reserved CPU of 6% of the first core, 1% of the second, 0.5% of the next two and 0.25%
// of the rest; kube-reserved memory of 11Mi per pod plus 255Mi; a 100Mi memory eviction
// threshold; 1Gi of reserved and 10% of evictable ephemeral storage, of the root volume or, when
// the bootstrap put the kubelet's state on a RAID-0 array of the instance store, of that.
func resourcesFor(in Instance, reg *KubeletRegistration) (corev1.ResourceList, corev1.ResourceList) {
	pods := int64(reg.MaxPods)
	if pods <= 0 {
		pods = defaultMaxPods
	}
	root := in.RootVolumeGiB
	if root <= 0 {
		root = 20
	}
	cpuMilli := in.VCPU * 1000
	reservedCPU := int64(0)
	for _, band := range []struct{ from, to, permille10k int64 }{{0, 1000, 600}, {1000, 2000, 100}, {2000, 4000, 50}, {4000, 1 << 40, 25}} {
		if cpuMilli > band.from {
			reservedCPU += (min(cpuMilli, band.to) - band.from) * band.permille10k / 10000
		}
	}
	memMi := in.MemoryMiB
	reservedMemMi := 11*pods + 255 + 100
	storage := root << 30
	if reg.LocalDisksRAID0 && in.InstanceStoreGB > 0 {
		storage = in.InstanceStoreGB * 1000 * 1000 * 1000
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memMi<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(storage, resource.BinarySI),
	}
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(max(cpuMilli-reservedCPU, 0), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(max(memMi-reservedMemMi, 0)<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(max(storage-(1<<30)-storage/10, 0), resource.BinarySI),
	}
	return capacity, allocatable
}
