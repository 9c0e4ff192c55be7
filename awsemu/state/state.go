package state

import (
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/joinerhq/joiner/pkg/catalog"
)

// Default timings of the instance lifecycle, the values of DefaultTimings. A World's own
// Timings decide; these are what a new World starts with.
const (
	// PendingFor is how long a new instance stays pending by default.
	PendingFor = 5 * time.Second
	// BootDelay is how long after an instance starts running its userData has run and its
	// kubelet first tries to register, by default.
	BootDelay = 20 * time.Second
	// ShuttingDownFor is how long a terminating instance stays shutting-down by default.
	ShuttingDownFor = 10 * time.Second
	// TerminatedVisibleFor is how long DescribeInstances still lists a terminated instance.
	TerminatedVisibleFor = time.Hour
)

// Timings are how long an instance spends in each step of its lifecycle.
type Timings struct {
	// PendingFor is how long a new instance stays pending.
	PendingFor time.Duration
	// BootDelay is how long after an instance starts running its userData has run and its
	// kubelet first tries to register.
	BootDelay time.Duration
	// ShuttingDownFor is how long a terminating instance stays shutting-down.
	ShuttingDownFor time.Duration
}

// DefaultTimings are the timings of a new World: PendingFor, BootDelay and ShuttingDownFor.
func DefaultTimings() Timings {
	return Timings{PendingFor: PendingFor, BootDelay: BootDelay, ShuttingDownFor: ShuttingDownFor}
}

// Override returns t with the non-zero fields of o in place of its own.
func (t Timings) Override(o Timings) Timings {
	if o.PendingFor > 0 {
		t.PendingFor = o.PendingFor
	}
	if o.BootDelay > 0 {
		t.BootDelay = o.BootDelay
	}
	if o.ShuttingDownFor > 0 {
		t.ShuttingDownFor = o.ShuttingDownFor
	}
	return t
}

// State is the emulator's world behind a lock. The zero value is not usable; call New.
type State struct {
	mu    sync.Mutex
	clock clock.PassiveClock
	world *World
}

// World is everything the emulator knows. Reach it only through State.View and State.Update.
type World struct {
	// Now is the time of the current View or Update.
	Now       time.Time
	AccountID string
	Catalog   *catalog.Catalog
	Regions   map[string]*Region
	IAM       *IAM
	Faults    *Faults
	// Calls counts the EC2 calls that succeeded, by action: not dry runs, not refused ones, not
	// failed ones. A test reads them (GET /_awsemu/calls) to check that a controller launched or
	// terminated each thing once.
	Calls map[string]int
	// Timings drive the instances' lifecycles and boots; New sets DefaultTimings, Seed applies
	// SeedOptions.Timings. Changing them affects instances already in flight.
	Timings Timings

	nextID uint64
}

// New returns a State over the catalogue with no resources beyond the catalogue's regions and
// zones. Use Seed to add a ready-made VPC, subnets, security groups and images.
func New(clk clock.PassiveClock, cat *catalog.Catalog, accountID string) *State {
	w := &World{AccountID: accountID, Catalog: cat, Regions: map[string]*Region{}, IAM: newIAM(), Faults: newFaults(), Calls: map[string]int{}, Timings: DefaultTimings()}
	for _, r := range cat.Regions {
		w.Regions[r.Name] = newRegion(r)
	}
	return &State{clock: clk, world: w}
}

// View runs fn with the world locked for reading. fn must not keep references after it returns.
func (s *State) View(fn func(w *World)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.world.Now = s.clock.Now()
	s.world.observe()
	fn(s.world)
}

// Update runs fn with the world locked for writing and returns fn's error. fn must leave the
// world consistent even when it fails.
func (s *State) Update(fn func(w *World) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.world.Now = s.clock.Now()
	s.world.observe()
	return fn(s.world)
}

// NewID returns a fresh id with the given prefix ("i", "lt", "subnet"): 17 hex digits, counting
// up, so tests can predict them.
func (w *World) NewID(prefix string) string {
	w.nextID++
	return fmt.Sprintf("%s-%017x", prefix, w.nextID)
}

// Region returns the named region or an error naming it.
func (w *World) Region(name string) (*Region, error) {
	r, ok := w.Regions[name]
	if !ok {
		return nil, fmt.Errorf("region %q is not emulated", name)
	}
	return r, nil
}

// observe advances instance lifecycles to w.Now.
func (w *World) observe() {
	for _, r := range w.Regions {
		for id, i := range r.Instances {
			if i.InterruptAt != nil && !w.Now.Before(*i.InterruptAt) {
				i.InterruptAt = nil
				i.Terminate(w.Now, "Server.SpotInstanceTermination")
				_ = w.Event(r, i, EventStateChange)
			}
			before := i.State
			i.advance(w.Now, w.Timings)
			if i.State != before {
				_ = w.Event(r, i, EventStateChange)
				if sn := r.Subnets[i.SubnetID]; sn != nil && i.State == InstanceTerminated {
					sn.ReleasePrivateIP(i.PrivateIP)
				}
			}
			if i.State == InstanceTerminated && w.Now.Sub(i.StateChangedAt) >= TerminatedVisibleFor {
				delete(r.Instances, id)
			}
		}
	}
}

// Region is one region's resources.
type Region struct {
	Name            string
	Zones           []catalog.Zone
	VPCs            map[string]*VPC
	Subnets         map[string]*Subnet
	SecurityGroups  map[string]*SecurityGroup
	Images          map[string]*Image
	LaunchTemplates map[string]*LaunchTemplate
	Instances       map[string]*Instance
	// Clusters are the EKS clusters by name.
	Clusters map[string]*Cluster
	// Queues are the SQS queues by name.
	Queues map[string]*Queue
	// InterruptionQueues name the queues EventBridge rules send EC2 events to.
	InterruptionQueues []string
	// ClientTokens are the idempotency tokens of the CreateFleet requests that launched
	// instances, by token.
	ClientTokens map[string]Idempotent
}

