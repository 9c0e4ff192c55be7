package provisioning

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
}

// NewSnapshot reads the cluster through view and the instance types through cloud. A NodePool
// whose instance types could not be read is left out (in Excluded) and its error returned
// joined with the snapshot, which is still usable. Its node costs are the cloud provider's
// (cloudprovider.NodeCoster), without the operator's --node-cost.
func NewSnapshot(ctx context.Context, view *cluster.Cluster, cloud cloudprovider.CloudProvider) (*Snapshot, error) {
	b, err := newBatch(ctx, view, cloud, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Input: b.input, NodePools: b.nodePools, Excluded: b.excluded}, errors.Join(b.transient...)
}
