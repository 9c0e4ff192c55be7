package schedulinginput

import (
	"context"
	"errors"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// Snapshot is the scheduling input provisioning would build now, without pending pods: every
// NodePool that can launch with the instance types, the DaemonSet pods and every node as the
// solver sees it (nodes being deleted take no pod but count against limits). Disruption
// simulates with it what would be launched if some nodes went away, the same way provisioning
// would launch it.
type Snapshot struct {
	// Input has no Pods; the caller adds them and removes the Nodes it simulates away.
	Input scheduling.Input
	// NodePools are those in Input.NodePools as stored, by name: NewNodeClaim takes them.
	NodePools map[string]*v1.NodePool
	// Excluded are the NodePools that cannot launch now, with the reason.
	Excluded []scheduling.Reason
	// nodeCost is the operator's per-node cost (see NodeCost).
	nodeCost float64
}

// NewSnapshot reads the cluster through view and the instance types through cloud. A NodePool
// whose instance types could not be read is left out (in Excluded) and its error returned
// joined with the snapshot, which is still usable. held, when not nil, leaves out the NodePools
// whose launches provisioning holds (pass JoinFailureHold with provisioning's settings, so that
// no replacement is planned on a NodePool whose nodes do not join). Every node costs nodeCost
// per hour (the operator's --node-cost) beyond its instance and what the cloud provider prices
// per node (cloudprovider.NodeCoster), as provisioning weighs it.
func NewSnapshot(ctx context.Context, view *cluster.Cluster, cloud cloudprovider.CloudProvider, held HoldFunc, nodeCost float64) (*Snapshot, error) {
	b, err := NewBatch(ctx, view, cloud, nil, held, nodeCost)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Input: b.Input, NodePools: b.NodePools, Excluded: b.Excluded, nodeCost: nodeCost}, errors.Join(b.Transient...)
}

// NodeCost is what a node of the NodePool costs per hour beyond its instance: Input.NodeCosts
// for a NodePool that can launch or is held, else the operator's per-node cost alone (the
// cloud provider's part could not be read).
func (s *Snapshot) NodeCost(pool string) float64 {
	if cost, ok := s.Input.NodeCosts[pool]; ok {
		return cost
	}
	return s.nodeCost
}

// HoldFunc says why a NodePool's launches are held, or nil when they are not; an error is
// transient (the NodePool is then not held).
type HoldFunc func(ctx context.Context, np *v1.NodePool) (*scheduling.Reason, error)
