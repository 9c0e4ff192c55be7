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

// The CreateFleet batcher's windows and size, upstream Karpenter's: launches asked within 35 ms
// of each other, for at most a second, up to 1,000, go out as one fleet.
const (
	FleetIdle     = 35 * time.Millisecond
	FleetMax      = time.Second
	FleetMaxItems = 1000
)

// fleetKey is what launches must share to go out as one fleet: their whole CreateFleet request
// (FleetInput: launch template configs and overrides, capacity type, tags), hashed.
func fleetKey(l Launch) (string, error) {
	b, err := json.Marshal(FleetInput(l, false))
	if err != nil {
		return "", fmt.Errorf("launching nodeclaim, hashing the fleet request, %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// launchFleet is the CreateFleet batcher's executor: one instant fleet for the batch's launches,
// which share their request, with a target capacity of one per launch. The launched instances go
// to the launches in order, each recorded in the ledger for its NodeClaim before it is handed
// over; a launch left without one (EC2 launched fewer) gets an InsufficientCapacityError when
// every error EC2 gave was a capacity error (each marked unavailable), or the first other error
// classified. An instance beyond the batch's count becomes an orphan a later launch may adopt.
func (p *Provider) launchFleet(ctx context.Context, _ string, ls []Launch) []batcher.Result[*Instance] {
	l := ls[0]
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