// Idempotent is what a request with a client token did: a request with the same token and the
// same parameters is answered Result again, without acting; one with other parameters is refused.
type Idempotent struct {
	// Params is the request's canonical form, without the token.
	Params string
	// Result is the response the request had.
	Result any
}

func newRegion(r catalog.Region) *Region {
	return &Region{
		Name: r.Name, Zones: r.Zones, VPCs: map[string]*VPC{}, Subnets: map[string]*Subnet{},
		SecurityGroups: map[string]*SecurityGroup{}, Images: map[string]*Image{},
		LaunchTemplates: map[string]*LaunchTemplate{}, Instances: map[string]*Instance{}, Clusters: map[string]*Cluster{}, Queues: map[string]*Queue{},
		ClientTokens: map[string]Idempotent{},
	}
}

// Zone returns the zone with the given name.
func (r *Region) Zone(name string) (catalog.Zone, bool) {
	for _, z := range r.Zones {
		if z.Name == name {
			return z, true
		}
	}
	return catalog.Zone{}, false
}

// LaunchTemplateByName returns the launch template with the given name.
func (r *Region) LaunchTemplateByName(name string) (*LaunchTemplate, bool) {
	for _, lt := range r.LaunchTemplates {
		if lt.Name == name {
			return lt, true
		}
	}
	return nil, false
}

// SortedKeys returns the keys of m in order, for stable listings.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Tags are a resource's tags.
type Tags map[string]string

// VPC is a virtual network.
type VPC struct {
	ID   string
	CIDR string
	Tags Tags
}

// Subnet is a subnet in one zone.
type Subnet struct {
	ID                 string
	VPCID              string
	Zone               string
	ZoneID             string
	CIDR               string
	AvailableIPs       int32
	MapPublicIPOnStart bool
	Tags               Tags
	// used are the private addresses held by instances that are not terminated, as offsets
	// from the subnet's network address; next is where the search for a free one starts.
	used map[uint32]bool
	next uint32
}

// NextPrivateIP hands out a free private address of the subnet, as EC2 does: never one held by
// an instance that is not terminated, never the four first or the last of the CIDR (AWS
// reserves them). It returns "" when the subnet has no free address.
func (s *Subnet) NextPrivateIP() string {
	prefix, err := netip.ParsePrefix(s.CIDR)
	if err != nil || !prefix.Addr().Is4() {
		return ""
	}
	size := uint32(1) << (32 - prefix.Bits())
	if size <= 5 {
		return ""
	}
	if s.used == nil {
		s.used = map[uint32]bool{}
	}
	first, last := uint32(4), size-2
	for range last - first + 1 {
		off := first + s.next%(last-first+1)
		s.next++
		if !s.used[off] {
			s.used[off] = true
			if s.AvailableIPs > 0 {
				s.AvailableIPs--
			}
			b := prefix.Masked().Addr().As4()
			n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) + off
			return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
		}
	}
	return ""
}

// ReleasePrivateIP returns an address to the subnet once its instance has terminated.
func (s *Subnet) ReleasePrivateIP(ip string) {
	prefix, err := netip.ParsePrefix(s.CIDR)
	addr, aerr := netip.ParseAddr(ip)
	if err != nil || aerr != nil || !prefix.Contains(addr) {
		return
	}
	b, a := prefix.Masked().Addr().As4(), addr.As4()
	off := (uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])) - (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
	if s.used[off] {
		delete(s.used, off)
		s.AvailableIPs++
	}
}

// SecurityGroup is a security group.
type SecurityGroup struct {
	ID          string
	Name        string
	Description string
	VPCID       string
	Tags        Tags
}

// Image is an AMI.
type Image struct {
	ID           string
	Name         string
	Description  string
	Architecture string
	OwnerID      string
	OwnerAlias   string
	CreationDate time.Time
	Deprecated   *time.Time
	// Family is the boot behaviour of the image: AL2, AL2023, Bottlerocket or Custom.
	Family string
	// KubernetesVersion is the kubelet version the image carries ("1.33").
	KubernetesVersion string
	// Variant is "standard" or "nvidia" (GPU drivers included).
	Variant string
	Tags    Tags
	// State, RootDeviceName, RootDeviceType, VirtualizationType and PlatformDetails are what
	// DescribeImages reports; empty fields report an EKS-optimized image's ("available",
	// "/dev/xvda", "ebs", "hvm", "Linux/UNIX").
	State              string
	RootDeviceName     string
	RootDeviceType     string
	VirtualizationType string
	PlatformDetails    string
}

// LaunchTemplate is a launch template with its one version (the emulator keeps only version 1,
// which is all Joiner creates).
type LaunchTemplate struct {
	ID        string
	Name      string
	CreatedBy string
	CreatedAt time.Time
	Tags      Tags
	Data      LaunchTemplateData
}

// LaunchTemplateData is what a launch template fixes for the instances it launches.
type LaunchTemplateData struct {
	ImageID             string
	InstanceType        string
	UserData            string // base64, as sent
	InstanceProfileName string
	InstanceProfileARN  string
	SecurityGroupIDs    []string
	MetadataHTTPTokens  string
	MetadataHopLimit    int
	InstanceTags        Tags
	VolumeTags          Tags
	// NetworkInterfaceTags and SpotRequestTags are the template's tags for the network
	// interfaces and the Spot Instance requests a launch creates.
	NetworkInterfaceTags   Tags
	SpotRequestTags        Tags
	RootVolumeSizeGiB      int
	AssociatePublicAddress bool
}
