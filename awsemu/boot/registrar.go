package boot

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// APIServer is what a booting instance needs from the cluster: the aws-auth ConfigMap that
// maps IAM roles, and the registration of its Node. Registrar implements it.
type APIServer interface {
	// AWSAuth returns kube-system/aws-auth's mapRoles and whether the ConfigMap exists. An error
	// is a failure to read it; the caller retries.
	AWSAuth(ctx context.Context) (mapRoles string, found bool, err error)
	// RegisterNode creates node with its status, as a kubelet does. A Node of that name with
	// the same providerID is adopted (the kubelet restarted); one with another providerID is an
	// error. Other errors are the API server's; the caller retries.
	RegisterNode(ctx context.Context, node *corev1.Node) error
}

var _ APIServer = (*Registrar)(nil)

// ErrNodeGone is returned by Heartbeat when the Node was deleted. A kubelet does not
// re-register a deleted Node until it restarts; neither does the Registrar.
var ErrNodeGone = errors.New("node was deleted")

// Registrar registers emulated kubelets' Nodes through a controller-runtime client and keeps
// them Ready. It writes only what a kubelet writes: the Node on creation, then the status
// conditions; it never touches labels, taints or other fields after creation, which belong to
// controllers.
type Registrar struct {
	client client.Client
	clock  clock.PassiveClock
}

// NewRegistrar returns a Registrar writing through c, stamping conditions with clk's time.
// c should be a direct (uncached) client: a kubelet reads its own Node from the API server.
func NewRegistrar(c client.Client, clk clock.PassiveClock) *Registrar {
	return &Registrar{client: c, clock: clk}
}

// AWSAuth implements APIServer.
func (r *Registrar) AWSAuth(ctx context.Context) (string, bool, error) {
	cm := &corev1.ConfigMap{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: metav1.NamespaceSystem, Name: "aws-auth"}, cm)
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading kube-system/aws-auth, %w", err)
	}
	return cm.Data["mapRoles"], true, nil
}

// RegisterNode implements APIServer.
func (r *Registrar) RegisterNode(ctx context.Context, node *corev1.Node) error {
	status := node.Status
	created := node.DeepCopy()
	err := r.client.Create(ctx, created)
	if apierrors.IsAlreadyExists(err) {
		existing := &corev1.Node{}
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(node), existing); err != nil {
			return fmt.Errorf("reading existing node %s, %w", node.Name, err)
		}
		if existing.Spec.ProviderID != node.Spec.ProviderID {
			return fmt.Errorf("registering node %s, a node of that name belongs to %s", node.Name, existing.Spec.ProviderID)
		}
		created = existing
	} else if err != nil {
		return fmt.Errorf("creating node %s, %w", node.Name, err)
	}
	// The API server may drop status on create; write it through the status subresource, as a
	// patch: the node autoscaler labels and taints the Node the moment it appears, and an update
	// would conflict with that.
	base := created.DeepCopy()
	created.Status = status
	if err := r.client.Status().Patch(ctx, created, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("writing status of node %s, %w", node.Name, err)
	}
	return nil
}

// Heartbeat brings the Node named name's status to Ready, as the kubelet does: every condition
// True for Ready and False for the pressures. With always it posts the status whatever it was,
// with a fresh heartbeat on every condition (the kubelet's nodeStatusReportFrequency); without,
// it posts only when a condition is missing or has another status (the kubelet checks every
// nodeStatusUpdateFrequency and posts changes; its Lease, RenewLease, says it is alive between
// reports). It reports whether it posted, and returns an error wrapping ErrNodeGone when the Node
// no longer exists. The caller decides how often to call it.
func (r *Registrar) Heartbeat(ctx context.Context, name string, always bool) (bool, error) {
	node := &corev1.Node{}
	err := r.client.Get(ctx, types.NamespacedName{Name: name}, node, fromWatchCache())
	if apierrors.IsNotFound(err) {
		// The watch cache can lag behind a Node registered a moment ago: only a read of etcd
		// says it is gone (a Node taken for gone is never beaten again, and goes NotReady).
		err = r.client.Get(ctx, types.NamespacedName{Name: name}, node)
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("posting status of node %s, %w", name, ErrNodeGone)
		}
	}
	if err != nil {
		return false, fmt.Errorf("reading node %s, %w", name, err)
	}
	base := node.DeepCopy()
	now := metav1.NewTime(r.clock.Now())
	want := map[corev1.NodeConditionType]corev1.ConditionStatus{
		corev1.NodeReady: corev1.ConditionTrue, corev1.NodeMemoryPressure: corev1.ConditionFalse,
		corev1.NodeDiskPressure: corev1.ConditionFalse, corev1.NodePIDPressure: corev1.ConditionFalse,
	}
	seen := map[corev1.NodeConditionType]bool{}
	changed := false
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		status, ours := want[c.Type]
		if !ours {
			continue
		}
		seen[c.Type] = true
		if c.Status != status {
			c.Status, c.LastTransitionTime, changed = status, now, true
		}
		c.LastHeartbeatTime = now
	}
	for t, status := range want {
		if !seen[t] {
			node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: t, Status: status, LastHeartbeatTime: now, LastTransitionTime: now})
			changed = true
		}
	}
	if !changed && !always {
		return false, nil
	}
	if err := r.client.Status().Patch(ctx, node, client.StrategicMergeFrom(base)); err != nil {
		// The watch cache can still hold a Node just deleted: the patch is what finds it gone.
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("posting status of node %s, %w", name, ErrNodeGone)
		}
		return false, fmt.Errorf("posting status of node %s, %w", name, err)
	}
	return true, nil
}

