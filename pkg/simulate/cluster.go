package simulate

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/joinfailure"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/schedulinginput"
)

// FromCluster reads what provisioning would solve now from a live cluster and cloud: the pending
// pods kube-scheduler found no node for, the NodePools that can launch (with their instance
// types, prices and node costs from cloud), the nodes and in-flight NodeClaims and the DaemonSets
// (schedulinginput.Input), every node costing nodeCost more. excluded are the NodePools that cannot
// launch now, with the reason. st are the scheduling settings to solve with (their default
// spreads' selectors read from the cluster, as the controller reads them).
func FromCluster(ctx context.Context, kube client.Reader, cloud cloudprovider.CloudProvider, nodeCost float64, st scheduling.Settings) (in *scheduling.Input, costs []NodeCost, excluded []scheduling.Reason, err error) {
	view := cluster.New(kube, false)
	unbound, err := view.UnboundPods(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	pods := slices.DeleteFunc(slices.Clone(unbound), func(p *corev1.Pod) bool { return !schedulinginput.Provisionable(p) })
	in, excluded, err = schedulinginput.Input(ctx, view, cloud, pods, provisioning.JoinFailureHold(kube, cloud, time.Now, joinfailure.DefaultHold))
	if err != nil {
		return nil, nil, nil, err
	}
	schedulinginput.ApplySettings(ctx, kube, st, in)
	if in.NodeCosts == nil {
		in.NodeCosts = map[string]float64{}
	}
	for _, np := range in.NodePools {
		costs = append(costs, NodeCost{NodePool: np.Name, Volumes: in.NodeCosts[np.Name], VolumesText: "of its EC2NodeClass", PerNode: nodeCost})
		in.NodeCosts[np.Name] += nodeCost
	}
	return in, costs, excluded, nil
}
