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
}

// Leaked returns, sorted, the IDs of the instances to terminate: not already terminating or
// terminated, launched at least grace ago, and named by no NodeClaim's providerID
// (aws:///<zone>/<instance-id>).
func Leaked(instances []Described, providerIDs []string, now time.Time, grace time.Duration) []string {
	owned := map[string]bool{}
	for _, id := range providerIDs {
		owned[InstanceID(id)] = true
	}
	var out []string
	for _, inst := range instances {
		if inst.State == "shutting-down" || inst.State == "terminated" || owned[inst.ID] || now.Sub(inst.LaunchTime) < grace {
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
