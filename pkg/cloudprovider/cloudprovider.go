package cloudprovider

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// CloudProvider launches, finds and removes the instances behind NodeClaims, and describes the
// instance types a NodePool may launch. Implementations are safe for concurrent use.
//
// No method retries on its own beyond what one cloud call needs (SDK retries of throttled or
// failed requests): the calling controller owns retries, through its requeue. Every method
// returns errors the caller can classify with the Is* helpers of this package; an error that none
// of them recognises is transient.
type CloudProvider interface {
	// Create launches one instance for the NodeClaim and returns a copy of it whose status carries
	// the ProviderID, ImageID, Capacity and Allocatable of what was launched, and whose labels
	// carry the instance's well-known labels (instance type, zone, capacity type...). The input is
	// not modified.
	//
	// Create is idempotent per NodeClaim name: when an instance launched for a NodeClaim of that
	// name still exists (not terminated), Create returns it, as it did when launching it, instead
	// of launching another. The caller may therefore call Create again after a crash between
	// Create and recording the providerID. An implementation whose cloud reads lag its writes
	// states the window in which a retried Create may still launch a second instance; garbage
	// collection (List) reclaims it.
	//
	// Errors: InsufficientCapacityError when no allowed offering could be launched (the caller
	// deletes the NodeClaim so that provisioning tries again with fresh offerings);
	// NodeClassNotReadyError when the node class cannot launch yet (retry after it turns Ready);
	// CreateError for other refusals worth showing on the NodeClaim's Launched condition. A Create
	// that failed launched nothing the caller must clean up.
	Create(ctx context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error)

	// Delete terminates the NodeClaim's instance, found by status.providerID. It returns a
	// NodeClaimNotFoundError once the instance is gone (or terminating), which the caller takes as
	// success; it may be called again while termination is in progress.
	Delete(ctx context.Context, nodeClaim *v1.NodeClaim) error

	// Get returns a NodeClaim describing the instance with the given provider ID, as Create would
	// have returned it. It returns a NodeClaimNotFoundError when no such instance exists or it has
	// terminated. An implementation may describe an existing instance from a recent read of
	// bounded age, which it states, so that calls for every NodeClaim share one cloud read; a
	// NodeClaimNotFoundError must be current, since garbage collection deletes the NodeClaim on it.
	Get(ctx context.Context, providerID string) (*v1.NodeClaim, error)

	// List returns a NodeClaim for every instance this cluster's Joiner launched and that is not
	// terminated, whether or not a NodeClaim object still exists for it. Garbage collection uses
	// it to find leaked instances.
	List(ctx context.Context) ([]*v1.NodeClaim, error)

	// GetInstanceTypes returns the instance types the NodePool's node class can launch, each with
	// its offerings (zone × capacity type, with price and availability) and its allocatable
	// resources under the node class's kubelet settings. The NodePool's requirements are not
	// applied: filtering is the scheduler's job. It returns a NodeClassNotReadyError when the node
	// class does not exist or is not Ready. The returned values are shared and must not be
	// modified.
	GetInstanceTypes(ctx context.Context, nodePool *v1.NodePool) ([]*InstanceType, error)

	// IsDrifted reports why the NodeClaim's instance no longer matches its node class (a new AMI,
	// a subnet or security group no longer selected, a changed static field), or "" when it
	// matches. Like Get, it may read the instance as it was a bounded time ago. A NodeClaimNotFoundError means the instance is gone; other errors are transient.
	IsDrifted(ctx context.Context, nodeClaim *v1.NodeClaim) (DriftReason, error)

	// Name is the provider's name, for logs and metrics ("aws").
	Name() string

	// GetSupportedNodeClasses returns an empty object of every node class kind the provider
	// launches with (for AWS, EC2NodeClass), the first being the default, each with its TypeMeta
	// (apiVersion and kind) set: controllers match nodeClassRef's group and kind against it.
	GetSupportedNodeClasses() []client.Object
}