// fromWatchCache reads from the API server's watch cache (resourceVersion "0") rather than
// etcd, as a kubelet reads its Node and Lease through informers: a heartbeat's reads of every
// Node every 10s were quorum reads of etcd. A read a moment stale is corrected at the next one.
func fromWatchCache() client.GetOption {
	return &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}}
}

// NodeLeaseNamespace holds the kubelets' Node Leases.
const NodeLeaseNamespace = "kube-node-lease"

// nodeLeaseSeconds is a Node Lease's duration, the kubelet's default.
const nodeLeaseSeconds = 40

// RenewLease renews the Lease of the Node named name in kube-node-lease, creating it (owned by
// the Node, so that it goes with it) when missing, as the kubelet does every 10s: the node
// lifecycle controller holds a Node alive while its Lease is renewed, so the Node's status is
// posted only on change and every few minutes (Heartbeat). last is the Lease as this kubelet
// last wrote it, or nil: as the kubelet does, a renewal updates that copy without reading the
// Lease first, and reads it again only when the update fails (another writer changed it, or it
// was deleted). It returns the Lease as written, for the next renewal, or an error (wrapping
// ErrNodeGone when the Node no longer exists) and nil.
func (r *Registrar) RenewLease(ctx context.Context, name string, last *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	now := metav1.NewMicroTime(r.clock.Now())
	if last != nil {
		lease := last.DeepCopy()
		lease.Spec.RenewTime = &now
		if err := r.client.Update(ctx, lease); err == nil {
			return lease, nil
		}
		// Whatever failed, reading the Lease again below finds out what it is now.
	}
	lease := &coordinationv1.Lease{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: NodeLeaseNamespace, Name: name}, lease, fromWatchCache())
	if err == nil {
		lease.Spec.RenewTime = &now
		if err := r.client.Update(ctx, lease); err != nil {
			return nil, fmt.Errorf("renewing the lease of node %s, %w", name, err)
		}
		return lease, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the lease of node %s, %w", name, err)
	}
	node := &corev1.Node{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("creating the lease of node %s, %w", name, ErrNodeGone)
		}
		return nil, fmt.Errorf("reading node %s, %w", name, err)
	}
	lease = &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: NodeLeaseNamespace, Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID,
		}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(nodeLeaseSeconds)), RenewTime: &now},
	}
	if err := r.client.Create(ctx, lease); err != nil {
		return nil, fmt.Errorf("creating the lease of node %s, %w", name, err)
	}
	return lease, nil
}

// RunPods reports the pods bound to the Node named nodeName as running, as the kubelet does once
// their containers start: phase Running, a pod IP (the host's for hostNetwork pods, else one
// derived from the pod's UID in the host's /16), the host IP, every container running and ready,
// and the Initialized, ContainersReady and Ready conditions True. Pods already Running or
// finished are left alone. Pods being deleted (evicted, say) are deleted for good, as the kubelet
// does once their containers have stopped: the emulated containers stop at once on SIGTERM. It
// returns how many pods it changed; on error, the pods before the failing one are changed.
//
// Approximation: images are not pulled, probes and init containers are not run, and the
// kubelet's admission checks (resources, taints) are not applied.
func (r *Registrar) RunPods(ctx context.Context, nodeName, hostIP string) (int, error) {
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.MatchingFields{"spec.nodeName": nodeName}); err != nil {
		return 0, fmt.Errorf("listing pods on node %s, %w", nodeName, err)
	}
	return r.RunPodsOf(ctx, pods.Items, hostIP)
}

// RunPodsOf is RunPods over pods already read, the pods bound to one node whose host IP is
// hostIP.
func (r *Registrar) RunPodsOf(ctx context.Context, pods []corev1.Pod, hostIP string) (int, error) {
	now := metav1.NewTime(r.clock.Now())
	changed := 0
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil {
			err := r.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
			if client.IgnoreNotFound(err) != nil {
				return changed, fmt.Errorf("finishing the deletion of pod %s/%s, %w", pod.Namespace, pod.Name, err)
			}
			changed++
			continue
		}
		if pod.Status.Phase == corev1.PodRunning ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		base := pod.DeepCopy()
		podIP := hostIP
		if !pod.Spec.HostNetwork {
			podIP = podIPFor(hostIP, string(pod.UID))
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.HostIP = hostIP
		pod.Status.HostIPs = []corev1.HostIP{{IP: hostIP}}
		pod.Status.PodIP = podIP
		pod.Status.PodIPs = []corev1.PodIP{{IP: podIP}}
		pod.Status.StartTime = &now
		pod.Status.Conditions = nil
		for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		pod.Status.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr.To(true),
				ContainerID: "containerd://" + string(pod.UID) + "-" + c.Name,
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		// A pod deleted since it was read needs no report.
		if err := r.client.Status().Patch(ctx, pod, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
			return changed, fmt.Errorf("reporting pod %s/%s running, %w", pod.Namespace, pod.Name, err)
		}
		changed++
	}
	return changed, nil
}

// podIPFor derives a stable pod IP in the host's /16 from the pod's UID.
func podIPFor(hostIP, uid string) string {
	parts := strings.Split(hostIP, ".")
	if len(parts) != 4 {
		return hostIP
	}
	h := fnv.New32a()
	h.Write([]byte(uid))
	sum := h.Sum32()
	return fmt.Sprintf("%s.%s.%d.%d", parts[0], parts[1], sum>>8&0xff, sum&0xff|1)
}
