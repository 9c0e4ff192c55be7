package operator

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// lastAppliedAnnotation is where kubectl apply keeps the whole object it last applied, as JSON:
// often the largest field of an object, and nothing Joiner reads.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// stripUnread returns the informer cache's transform: every object loses its managedFields and
// kubectl's last-applied annotation, Pods and Nodes also the fields no controller of Joiner reads
// (stripPod, stripNode). Pods and Nodes are most of the cache, one Pod per pod of the cluster, and
// the cache keeps them for the process's life: what the controllers never read is memory for
// nothing, twice over, as the garbage collector lets the heap grow to twice what is live.
//
// Only what is stripped is gone: reads of the cache see the object without it, and writes of a
// cached object must be patches computed against the cached copy (client.MergeFrom and the
// like), as Joiner's are, never an Update of the whole object, which would drop the stripped
// fields on the server (or be refused, a Pod's spec being immutable). A field a controller
// starts to read must come off these lists first.
//
// The transform also interns the strings that repeat from object to object (see interner).
func stripUnread() toolscache.TransformFunc {
	in := newInterner(maxInterned)
	return func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil {
			// The nil check as controller-runtime's TransformStripManagedFields has it
			// (kubernetes/kubernetes#124337).
			if m.GetManagedFields() != nil {
				m.SetManagedFields(nil)
			}
			if a := m.GetAnnotations(); a[lastAppliedAnnotation] != "" {
				delete(a, lastAppliedAnnotation)
			}
		}
		switch o := obj.(type) {
		case *corev1.Pod:
			stripPod(o)
			in.pod(o)
		case *corev1.Node:
			stripNode(o)
			in.node(o)
		case *v1.NodeClaim:
			in.nodeClaim(o)
		case *appsv1.ReplicaSet:
			// Only default topology spread selectors read controllers (--scheduler-config):
			// their selectors, never their pod templates, often their largest part.
			o.Spec.Template = corev1.PodTemplateSpec{}
		case *appsv1.StatefulSet:
			o.Spec.Template, o.Spec.VolumeClaimTemplates = corev1.PodTemplateSpec{}, nil
		case *corev1.ReplicationController:
			o.Spec.Template = nil
		}
		return obj, nil
	}
}

// stripPod drops what provisioning, disruption, termination and the console never read of a
// Pod: its volumes other than claims (the projected service-account token every pod carries,
// config maps, secrets...), its containers' environment, mounts, probes, lifecycle hooks,
// commands and security settings (their names, images, resources, ports and restart policy
// stay: requests, sidecars and host ports are scheduling input), its ephemeral containers, and
// the status its kubelet reports beyond phase and conditions (container statuses, IPs).
func stripPod(p *corev1.Pod) {
	p.Spec.Volumes = slices.DeleteFunc(p.Spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim == nil && v.Ephemeral == nil
	})
	if len(p.Spec.Volumes) == 0 {
		p.Spec.Volumes = nil
	}
	for i := range p.Spec.InitContainers {
		stripContainer(&p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		stripContainer(&p.Spec.Containers[i])
	}
	p.Spec.EphemeralContainers = nil
	p.Status.ContainerStatuses, p.Status.InitContainerStatuses, p.Status.EphemeralContainerStatuses = nil, nil, nil
	p.Status.PodIP, p.Status.PodIPs, p.Status.HostIP, p.Status.HostIPs = "", nil, "", nil
	p.Status.ResourceClaimStatuses = nil
}

// stripContainer drops what stripPod says of one container.
func stripContainer(c *corev1.Container) {
	c.Command, c.Args, c.WorkingDir = nil, nil, ""
	c.Env, c.EnvFrom = nil, nil
	c.VolumeMounts, c.VolumeDevices = nil, nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	c.TerminationMessagePath, c.TerminationMessagePolicy, c.ImagePullPolicy = "", "", ""
	c.SecurityContext = nil
}

// stripNode drops what no controller of Joiner reads of a Node: the images its kubelet holds
// (often the largest part of a Node), its system info, daemon endpoints, runtime handlers,
// features and config source. Labels, taints, capacity, allocatable, conditions and addresses
// stay.
func stripNode(n *corev1.Node) {
	n.Status.Images = nil
	n.Status.NodeInfo = corev1.NodeSystemInfo{}
	n.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{}
	n.Status.RuntimeHandlers, n.Status.Features, n.Status.Config = nil, nil, nil
}