// NodeCoster is implemented by a CloudProvider that knows what a new node of a NodePool costs
// per hour beyond its instance (for AWS, the EBS volumes of its EC2NodeClass). The solver
// minimises it with the instance prices; providers that do not implement it add nothing.
type NodeCoster interface {
	NodeCost(ctx context.Context, nodePool *v1.NodePool) (float64, error)
}

// DriftReason says why a NodeClaim has drifted from its node class; "" means it has not. The value
// becomes the reason of the NodeClaim's Drifted condition, so it is a CamelCase word.
type DriftReason string

// InstanceType is one instance type as the scheduler sees it: what labels a node of this type
// would carry, where and how it can be bought, and how much of it pods may use.
type InstanceType struct {
	// Name is the instance type, such as m7i.large.
	Name string
	// Requirements maps each label key a node of this type carries to the values it may take:
	// one value for fixed facts (kubernetes.io/arch: [amd64]), several for facts that depend on
	// the offering chosen (topology.kubernetes.io/zone: [us-west-2a, us-west-2b]).
	Requirements map[string][]string
	// Offerings are the zone and capacity type combinations this type can be bought as.
	Offerings []*Offering
	// Capacity is the node's total resources (cpu, memory, pods, ephemeral-storage, extended
	// resources).
	Capacity corev1.ResourceList
	// Overhead is what the operating system, the kubelet and eviction thresholds keep for
	// themselves.
	Overhead Overhead
}

// Overhead is the part of an instance type's capacity that pods cannot use.
type Overhead struct {
	// KubeReserved is reserved for the kubelet and container runtime.
	KubeReserved corev1.ResourceList
	// SystemReserved is reserved for the operating system's daemons.
	SystemReserved corev1.ResourceList
	// EvictionThreshold is kept free by the kubelet's hard eviction thresholds.
	EvictionThreshold corev1.ResourceList
}

// Total is the sum of the overhead's parts, per resource.
func (o Overhead) Total() corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, list := range []corev1.ResourceList{o.KubeReserved, o.SystemReserved, o.EvictionThreshold} {
		for name, q := range list {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}

// Allocatable is the capacity minus the overhead, per resource, never below zero. The result is
// a fresh list.
func (it *InstanceType) Allocatable() corev1.ResourceList {
	overhead := it.Overhead.Total()
	allocatable := corev1.ResourceList{}
	for name, q := range it.Capacity {
		left := q.DeepCopy()
		if o, ok := overhead[name]; ok {
			left.Sub(o)
		}
		if left.Sign() < 0 {
			left = *resource.NewQuantity(0, left.Format)
		}
		allocatable[name] = left
	}
	return allocatable
}

// Offering is one way to buy an instance type: in a zone, with a capacity type.
type Offering struct {
	// Zone is the availability zone, such as us-west-2a.
	Zone string
	// ZoneID is the zone's ID, such as usw2-az1 (the topology.k8s.aws/zone-id label): unlike the
	// name, it is the same physical zone in every account. Empty when not known.
	ZoneID string
	// CapacityType is spot, on-demand or reserved (the karpenter.sh/capacity-type values).
	CapacityType string
	// Price is the hourly price in US dollars: the on-demand price, the current spot price, or 0
	// for capacity already paid for in a reservation.
	Price float64
	// Available is false while the offering is known to be out of capacity; the scheduler skips
	// it.
	Available bool
	// ReservationID is the capacity reservation (cr-...) a reserved offering launches into; empty
	// for spot and on-demand.
	ReservationID string
}

// NodeClassObject returns an empty object of the kind ref names, or nil when the provider does
// not launch with that kind.
func NodeClassObject(cloud CloudProvider, ref *v1.NodeClassReference) client.Object {
	for _, nc := range cloud.GetSupportedNodeClasses() {
		gvk := nc.GetObjectKind().GroupVersionKind()
		if gvk.Kind == ref.Kind && gvk.Group == ref.Group {
			return nc.DeepCopyObject().(client.Object)
		}
	}
	return nil
}
