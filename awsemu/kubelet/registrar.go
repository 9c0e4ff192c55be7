package kubelet

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/awsemu/catalog"
	boot "github.com/joinerhq/joiner/awsemu/legacyboot"
	"github.com/joinerhq/joiner/awsemu/state"
)

// VMMemoryOverhead is the share of an instance type's memory the hypervisor and firmware keep, so
// the Node's memory capacity is below the nominal size, as on EC2.
const VMMemoryOverhead = 0.075

// Registrar registers the Nodes of booted instances. Call Sync whenever the world or the cluster
// may have changed (Run does so periodically).
type Registrar struct {
	client client.Client
	state  *state.State
	booter *boot.Booter
	clock  clock.WithTicker
}

// NewRegistrar returns a Registrar writing Nodes with c for the instances of st booted by b.
func NewRegistrar(c client.Client, st *state.State, b *boot.Booter, clk clock.WithTicker) *Registrar {
	return &Registrar{client: c, state: st, booter: b, clock: clk}
}

// Run syncs every interval until ctx ends.
func (r *Registrar) Run(ctx context.Context, interval time.Duration) error {
	t := r.clock.NewTicker(interval)
	defer t.Stop()
	for {
		if err := r.Sync(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Syncing Nodes of booted instances")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Sync reads aws-auth into the Booter, then creates the Node of every instance that may join and
// has none, and deletes the Nodes of instances that are shutting down or gone.
func (r *Registrar) Sync(ctx context.Context) error {
	if err := r.syncAWSAuth(ctx); err != nil {
		return err
	}
	var want []*corev1.Node
	gone := map[string]bool{}
	r.state.View(func(w *state.World) {
		for _, rn := range state.SortedKeys(w.Regions) {
			reg := w.Regions[rn]
			for _, id := range state.SortedKeys(reg.Instances) {
				i := reg.Instances[id]
				if i.State != state.InstanceRunning {
					gone[providerID(i)] = true
					continue
				}
				if i.BootPhase != state.BootKubeletRunning {
					continue
				}
				k, ok := r.booter.Kubelet(id)
				it, known := w.Catalog.Type(i.InstanceType)
				if ok && known {
					want = append(want, node(i, k, it, reg.Images[i.ImageID], w.Now))
				}
			}
		}
	})
	ready := map[string]bool{}
	for _, n := range want {
		if err := r.client.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering node %s, %w", n.Name, err)
		}
		ready[n.Name] = true
	}
	if err := r.runPods(ctx, ready); err != nil {
		return err
	}
	return r.deleteGone(ctx, gone)
}

// runPods marks the pods bound to the emulated kubelets' Nodes Running and Ready, as a kubelet
// would once their containers start. Pods that have a phase other than Pending are left alone.
func (r *Registrar) runPods(ctx context.Context, nodes map[string]bool) error {
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods); err != nil {
		return fmt.Errorf("listing pods, %w", err)
	}
	now := metav1.NewTime(r.clock.Now())
	for i := range pods.Items {
		p := &pods.Items[i]
		if !nodes[p.Spec.NodeName] || (p.Status.Phase != "" && p.Status.Phase != corev1.PodPending) || p.DeletionTimestamp != nil {
			continue
		}
		p.Status.Phase, p.Status.StartTime = corev1.PodRunning, &now
		p.Status.HostIP, p.Status.PodIP = "10.0.0.1", fmt.Sprintf("10.1.%d.%d", i/250, 2+i%250)
		p.Status.Conditions = nil
		for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		if err := r.client.Status().Update(ctx, p); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("starting pod %s/%s, %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func (r *Registrar) syncAWSAuth(ctx context.Context) error {
	cm := &corev1.ConfigMap{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: "kube-system", Name: "aws-auth"}, cm)
	switch {
	case apierrors.IsNotFound(err):
		r.booter.SetAWSAuth("")
	case err != nil:
		return fmt.Errorf("reading kube-system/aws-auth, %w", err)
	default:
		r.booter.SetAWSAuth(cm.Data["mapRoles"])
	}
	return nil
}

func (r *Registrar) deleteGone(ctx context.Context, gone map[string]bool) error {
	nodes := &corev1.NodeList{}
	if err := r.client.List(ctx, nodes); err != nil {
		return fmt.Errorf("listing nodes, %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if gone[n.Spec.ProviderID] {
			if err := r.client.Delete(ctx, n); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting node %s of a terminated instance, %w", n.Name, err)
			}
		}
	}
	return nil
}

func providerID(i *state.Instance) string { return "aws:///" + i.Zone + "/" + i.ID }

// node is the Node the instance's kubelet registers, with its status.
func node(i *state.Instance, k *boot.Kubelet, it catalog.InstanceType, img *state.Image, now time.Time) *corev1.Node {
	arch := "amd64"
	if it.Architecture == catalog.ArchARM64 {
		arch = "arm64"
	}
	labels := map[string]string{
		corev1.LabelArchStable: arch, corev1.LabelOSStable: "linux", corev1.LabelHostname: i.PrivateDNSName,
		corev1.LabelInstanceTypeStable: it.Name, corev1.LabelTopologyRegion: i.Region, corev1.LabelTopologyZone: i.Zone,
		"topology.k8s.aws/zone-id": i.ZoneID,
	}
	maps.Copy(labels, k.Labels)
	capacity, allocatable := resources(it, k)
	version, osImage := "v1.33.0-eks", "Amazon Linux"
	if img != nil {
		version = "v" + img.KubernetesVersion + ".0-eks"
		osImage = map[string]string{state.FamilyAL2: "Amazon Linux 2", state.FamilyAL2023: "Amazon Linux 2023", state.FamilyBottlerocket: "Bottlerocket OS"}[img.Family]
	}
	ts := metav1.NewTime(now)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: i.PrivateDNSName, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: providerID(i), Taints: k.Taints},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: allocatable,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: ts, LastTransitionTime: ts}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: i.PrivateIP}, {Type: corev1.NodeHostName, Address: i.PrivateDNSName},
				{Type: corev1.NodeInternalDNS, Address: i.PrivateDNSName}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: version, Architecture: arch, OperatingSystem: "linux", OSImage: osImage,
				ContainerRuntimeVersion: "containerd://1.7.27", SystemUUID: i.ID},
		},
	}
}

