package instance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// AdoptionMaxAge is the age past which an instance launched for nobody known (its launch's
// NodeClaim status never written: the controller died between CreateFleet and the write) is no
// longer adopted by a launch but left to garbage collection. It is GarbageCollectionGrace less a
// margin, so that an instance is never adopted while garbage collection may judge it leaked: an
// adopted instance is in the ledger before it is GarbageCollectionGrace old, and Leaked spares
// the ledger's instances of launching NodeClaims.
const AdoptionMaxAge = GarbageCollectionGrace - 10*time.Second

// AdoptionRefresh is how often, at most, launches list the cluster's instances to find those to
// adopt. They do so only during AdoptionMaxAge after the provider's first launch: any instance
// of an earlier controller is too old to adopt after that, and this controller's own launches are
// in its ledger.
const AdoptionRefresh = 2 * time.Second

// LedgerTTL is how long the ledger remembers an instance handed to a NodeClaim: its status is
// written, or the NodeClaim gone, long before.
const LedgerTTL = 15 * time.Minute

// ledger is what this controller launched or adopted, and for whom. Batched launches carry no
// NodeClaim's tag (the fleet's tags are those the batch shares), so the ledger is what maps a
// launched instance to its NodeClaim until the status names it: a retried Create gets the same
// instance, and Leaked spares it. Orphans are instances found untagged and named by no NodeClaim
// after a restart, or launched beyond what the batch asked: a launch that fits one adopts it
// instead of launching.
type ledger struct {
	mu sync.Mutex
	// byUID is the instance handed to each NodeClaim, by UID.
	byUID map[string]handed
	// owner is the name of the NodeClaim each handed instance went to, by instance ID.
	owner map[string]string
	// orphans are the instances a launch may adopt, by ID.
	orphans map[string]*Instance
	// firstLaunch is when the first launch asked; listedAt when launches last listed orphans.
	firstLaunch, listedAt time.Time

	// adopting serializes adoptions: an orphan is claimed by one launch.
	adopting sync.Mutex
}

type handed struct {
	inst *Instance
	name string
	at   time.Time
}

// hand records the instance as the NodeClaim's.
func (g *ledger) hand(l Launch, inst *Instance, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byUID == nil {
		g.byUID, g.owner = map[string]handed{}, map[string]string{}
	}
	for uid, h := range g.byUID {
		if at.Sub(h.at) > LedgerTTL {
			delete(g.byUID, uid)
			delete(g.owner, h.inst.ID)
		}
	}
	g.byUID[l.identity()] = handed{inst: inst.clone(), name: l.NodeClaim, at: at}
	g.owner[inst.ID] = l.NodeClaim
	delete(g.orphans, inst.ID)
}

// handedTo is the instance handed to the NodeClaim with the UID, or nil.
func (g *ledger) handedTo(uid string) *Instance {
	g.mu.Lock()
	defer g.mu.Unlock()
	if h, ok := g.byUID[uid]; ok {
		return h.inst.clone()
	}
	return nil
}

// forget drops an instance that is gone or going: its NodeClaim, if Create is asked again for it,
// launches anew.
func (g *ledger) forget(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if name, ok := g.owner[id]; ok {
		delete(g.owner, id)
		for uid, h := range g.byUID {
			if h.inst.ID == id && h.name == name {
				delete(g.byUID, uid)
			}
		}
	}
	delete(g.orphans, id)
}

// ownerOf is the NodeClaim the instance was handed to, or "".
func (g *ledger) ownerOf(id string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.owner[id]
}

// orphan records an instance a launch may adopt.
func (g *ledger) orphan(inst *Instance) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.owner[inst.ID]; ok {
		return
	}
	if g.orphans == nil {
		g.orphans = map[string]*Instance{}
	}
	g.orphans[inst.ID] = inst.clone()
}

// Fits reports whether the instance is one the launch could have launched: the same capacity
// type, an override's instance type and zone with that type's image, and the launch's cluster,
// NodePool and EC2NodeClass tags.
func Fits(l Launch, inst *Instance) bool {
	if inst.CapacityType != l.CapacityType || (l.ImageIDs[inst.Type] != "" && inst.ImageID != "" && l.ImageIDs[inst.Type] != inst.ImageID) {
		return false
	}
	for k, v := range l.Tags {
		if (k == awsv1.TagKeyNodePool || k == awsv1.TagKeyNodeClass || len(k) > len(awsv1.TagKeyPrefixCluster) && k[:len(awsv1.TagKeyPrefixCluster)] == awsv1.TagKeyPrefixCluster) && inst.Tags[k] != v {
			return false
		}
	}
	return slices.ContainsFunc(l.Overrides, func(o Override) bool { return o.InstanceType == inst.Type && o.Zone == inst.Zone })
}

// adopt hands the launch an orphan it fits, launched less than AdoptionMaxAge ago, or returns
// nil. During AdoptionMaxAge after the first launch it lists the cluster's instances (at most
// every AdoptionRefresh) and takes as orphans the pending and running ones with no NodeClaim tag
// that no NodeClaim's providerID names (p.named) and that the ledger does not hold: an earlier
// controller launched them and died before writing their NodeClaim's status. Without p.named it
// adopts only the orphans it recorded itself.
func (p *Provider) adopt(ctx context.Context, l Launch) (*Instance, error) {
	g := &p.ledger
	g.adopting.Lock()
	defer g.adopting.Unlock()
	now := p.clock.Now()
	g.mu.Lock()
	if g.firstLaunch.IsZero() {
		g.firstLaunch = now
	}
	due := p.named != nil && now.Sub(g.firstLaunch) < AdoptionMaxAge && (g.listedAt.IsZero() || now.Sub(g.listedAt) >= AdoptionRefresh)
	g.mu.Unlock()
	if due {
		if err := p.findOrphans(ctx, now); err != nil {
			return nil, fmt.Errorf("launching nodeclaim, looking for an instance an earlier launch left, %w", err)
		}
	}
	g.mu.Lock()
	var best *Instance
	for _, o := range g.orphans {
		if now.Sub(o.LaunchTime) >= AdoptionMaxAge {
			delete(g.orphans, o.ID)
			continue
		}
		if Fits(l, o) && (best == nil || o.LaunchTime.Before(best.LaunchTime) || (o.LaunchTime.Equal(best.LaunchTime) && o.ID < best.ID)) {
			best = o
		}
	}
	g.mu.Unlock()
	if best == nil {
		return nil, nil
	}
	g.hand(l, best, now)
	return best.clone(), nil
}

// findOrphans lists the cluster's instances and records the orphans among them.
func (p *Provider) findOrphans(ctx context.Context, now time.Time) error {
	insts, err := p.List(ctx)
	if err != nil {
		return err
	}
	named, err := p.named(ctx)
	if err != nil {
		return err
	}
	ids := map[string]bool{}
	for _, pid := range named {
		ids[InstanceID(pid)] = true
	}
	p.ledger.mu.Lock()
	p.ledger.listedAt = now
	p.ledger.mu.Unlock()
	for _, i := range insts {
		if i.Tags[awsv1.TagKeyNodeClaim] != "" || ids[i.ID] || now.Sub(i.LaunchTime) >= AdoptionMaxAge ||
			(i.State != string(ec2types.InstanceStateNamePending) && i.State != string(ec2types.InstanceStateNameRunning)) {
			continue
		}
		p.ledger.orphan(i)
	}
	return nil
}
