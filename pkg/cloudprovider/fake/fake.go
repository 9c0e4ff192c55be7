package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

var (
	_ cloudprovider.CloudProvider = (*CloudProvider)(nil)
	_ cloudprovider.JoinDiagnoser = (*CloudProvider)(nil)
)

// Method names, as recorded in Calls and keyed in ErrorsFor.
const (
	MethodCreate           = "Create"
	MethodDelete           = "Delete"
	MethodGet              = "Get"
	MethodList             = "List"
	MethodGetInstanceTypes = "GetInstanceTypes"
	MethodIsDrifted        = "IsDrifted"
	MethodDiagnoseJoin     = "DiagnoseJoin"
)

// Call is one recorded call: the method and its main argument (the NodeClaim's name, the provider
// ID, or the NodePool's name; empty for List).
type Call struct {
	Method string
	Arg    string
}

// CloudProvider is the fake. Set its knobs before use or between calls; the zero value has no
// instance types and launches nothing. It is safe for concurrent use.
type CloudProvider struct {
	mu sync.Mutex

	// InstanceTypes is what GetInstanceTypes returns, and what Create chooses from.
	InstanceTypes []*cloudprovider.InstanceType
	// NextError, when set, is returned by the next call of any method and then cleared.
	NextError error
	// ErrorsFor queues errors per method name (MethodCreate...): each call of that method takes
	// and returns the first queued error, after NextError.
	ErrorsFor map[string][]error
	// Drifted is what IsDrifted returns, per provider ID.
	Drifted map[string]cloudprovider.DriftReason
	// Diagnoses is what DiagnoseJoin returns, per NodeClaim name (the provider ID is new at
	// every launch); the zero Diagnosis (nothing seen) by default.
	Diagnoses map[string]cloudprovider.Diagnosis

	calls     []Call
	instances map[string]*v1.NodeClaim
	nextID    int
}

// Calls returns a copy of the calls recorded so far, in order.
func (c *CloudProvider) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// CallsTo returns how many times the method was called.
func (c *CloudProvider) CallsTo(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, call := range c.calls {
		if call.Method == method {
			n++
		}
	}
	return n
}

// Reset forgets recorded calls, instances and queued errors; instance types stay.
func (c *CloudProvider) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls, c.instances, c.NextError, c.ErrorsFor, c.Drifted, c.Diagnoses = nil, nil, nil, nil, nil, nil
}

// record notes the call and returns the error the knobs say it fails with. c.mu must be held.
func (c *CloudProvider) record(method, arg string) error {
	c.calls = append(c.calls, Call{Method: method, Arg: arg})
	if err := c.NextError; err != nil {
		c.NextError = nil
		return err
	}
	if queued := c.ErrorsFor[method]; len(queued) > 0 {
		c.ErrorsFor[method] = queued[1:]
		return queued[0]
	}
	return nil
}

// Create launches a pretend instance of the first instance type and available offering that the
// NodeClaim's In requirements on instance type, zone and capacity type allow. Like a real
// provider it is idempotent per NodeClaim name: while an instance launched for that name is not
// deleted, Create returns it again (with no consistency lag) and launches nothing.
func (c *CloudProvider) Create(_ context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.record(MethodCreate, nodeClaim.Name); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(c.instances)) {
		if existing := c.instances[id]; existing.Name == nodeClaim.Name {
			adopted := nodeClaim.DeepCopy()
			existing.Status.DeepCopyInto(&adopted.Status)
			if adopted.Labels == nil {
				adopted.Labels = map[string]string{}
			}
			for _, k := range []string{corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, v1.CapacityTypeLabelKey} {
				adopted.Labels[k] = existing.Labels[k]
			}
			return adopted, nil
		}
	}
	for _, it := range c.InstanceTypes {
		if !allows(nodeClaim, corev1.LabelInstanceTypeStable, it.Name) {
			continue
		}
		for _, o := range it.Offerings {
			if !o.Available || !allows(nodeClaim, corev1.LabelTopologyZone, o.Zone) || !allows(nodeClaim, v1.CapacityTypeLabelKey, o.CapacityType) {
				continue
			}
			c.nextID++
			launched := nodeClaim.DeepCopy()
			launched.Status.ProviderID = fmt.Sprintf("fake:///%s/i-%017d", o.Zone, c.nextID)
			launched.Status.ImageID = "ami-fake"
			launched.Status.Capacity = it.Capacity.DeepCopy()
			launched.Status.Allocatable = it.Allocatable()
			if launched.Labels == nil {
				launched.Labels = map[string]string{}
			}
			launched.Labels[corev1.LabelInstanceTypeStable] = it.Name
			launched.Labels[corev1.LabelTopologyZone] = o.Zone
			launched.Labels[v1.CapacityTypeLabelKey] = o.CapacityType
			if c.instances == nil {
				c.instances = map[string]*v1.NodeClaim{}
			}
			c.instances[launched.Status.ProviderID] = launched.DeepCopy()
			return launched, nil
		}
	}
	return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("no available offering allowed by nodeclaim %s", nodeClaim.Name))
}