// resources computes capacity and allocatable as the EKS AMIs configure the kubelet: pods from
// the ENI limits unless maxPods is set, kube-reserved CPU by the EKS core ladder, kube-reserved
// memory 255Mi + 11Mi per pod, and a 100Mi hard eviction threshold.
func resources(it catalog.InstanceType, k *boot.Kubelet) (capacity, allocatable corev1.ResourceList) {
	pods := int64(it.MaxPods())
	if k.MaxPods != nil {
		pods = int64(*k.MaxPods)
	}
	memory := int64(float64(it.MemoryMiB)*(1-VMMemoryOverhead)) * 1024 * 1024
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(it.VCPU)*1000, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memory, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	if it.GPUs != nil && it.GPUs.Manufacturer == "NVIDIA" {
		capacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(it.GPUs.Count), resource.DecimalSI)
	}
	reservedCPU := reservedMilliCPU(int64(it.VCPU))
	reservedMemory := (255+11*pods)*1024*1024 + 100*1024*1024
	allocatable = capacity.DeepCopy()
	allocatable[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(it.VCPU)*1000-reservedCPU, resource.DecimalSI)
	allocatable[corev1.ResourceMemory] = *resource.NewQuantity(memory-reservedMemory, resource.BinarySI)
	allocatable[corev1.ResourceEphemeralStorage] = resource.MustParse("18Gi")
	return capacity, allocatable
}

// reservedMilliCPU is 6% of the first core, 1% of the second, 0.5% of the next two and 0.25% of
// every further core.
func reservedMilliCPU(cores int64) int64 {
	var m float64
	for c := int64(1); c <= cores; c++ {
		switch {
		case c == 1:
			m += 60
		case c == 2:
			m += 10
		case c <= 4:
			m += 5
		default:
			m += 2.5
		}
	}
	return int64(m)
}
