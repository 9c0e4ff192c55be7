package instance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/pkg/aws/batcher"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// The CreateFleet batcher's windows and size: launches asked within 200 ms of each other, for at
// most a second, up to 1,000, go out as one fleet. Upstream Karpenter closes a batch after 35 ms
// idle; here the NodeClaims of one provisioning pass reach the launch 20 at a time (provisioning
// creates them so) and each NodeClaim's launch resolves its launch templates first, so launches
// alike arrive up to a few hundred milliseconds apart: at 35 ms a 1,000-pod scale-up made 83
// fleets for 446 NodeClaims. A fleet beyond EC2's CreateFleet burst waits 200 ms or more for its
// token anyway (pkg/aws/apilimits: 50, then 5 a second).
const (
	FleetIdle     = 200 * time.Millisecond
	FleetMax      = time.Second
	FleetMaxItems = 1000
)

// fleetKey is what launches must share to go out in one batch: their CreateFleet request
// (FleetInput: launch template configs, capacity type, tags) with the overrides cut to the
// cheapest, hashed. NodeClaims packed with different pods differ in the tail of their overrides
// (a NodeClaim with more pods fits fewer instance types), so a key of the whole request merged a
// quarter of the launches of a 1,000-pod scale-up; launches whose cheapest override is the same
// launch it under EC2's allocation strategy anyway, and launchFleet sends them as one fleet over
// the overrides they share (sharedFleets).
func fleetKey(l Launch) (string, error) {
	keyed := l
	if len(l.Overrides) > 0 {
		keyed.Overrides = l.Overrides[:1]
	}
	b, err := json.Marshal(FleetInput(keyed, false))
	if err != nil {
		return "", fmt.Errorf("launching nodeclaim, hashing the fleet request, %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// fleetGroup is launches of one batch that go out as one fleet over the overrides all of them
// allow.
type fleetGroup struct {
	overrides []Override
	members   []int
	// need is the most overrides the group must keep: half of its longest member's, so that
	// merging never leaves a launch less than half its own fallbacks against a capacity error.
	need int
}

// sharedFleets splits a batch (launches of one fleetKey, so sharing their cheapest override)
// into groups that each go out as one fleet: a launch joins the first group whose shared
// overrides, intersected with its own, keep at least half of every member's overrides. The
// shared overrides keep the first launch's order (by price), so the cheapest stays first and an
// instance of the fleet fits every member's NodeClaim.
func sharedFleets(ls []Launch) []fleetGroup {
	var groups []fleetGroup
	for i, l := range ls {
		need := (len(l.Overrides) + 1) / 2
		joined := false
		for g := range groups {
			shared := intersectOverrides(groups[g].overrides, l.Overrides)
			if len(shared) == 0 || len(shared) < max(groups[g].need, need) {
				continue
			}
			groups[g].overrides, groups[g].members, groups[g].need = shared, append(groups[g].members, i), max(groups[g].need, need)
			joined = true
			break
		}
		if !joined {
			groups = append(groups, fleetGroup{overrides: l.Overrides, members: []int{i}, need: need})
		}
	}
	return groups
}

// intersectOverrides is the overrides of a also in b (same instance type, zone, subnet and launch
// template), in a's order.
func intersectOverrides(a, b []Override) []Override {
	type pool struct{ instanceType, zone, subnet, template string }
	in := make(map[pool]bool, len(b))
	for _, o := range b {
		in[pool{o.InstanceType, o.Zone, o.SubnetID, o.LaunchTemplate}] = true
	}
	out := make([]Override, 0, len(a))
	for _, o := range a {
		if in[pool{o.InstanceType, o.Zone, o.SubnetID, o.LaunchTemplate}] {
			out = append(out, o)
		}
	}
	return out
}

// launchFleet is the CreateFleet batcher's executor: one instant fleet for each group of the
// batch's launches (sharedFleets: usually one for the whole batch), over the overrides the group
// shares, with a target capacity of one per launch. The launched instances go
// to the launches in order, each recorded in the ledger for its NodeClaim before it is handed
// over; a launch left without one (EC2 launched fewer) gets an InsufficientCapacityError when
// every error EC2 gave was a capacity error (each marked unavailable), or the first other error
// classified. An instance beyond the batch's count becomes an orphan a later launch may adopt.
func (p *Provider) launchFleet(ctx context.Context, _ string, ls []Launch) []batcher.Result[*Instance] {
	results := make([]batcher.Result[*Instance], len(ls))
	for _, g := range sharedFleets(ls) {
		members := make([]Launch, 0, len(g.members))
		for _, i := range g.members {
			members = append(members, ls[i])
		}
		shared := ls[g.members[0]]
		shared.Overrides = g.overrides
		for j, r := range p.launchGroup(ctx, shared, members) {
			results[g.members[j]] = r
		}
	}
	return results
}

// launchGroup launches one fleet of l's request for the launches ls, which all allow l's
// overrides (launchFleet's contract).
func (p *Provider) launchGroup(ctx context.Context, l Launch, ls []Launch) []batcher.Result[*Instance] {
	at := p.clock.Now()
	in := FleetInput(l, false)
	in.TargetCapacitySpecification.TotalTargetCapacity = aws.Int32(int32(len(ls))) //nolint:gosec // at most FleetMaxItems
	// No ClientToken: the SDK fills one per call, which its retries of that call reuse, so a
	// retry after a lost answer launches nothing more. A token of the batch's NodeClaims would
	// have EC2 answer a later batch of the same NodeClaims (one relaunched after its instance was
	// terminated) with the first batch's instances.
	results := make([]batcher.Result[*Instance], len(ls))
	out, err := p.ec2.CreateFleet(ctx, in)
	if err != nil {
		err = p.classify(ctx, err)
		for i := range results {
			results[i].Err = err
		}
		return results
	}
	zoneOf := map[string]string{}
	for _, o := range l.Overrides {
		zoneOf[o.SubnetID] = o.Zone
	}
	var (
		capacityErrs []string
		otherErrs    []ec2types.CreateFleetError
	)
	for _, e := range out.Errors {
		code := aws.ToString(e.ErrorCode)
		if IsCapacityError(code) && e.LaunchTemplateAndOverrides != nil && e.LaunchTemplateAndOverrides.Overrides != nil {
			ov := e.LaunchTemplateAndOverrides.Overrides
			zone := aws.ToString(ov.AvailabilityZone)
			if zone == "" {
				zone = zoneOf[aws.ToString(ov.SubnetId)]
			}
			p.unavailable.MarkUnavailable(string(ov.InstanceType), zone, l.CapacityType)
			capacityErrs = append(capacityErrs, fmt.Sprintf("%s in %s", ov.InstanceType, zone))
			continue
		}
		otherErrs = append(otherErrs, e)
	}
	var insts []*Instance
	for _, fi := range out.Instances {
		for _, id := range fi.InstanceIds {
			inst := &Instance{
				ID: id, Type: string(fi.InstanceType), CapacityType: l.CapacityType, ImageID: l.ImageIDs[string(fi.InstanceType)],
				SecurityGroupIDs: slices.Clone(l.SecurityGroupIDs), State: string(ec2types.InstanceStateNamePending), LaunchTime: at, Tags: maps.Clone(l.Tags),
			}
			if lo := fi.LaunchTemplateAndOverrides; lo != nil && lo.Overrides != nil {
				inst.Zone = aws.ToString(lo.Overrides.AvailabilityZone)
				inst.SubnetID = aws.ToString(lo.Overrides.SubnetId)
				if inst.Zone == "" {
					inst.Zone = zoneOf[inst.SubnetID]
				}
			}
			insts = append(insts, inst)
		}
	}
	var short error
	if len(insts) < len(ls) {
		switch {
		case len(otherErrs) > 0:
			first := otherErrs[0]
			short = p.classify(ctx, &smithy.GenericAPIError{Code: aws.ToString(first.ErrorCode), Message: aws.ToString(first.ErrorMessage)})
		case len(capacityErrs) > 0:
			short = cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim, no %s capacity for %s", l.CapacityType, strings.Join(capacityErrs, ", ")))
		default:
			short = cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim, the fleet launched %d of %d %s instances and gave no error", len(insts), len(ls), l.CapacityType))
		}
	}
	for i, l := range ls {
		if i >= len(insts) {
			results[i].Err = short
			continue
		}
		p.recent.put(insts[i], at)
		p.ledger.hand(l, insts[i], at)
		results[i].Out = insts[i].clone()
	}
	for _, extra := range insts[min(len(ls), len(insts)):] {
		log.FromContext(ctx).Info("The fleet launched more instances than asked; a later launch may adopt them", "instance", extra.ID)
		p.recent.put(extra, at)
		p.ledger.orphan(extra)
	}
	return results
}
