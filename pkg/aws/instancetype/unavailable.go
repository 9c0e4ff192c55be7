package instancetype

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// UnavailableTTL is how long an offering stays unavailable after EC2 reported insufficient
// capacity for it, or interrupted a spot instance of it.
const UnavailableTTL = 3 * time.Minute

// UnavailableOfferings remembers offerings (instance type, zone, capacity type) that EC2 recently
// had no capacity for, or reclaimed a spot instance of (pkg/controllers/interruption), so that
// GetInstanceTypes marks them unavailable and the next launch tries another. Entries expire
// after UnavailableTTL. It is safe for concurrent use; the zero value is
// not: use NewUnavailableOfferings.
type UnavailableOfferings struct {
	clock   clock.PassiveClock
	mu      sync.Mutex
	expires map[offeringKey]time.Time
	// seq changes whenever the set changes, so callers can cache what they computed from it.
	seq uint64
}

type offeringKey struct{ instanceType, zone, capacityType string }

// NewUnavailableOfferings returns an empty cache reading time from clk.
func NewUnavailableOfferings(clk clock.PassiveClock) *UnavailableOfferings {
	return &UnavailableOfferings{clock: clk, expires: map[offeringKey]time.Time{}}
}

// MarkUnavailable records an insufficient-capacity error or a spot interruption for the
// offering.
func (u *UnavailableOfferings) MarkUnavailable(instanceType, zone, capacityType string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.expires[offeringKey{instanceType, zone, capacityType}] = u.clock.Now().Add(UnavailableTTL)
	u.seq++
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