// allows reports whether the NodeClaim's requirements allow value for key. Only In is modelled;
// any other operator allows everything.
func allows(nodeClaim *v1.NodeClaim, key, value string) bool {
	for _, r := range nodeClaim.Spec.Requirements {
		if r.Key == key && r.Operator == v1.NodeSelectorOpIn && !slices.Contains(r.Values, value) {
			return false
		}
	}
	return true
}

// Delete forgets the NodeClaim's instance; it returns a NodeClaimNotFoundError when there is none.
func (c *CloudProvider) Delete(_ context.Context, nodeClaim *v1.NodeClaim) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.record(MethodDelete, nodeClaim.Name); err != nil {
		return err
	}
	if _, ok := c.instances[nodeClaim.Status.ProviderID]; !ok {
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("no instance %q", nodeClaim.Status.ProviderID))
	}
	delete(c.instances, nodeClaim.Status.ProviderID)
	return nil
}

// Get returns the instance launched with the provider ID.
func (c *CloudProvider) Get(_ context.Context, providerID string) (*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.record(MethodGet, providerID); err != nil {
		return nil, err
	}
	nc, ok := c.instances[providerID]
	if !ok {
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("no instance %q", providerID))
	}
	return nc.DeepCopy(), nil
}

// List returns every instance not deleted, ordered by provider ID.
func (c *CloudProvider) List(_ context.Context) ([]*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.record(MethodList, ""); err != nil {
		return nil, err
	}
	var out []*v1.NodeClaim
	for _, id := range slices.Sorted(maps.Keys(c.instances)) {
		out = append(out, c.instances[id].DeepCopy())
	}
	return out, nil
}

// GetInstanceTypes returns InstanceTypes, whatever the NodePool.
func (c *CloudProvider) GetInstanceTypes(_ context.Context, nodePool *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.record(MethodGetInstanceTypes, nodePool.Name); err != nil {
		return nil, err
	}
	return slices.Clone(c.InstanceTypes), nil
}

// IsDrifted returns Drifted[providerID], "" by default.
func (c *CloudProvider) IsDrifted(_ context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.record(MethodIsDrifted, nodeClaim.Status.ProviderID); err != nil {
		return "", err
	}
	return c.Drifted[nodeClaim.Status.ProviderID], nil
}

// Name returns "fake".
func (c *CloudProvider) Name() string { return "fake" }

// GetSupportedNodeClasses returns an EC2NodeClass, like the AWS provider.
func (c *CloudProvider) GetSupportedNodeClasses() []client.Object {
	return []client.Object{&awsv1.EC2NodeClass{TypeMeta: metav1.TypeMeta{APIVersion: awsv1.SchemeGroupVersion.String(), Kind: "EC2NodeClass"}}}
}

// DiagnoseJoin returns Diagnoses[nodeClaim.Name], recording the call with the NodeClaim's name.
func (c *CloudProvider) DiagnoseJoin(_ context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.Diagnosis, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.record(MethodDiagnoseJoin, nodeClaim.Name); err != nil {
		return cloudprovider.Diagnosis{}, err
	}
	return c.Diagnoses[nodeClaim.Name], nil
}
