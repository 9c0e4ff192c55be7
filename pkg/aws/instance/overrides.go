package instance

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// MaxOverrides is the most overrides Joiner puts in one CreateFleet request.
const MaxOverrides = 60

// Allocation strategies of CreateFleet, per capacity type.
const (
	// SpotAllocationStrategy balances price against the chance of interruption.
	SpotAllocationStrategy = "price-capacity-optimized"
	// OnDemandAllocationStrategy takes the cheapest override with capacity.
	OnDemandAllocationStrategy = "lowest-price"
)

// Subnet is a subnet a node class may launch into.
type Subnet struct {
	ID   string
	Zone string
	// AvailableIPs is the number of free IPv4 addresses; the subnet with the most is preferred
	// in its zone.
	AvailableIPs int64
}

// Override is one CreateFleet launch template override.
type Override struct {
	InstanceType string
	Zone         string
	SubnetID     string
	// LaunchTemplate is the name of the launch template for the instance type's architecture.
	LaunchTemplate string
	// Price is the offering's hourly price, for ordering.
	Price float64
}

// CapacityType chooses what to buy among what the NodeClaim allows and the instance types offer:
// reserved when a reservation has room, else spot, else on-demand. It returns "" when no
// available offering of an allowed type exists.
func CapacityType(allowed []string, instanceTypes []*cloudprovider.InstanceType) string {
	for _, ct := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand} {
		if !slices.Contains(allowed, ct) {
			continue
		}
		for _, it := range instanceTypes {
			if slices.ContainsFunc(it.Offerings, func(o *cloudprovider.Offering) bool { return o.Available && o.CapacityType == ct }) {
				return ct
			}
		}
	}
	return ""
}

// Overrides builds the CreateFleet overrides for a capacity type: one per instance type and zone
// with an available offering, a subnet, and a launch template for the instance type's
// architecture (launchTemplates maps kubernetes.io/arch values to launch template names), in the
// subnet with the most free addresses of that zone. An instance type without a launch template
// of its own architecture is never included. Overrides are ordered by price (then name and zone)
// and cut to MaxOverrides. With none, it returns an InsufficientCapacityError saying why.
func Overrides(instanceTypes []*cloudprovider.InstanceType, capacityType string, subnets []Subnet, launchTemplates map[string]string) ([]Override, error) {
	bestSubnet := map[string]Subnet{}
	for _, s := range subnets {
		if best, ok := bestSubnet[s.Zone]; !ok || s.AvailableIPs > best.AvailableIPs || (s.AvailableIPs == best.AvailableIPs && s.ID < best.ID) {
			bestSubnet[s.Zone] = s
		}
	}
	var (
		out         []Override
		noTemplate  []string
		noOfferings = true
	)
	for _, it := range instanceTypes {
		archs := it.Requirements[corev1.LabelArchStable]
		if len(archs) != 1 || launchTemplates[archs[0]] == "" {
			noTemplate = append(noTemplate, it.Name)
			continue
		}
		for _, o := range it.Offerings {
			if !o.Available || o.CapacityType != capacityType {
				continue
			}
			noOfferings = false
			subnet, ok := bestSubnet[o.Zone]
			if !ok {
				continue
			}
			out = append(out, Override{InstanceType: it.Name, Zone: o.Zone, SubnetID: subnet.ID, LaunchTemplate: launchTemplates[archs[0]], Price: o.Price})
		}
	}
	slices.SortFunc(out, func(a, b Override) int {
		return cmp.Or(cmp.Compare(a.Price, b.Price), cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(a.Zone, b.Zone))
	})
	if len(out) > MaxOverrides {
		out = out[:MaxOverrides]
	}
	if len(out) == 0 {
		var why error
		switch {
		case len(noTemplate) == len(instanceTypes) && len(instanceTypes) > 0:
			why = fmt.Errorf("no AMI matches the architecture of instance types %v", noTemplate)
		case noOfferings:
			why = fmt.Errorf("no available %s offering", capacityType)
		default:
			why = errors.New("no subnet in the zones of the available offerings")
		}
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("building fleet overrides, %w", why))
	}
	return out, nil
}
