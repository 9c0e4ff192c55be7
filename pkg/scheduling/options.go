package scheduling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// PriceOptions returns, for each of the planned NodeClaim's instance-type options found in types,
// the cheapest available offering that its requirements allow (zone and capacity type), cheapest
// first, then by name. An option with no such offering is left out. It is how a caller that
// must compare a NodeClaim with what runs today (disruption's replacements) sees every option's
// price, where the plan gives only the cheapest (Launch).
func PriceOptions(nc *NodeClaim, types []*InstanceType) ([]Launch, error) {
	reqs, err := FromNodePoolRequirements(nc.Requirements)
	if err != nil {
		return nil, fmt.Errorf("reading requirements of nodeclaim %s, %w", nc.Name, err)
	}
	zones, capacityTypes := reqs[corev1.LabelTopologyZone], reqs[v1.CapacityTypeLabelKey]
	byName := make(map[string]*InstanceType, len(types))
	for _, it := range types {
		byName[it.Name] = it
	}
	out := make([]Launch, 0, len(nc.InstanceTypes))
	for _, name := range nc.InstanceTypes {
		it, ok := byName[name]
		if !ok {
			continue
		}
		best := -1
		for i, o := range it.Offerings {
			if !o.Available || zones != nil && !zones.Has(o.Zone) || capacityTypes != nil && !capacityTypes.Has(o.CapacityType) {
				continue
			}
			if best < 0 || o.Price < it.Offerings[best].Price {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		o := it.Offerings[best]
		out = append(out, Launch{InstanceType: name, Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price})
	}
	slices.SortStableFunc(out, func(a, b Launch) int {
		if c := cmp.Compare(a.Price, b.Price); c != 0 {
			return c
		}
		return strings.Compare(a.InstanceType, b.InstanceType)
	})
	return out, nil
}

// OfferingPrice returns the price of the named instance type's offering in zone with
// capacityType, available or not (a node running on it pays it), and whether there is one.
func OfferingPrice(types []*InstanceType, instanceType, zone, capacityType string) (float64, bool) {
	for _, it := range types {
		if it.Name != instanceType {
			continue
		}
		for _, o := range it.Offerings {
			if o.Zone == zone && o.CapacityType == capacityType {
				return o.Price, true
			}
		}
	}
	return 0, false
}
