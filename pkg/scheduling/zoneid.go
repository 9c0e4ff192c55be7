package scheduling

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// A zone ID (topology.k8s.aws/zone-id, such as usw2-az1) names the same zone as its zone name
// (us-west-2a) does, one to one within a region. The solver places new nodes by zone; it reads a
// constraint on the zone ID as the same constraint on the zone, with the IDs the offerings give
// (Offering.ZoneID). Existing nodes carry both labels.

// zoneIDsOf maps each zone ID of the instance types' offerings to its zone name.
func zoneIDsOf(types []*InstanceType) map[string]string {
	out := map[string]string{}
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.ZoneID != "" {
				out[o.ZoneID] = o.Zone
			}
		}
	}
	return out
}

// topologyKey is the key a topology group of key counts by: the zone for the zone ID.
func topologyKey(key string) string {
	if key == awsv1.LabelTopologyZoneID {
		return corev1.LabelTopologyZone
	}
	return key
}

// byZone returns rs with a requirement on the zone ID replaced by the same requirement on the
// zone (intersected with rs's own zone requirement): In and NotIn map each ID to its zone (an ID
// no offering has stays as it is, so matches no zone), Exists and DoesNotExist carry over. rs is
// returned as it is when it has no zone ID requirement.
func byZone(rs Requirements, zoneOfID map[string]string) Requirements {
	r, ok := rs[awsv1.LabelTopologyZoneID]
	if !ok {
		return rs
	}
	zone := &Requirement{Key: corev1.LabelTopologyZone, MinValues: r.MinValues, complement: r.complement, absentOK: r.absentOK,
		values: make(map[string]struct{}, len(r.values)), lower: r.lower, upper: r.upper}
	for id := range r.values {
		if name, ok := zoneOfID[id]; ok {
			zone.values[name] = struct{}{}
		} else {
			zone.values[id] = struct{}{}
		}
	}
	out := maps.Clone(rs)
	delete(out, awsv1.LabelTopologyZoneID)
	out.Add(zone)
	return out
}
