package instance

import (
	"slices"
	"strings"
	"time"
)

// GarbageCollectionGrace is how long an instance may exist without a NodeClaim before it is
// terminated: a launch's NodeClaim status may not be written yet.
const GarbageCollectionGrace = 30 * time.Second

// Described is an instance found by its cluster tag (kubernetes.io/cluster/<name>) and
// karpenter.sh/nodepool tag.
type Described struct {
	ID         string
	LaunchTime time.Time
	// State is the EC2 state name: pending, running, shutting-down, terminated, stopping,
	// stopped.
	State string
	// NodeClaim is the karpenter.sh/nodeclaim tag: the NodeClaim it was launched for.
	NodeClaim string
}

// Leaked returns, sorted, the IDs of the instances to terminate: not already terminating or
// terminated, launched at least grace ago, named by no NodeClaim's providerID
// (aws:///<zone>/<instance-id>), and not launched for one of the launching NodeClaims (those
// whose providerID is not written yet: a controller that died between CreateFleet and the
// status write adopts the instance when it creates again, so it is not leaked).
func Leaked(instances []Described, providerIDs, launching []string, now time.Time, grace time.Duration) []string {
	owned := map[string]bool{}
	for _, id := range providerIDs {
		owned[InstanceID(id)] = true
	}
	var out []string
	for _, inst := range instances {
		if inst.State == "shutting-down" || inst.State == "terminated" || owned[inst.ID] || now.Sub(inst.LaunchTime) < grace {
			continue
		}
		if inst.NodeClaim != "" && slices.Contains(launching, inst.NodeClaim) {
			continue
		}
		out = append(out, inst.ID)
	}
	slices.Sort(out)
	return out
}

// InstanceID is the instance ID of a provider ID (aws:///us-west-2a/i-0123456789abcdef0), or ""
// when it is not one.
func InstanceID(providerID string) string {
	rest, ok := strings.CutPrefix(providerID, "aws:///")
	if !ok {
		return ""
	}
	id := rest[strings.LastIndex(rest, "/")+1:]
	if !strings.HasPrefix(id, "i-") {
		return ""
	}
	return id
}
