package provider

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// allows reports whether a requirement admits a label that takes one of values (present=false:
// the label is absent).
func allows(op string, want []string, values []string, present bool) bool {
	switch op {
	case string(v1.NodeSelectorOpIn):
		return present && slices.ContainsFunc(values, func(v string) bool { return slices.Contains(want, v) })
	case string(v1.NodeSelectorOpNotIn):
		return !present || slices.ContainsFunc(values, func(v string) bool { return !slices.Contains(want, v) })
	case string(v1.NodeSelectorOpExists):
		return present
	case string(v1.NodeSelectorOpDoesNotExist):
		return !present
	case string(v1.NodeSelectorOpGt), string(v1.NodeSelectorOpLt), string(v1.NodeSelectorOpGte), string(v1.NodeSelectorOpLte):
		if !present || len(want) != 1 {
			return false
		}
		bound, err := strconv.ParseInt(want[0], 10, 64)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(values, func(v string) bool {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return false
			}
			switch op {
			case string(v1.NodeSelectorOpGt):
				return n > bound
			case string(v1.NodeSelectorOpLt):
				return n < bound
			case string(v1.NodeSelectorOpGte):
				return n >= bound
			}
			return n <= bound
		})
	}
	return false
}

// narrow returns the instance type restricted to the offerings the NodeClaim's requirements
// allow (zone, zone ID, capacity type), or nil when a requirement on one of the type's labels rules it
// out, no offering is left, or its allocatable cannot hold the requested resources. Requirements
// on labels instance types do not carry (karpenter.sh/nodepool, the NodePool's own labels) are
// not the instance type's to meet.
func narrow(it *cloudprovider.InstanceType, reqs []v1.NodeSelectorRequirementWithMinValues, requests corev1.ResourceList) *cloudprovider.InstanceType {
	for _, r := range reqs {
		if r.Key == corev1.LabelTopologyZone || r.Key == awsv1.LabelTopologyZoneID || r.Key == v1.CapacityTypeLabelKey {
			continue
		}
		values, present := it.Requirements[r.Key]
		if !present && r.Operator != v1.NodeSelectorOpDoesNotExist && !knownKey(r.Key) {
			continue
		}
		if !allows(string(r.Operator), r.Values, values, present) {
			return nil
		}
	}
	var offerings []*cloudprovider.Offering
	for _, o := range it.Offerings {
		if offeringAllowed(o, reqs) {
			offerings = append(offerings, o)
		}
	}
	if len(offerings) == 0 {
		return nil
	}
	allocatable := it.Allocatable()
	for name, q := range requests {
		if have, ok := allocatable[name]; !ok || have.Cmp(q) < 0 {
			return nil
		}
	}
	out := *it
	out.Offerings = offerings
	return &out
}

// offeringAllowed reports whether the requirements on the offering's labels (zone, zone ID,
// capacity type) allow it.
func offeringAllowed(o *cloudprovider.Offering, reqs []v1.NodeSelectorRequirementWithMinValues) bool {
	for _, r := range reqs {
		var ok bool
		switch r.Key {
		case corev1.LabelTopologyZone:
			ok = allows(string(r.Operator), r.Values, []string{o.Zone}, true)
		case awsv1.LabelTopologyZoneID:
			// An offering whose zone ID is unknown has none as far as the requirement can tell.
			ok = allows(string(r.Operator), r.Values, []string{o.ZoneID}, o.ZoneID != "")
		case v1.CapacityTypeLabelKey:
			ok = allows(string(r.Operator), r.Values, []string{o.CapacityType}, true)
		default:
			continue
		}
		if !ok {
			return false
		}
	}
	return true
}

// knownKey reports whether the label is one instance types carry when it applies to them (the
// well-known node labels and karpenter.k8s.aws's): a type without it does not have the property,
// so In or Exists rules it out. Other keys (karpenter.sh/nodepool, a NodePool's own labels) are
// the NodeClaim's, not the instance type's, to meet.
func knownKey(key string) bool {
	switch key {
	case corev1.LabelInstanceTypeStable, corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelWindowsBuild:
		return true
	}
	return slices.Contains(awsv1.WellKnownLabels(), key)
}

// allowedCapacityTypes are the capacity types the requirements admit; on-demand when they do not
// say.
func allowedCapacityTypes(reqs []v1.NodeSelectorRequirementWithMinValues) []string {
	all := []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}
	said := false
	var out []string
	for _, ct := range all {
		ok := true
		for _, r := range reqs {
			if r.Key == v1.CapacityTypeLabelKey {
				said = true
				ok = ok && allows(string(r.Operator), r.Values, []string{ct}, true)
			}
		}
		if ok {
			out = append(out, ct)
		}
	}
	if !said {
		return []string{v1.CapacityTypeOnDemand}
	}
	return out
}

// satisfies reports whether an instance type meets an AMI's requirements.
func satisfies(it *cloudprovider.InstanceType, reqs []corev1.NodeSelectorRequirement) bool {
	for _, r := range reqs {
		values, present := it.Requirements[r.Key]
		if !allows(string(r.Operator), r.Values, values, present) {
			return false
		}
	}
	return true
}
