package state

// HourlyPrice is what an instance of the named type costs per hour in USD at the world's Now, by
// capacity type: on-demand, the type's on-demand price in the region (what Price List
// GetProducts answers); spot, the type's spot price in the zone (what DescribeSpotPriceHistory
// answers for Now). ok is false for a type the catalogue does not know, a region or zone where it
// has no price, or another capacity type.
func (w *World) HourlyPrice(instanceType, region, zone, capacityType string) (price float64, ok bool) {
	t, ok := w.Catalog.Type(instanceType)
	if !ok {
		return 0, false
	}
	switch capacityType {
	case CapacityOnDemand:
		price, ok = t.OnDemandUSD[region]
		return price, ok
	case CapacitySpot:
		return t.SpotPrice(zone, w.Now)
	}
	return 0, false
}
