package instancetype

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// UnavailableTTL is how long an offering stays unavailable after EC2 reported insufficient
// capacity for it, or interrupted a spot instance of it.
const UnavailableTTL = 3 * time.Minute

// UnavailableOfferings remembers offerings (instance type, zone, capacity type) that EC2 recently
// had no capacity for, or reclaimed a spot instance of (pkg/controllers/aws/interruption), so that
// GetInstanceTypes marks them unavailable and the next launch tries another. Entries expire
// after UnavailableTTL. The controller keeps it across restarts (pkg/controllers/aws/
// unavailableofferings: Entries, Restore, Changed). It is safe for concurrent use; the zero
// value is not: use NewUnavailableOfferings.
type UnavailableOfferings struct {
	clock   clock.PassiveClock
	mu      sync.Mutex
	expires map[offeringKey]time.Time
	// seq changes whenever the set changes, so callers can cache what they computed from it.
	seq uint64
	// changed gets a value (if it has none) when an offering is marked: see Changed.
	changed chan struct{}
}

type offeringKey struct{ instanceType, zone, capacityType string }

// NewUnavailableOfferings returns an empty cache reading time from clk.
func NewUnavailableOfferings(clk clock.PassiveClock) *UnavailableOfferings {
	return &UnavailableOfferings{clock: clk, expires: map[offeringKey]time.Time{}, changed: make(chan struct{}, 1)}
}

// Unavailable is one unavailable offering and when it becomes available again.
type Unavailable struct {
	InstanceType, Zone, CapacityType string
	Expires                          time.Time
}

// Entries returns the offerings unavailable now, ordered by instance type, zone and capacity
// type.
func (u *UnavailableOfferings) Entries() []Unavailable {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.clock.Now()
	var out []Unavailable
	for key, expires := range u.expires {
		if now.Before(expires) {
			out = append(out, Unavailable{InstanceType: key.instanceType, Zone: key.zone, CapacityType: key.capacityType, Expires: expires})
		}
	}
	slices.SortFunc(out, func(a, b Unavailable) int {
		return cmp.Or(cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.CapacityType, b.CapacityType))
	})
	return out
}

// Restore adds offerings another process recorded (a controller before a restart, an earlier
// leader), each until its own expiry; one already expired is left out, and one known here
// keeps the later of the two expiries. It does not signal Changed.
func (u *UnavailableOfferings) Restore(entries []Unavailable) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.clock.Now()
	for _, e := range entries {
		key := offeringKey{e.InstanceType, e.Zone, e.CapacityType}
		if !now.Before(e.Expires) || !u.expires[key].Before(e.Expires) {
			continue
		}
		u.expires[key] = e.Expires
		u.seq++
	}
}

// Changed receives a value after MarkUnavailable (several marks may give one value), so that
// whoever keeps a record of the offerings can write it at once.
func (u *UnavailableOfferings) Changed() <-chan struct{} { return u.changed }

// MarkUnavailable records an insufficient-capacity error or a spot interruption for the
// offering.
func (u *UnavailableOfferings) MarkUnavailable(instanceType, zone, capacityType string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.expires[offeringKey{instanceType, zone, capacityType}] = u.clock.Now().Add(UnavailableTTL)
	u.seq++
	select {
	case u.changed <- struct{}{}:
	default:
	}
}

// IsUnavailable reports whether the offering had an insufficient-capacity error within
// UnavailableTTL.
func (u *UnavailableOfferings) IsUnavailable(instanceType, zone, capacityType string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	key := offeringKey{instanceType, zone, capacityType}
	expires, ok := u.expires[key]
	if !ok {
		return false
	}
	if !u.clock.Now().Before(expires) {
		delete(u.expires, key)
		u.seq++
		return false
	}
	return true
}

// SeqNum changes whenever an offering is marked or expires: expired offerings are forgotten
// here too, so that a caller that caches what it computed, and asks IsUnavailable no more, sees
// them expire.
func (u *UnavailableOfferings) SeqNum() uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.clock.Now()
	for key, expires := range u.expires {
		if !now.Before(expires) {
			delete(u.expires, key)
			u.seq++
		}
	}
	return u.seq
}
