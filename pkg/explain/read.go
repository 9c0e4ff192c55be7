package explain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/joinfailure"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/schedulinginput"
)

// ReadPod reads the pod and what provisioning would read for it (schedulinginput.Input: NodePools
// and their instance types from cloud, nodes, NodeClaims, DaemonSets) through kube, a direct
// client, and explains it as the controller simulates it with the scheduling settings st.
func ReadPod(ctx context.Context, kube client.Reader, cloud cloudprovider.CloudProvider, key types.NamespacedName, st scheduling.Settings) (*PodReport, error) {
	pod := &corev1.Pod{}
	if err := kube.Get(ctx, key, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("pod %s not found: check the name and -n NAMESPACE", key)
		}
		return nil, fmt.Errorf("reading pod %s, %w", key, err)
	}
	view := cluster.New(kube, false)
	in, excluded, err := schedulinginput.Input(ctx, view, cloud, []*corev1.Pod{pod}, provisioning.JoinFailureHold(kube, cloud, time.Now, joinfailure.DefaultHold))
	if err != nil {
		return nil, fmt.Errorf("reading the cluster, %w", err)
	}
	schedulinginput.ApplySettings(ctx, kube, st, in)
	all, err := view.NodePools(ctx)
	if err != nil {
		return nil, err
	}
	return Pod(in, all, excluded, pod)
}

// ReadNodeClaim reads the NodeClaim (if it still exists) and the events about it through kube, a
// direct client (the field selector on events is the API server's), and builds its report.
func ReadNodeClaim(ctx context.Context, kube client.Reader, name string) (*NodeClaimReport, error) {
	nc := &v1.NodeClaim{}
	if err := kube.Get(ctx, types.NamespacedName{Name: name}, nc); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading nodeclaim %s, %w", name, err)
		}
		nc = nil
	}
	events := &corev1.EventList{}
	if err := kube.List(ctx, events, client.MatchingFields{"involvedObject.kind": "NodeClaim", "involvedObject.name": name}); err != nil {
		return nil, fmt.Errorf("listing events of nodeclaim %s, %w", name, err)
	}
	if nc == nil && len(events.Items) == 0 {
		return nil, fmt.Errorf("nodeclaim %s not found, and no event names it: check the name (kubectl get nodeclaims)", name)
	}
	node, err := nodeOf(ctx, kube, nc)
	if err != nil {
		return nil, err
	}
	return NodeClaim(name, nc, node, events.Items), nil
}

// nodeOf returns the Node whose providerID is the NodeClaim's, or nil.
func nodeOf(ctx context.Context, kube client.Reader, nc *v1.NodeClaim) (*corev1.Node, error) {
	if nc == nil || nc.Status.ProviderID == "" {
		return nil, nil
	}
	if nc.Status.NodeName != "" {
		node := &corev1.Node{}
		err := kube.Get(ctx, types.NamespacedName{Name: nc.Status.NodeName}, node)
		if err == nil && node.Spec.ProviderID == nc.Status.ProviderID {
			return node, nil
		}
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("reading node %s, %w", nc.Status.NodeName, err)
		}
	}
	// Before registration the NodeClaim does not name its Node: look for the providerID.
	nodes := &corev1.NodeList{}
	if err := kube.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("listing nodes, %w", err)
	}
	for i := range nodes.Items {
		if nodes.Items[i].Spec.ProviderID == nc.Status.ProviderID {
			return &nodes.Items[i], nil
		}
	}
	return nil, nil
}
