package userdata

import (
	"maps"
	"slices"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Cluster is what nodes need to know to join the cluster.
type Cluster struct {
	// Name is the EKS cluster's name.
	Name string
	// Endpoint is the API server URL.
	Endpoint string
	// CABundle is the base64-encoded cluster CA certificate.
	CABundle string
	// DNS is the cluster DNS Service IP; empty leaves it to spec.kubelet.clusterDNS or the AMI.
	DNS string
	// CIDR is the service CIDR.
	CIDR string
}

// NewOptions returns the rendering options of a NodeClaim launched with a node class. maxPods is
// the launched instance type's max pods, or nil for the node class's or AMI's default.
func NewOptions(cluster Cluster, nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim, maxPods *int32) Options {
	opts := Options{
		Family:          FamilyOf(nodeClass),
		ClusterName:     cluster.Name,
		ClusterEndpoint: cluster.Endpoint,
		CABundle:        cluster.CABundle,
		ClusterDNS:      cluster.DNS,
		ClusterCIDR:     cluster.CIDR,
		Labels:          maps.Clone(nodeClaim.Labels),
		Taints:          slices.Clone(nodeClaim.Spec.Taints),
		StartupTaints:   slices.Clone(nodeClaim.Spec.StartupTaints),
		MaxPods:         maxPods,
		Kubelet:         nodeClass.Spec.Kubelet,
	}
	if p := nodeClass.Spec.InstanceStorePolicy; p != nil {
		opts.InstanceStorePolicy = *p
	}
	if nodeClass.Spec.UserData != nil {
		opts.UserData = *nodeClass.Spec.UserData
	}
	return opts
}

// PreviewNodeClaim is a NodeClaim as a NodePool would create it, before an instance type is
// chosen: the template's labels (and the karpenter.sh/nodepool label), taints and startup taints.
// It is what `joiner render-userdata` renders for.
func PreviewNodeClaim(nodePool *v1.NodePool) *v1.NodeClaim {
	template := nodePool.Spec.Template
	labels := maps.Clone(template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1.NodePoolLabelKey] = nodePool.Name
	nodeClaim := &v1.NodeClaim{Spec: v1.NodeClaimSpec{
		Taints:        slices.Clone(template.Spec.Taints),
		StartupTaints: slices.Clone(template.Spec.StartupTaints),
		NodeClassRef:  template.Spec.NodeClassRef,
	}}
	nodeClaim.Name = nodePool.Name + "-preview"
	nodeClaim.Labels = labels
	return nodeClaim
}
