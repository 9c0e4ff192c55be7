package instance

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// recent remembers the last description of each of the cluster's instances and when the call
// that returned it began, so that readers content with a description of bounded age (drift,
// NodeClaim garbage collection) share one List instead of calling DescribeInstances per NodeClaim
// and per reconcile. It is safe for concurrent use.
type recent struct {
	mu sync.Mutex
	// byID holds the instances Get and List described, by ID, with when their call began.
	byID map[string]described
	// listedAt is when the last complete List began; zero before the first.
	listedAt time.Time
	// listing serializes the Lists Recent makes, so that readers finding the descriptions too old
	// at once make one call, not one each.
	listing sync.Mutex
}

type described struct {
	inst *Instance
	at   time.Time
}

func (r *recent) lookup(id string, since time.Time) (*Instance, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.byID[id]
	if !ok || d.at.Before(since) {
		return nil, false
	}
	return d.inst.clone(), true
}

func (r *recent) listedSince(since time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.listedAt.IsZero() && !r.listedAt.Before(since)
}

// put records a description from a call that began at.
func (r *recent) put(inst *Instance, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]described{}
	}
	if d, ok := r.byID[inst.ID]; ok && d.at.After(at) {
		return
	}
	r.byID[inst.ID] = described{inst: inst.clone(), at: at}
}

// tagged adds tags to the remembered description of an instance, if any.
func (r *recent) tagged(id string, tags map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.byID[id]; ok {
		maps.Copy(d.inst.Tags, tags)
	}
}

// forget drops an instance EC2 says is gone or going.
func (r *recent) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byID, id)
}

// listed records a complete List that began at: its instances, and the absence of every
// instance described before it began that it does not show (terminated, or no longer tagged).
func (r *recent) listed(insts []*Instance, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]described{}
	}
	seen := make(map[string]bool, len(insts))
	for _, inst := range insts {
		seen[inst.ID] = true
		if d, ok := r.byID[inst.ID]; ok && d.at.After(at) {
			continue
		}
		r.byID[inst.ID] = described{inst: inst.clone(), at: at}
	}
	for id, d := range r.byID {
		if !seen[id] && d.at.Before(at) {
			delete(r.byID, id)
		}
	}
	if at.After(r.listedAt) {
		r.listedAt = at
	}
}

func (i *Instance) clone() *Instance {
	out := *i
	out.SecurityGroupIDs = slices.Clone(i.SecurityGroupIDs)
	out.Tags = maps.Clone(i.Tags)
	return &out
}

// Recent describes one instance as EC2 described it at most maxAge ago: from the last Get or
// List that described it or, when those are older, from a List of all the cluster's instances
// (one paginated DescribeInstances for every reader, however many NodeClaims they ask about),
// or, for an instance that List does not show, from a Get. So an instance that was terminated
// within maxAge may still be returned; a NodeClaimNotFoundError, though, is always EC2's answer
// to a Get made now, never a remembered absence, so a caller that deletes on it (garbage
// collection) never acts on a stale view. Callers that need the instance's current state
// (termination, join diagnosis) call Get.
func (p *Provider) Recent(ctx context.Context, id string, maxAge time.Duration) (*Instance, error) {
	since := p.clock.Now().Add(-maxAge)
	if inst, ok := p.recent.lookup(id, since); ok {
		return inst, nil
	}
	if !p.recent.listedSince(since) {
		p.recent.listing.Lock()
		// Another reader may have listed while this one waited.
		if !p.recent.listedSince(since) {
			if _, err := p.List(ctx); err != nil {
				p.recent.listing.Unlock()
				return nil, err
			}
		}
		p.recent.listing.Unlock()
		if inst, ok := p.recent.lookup(id, since); ok {
			return inst, nil
		}
	}
	return p.Get(ctx, id)
}
