package instance

import (
	"maps"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Tags are every tag an instance launched for a NodeClaim ends with: CommonTags, which it is
// launched with, plus the NodeClaim's own (NodeClaimTags, added once its node is known): the
// NodeClaim's name as karpenter.sh/nodeclaim and, unless spec.tags sets it, Name. Name is the
// node's name once it is known; here, where it is not, the NodeClaim's.
func Tags(clusterName string, nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim) map[string]string {
	tags := CommonTags(clusterName, nodeClass, nodeClaim.Labels[v1.NodePoolLabelKey])
	maps.Copy(tags, NodeClaimTags(nodeClass, nodeClaim.Name, nodeClaim.Name))
	return tags
}

// CommonTags are the tags of an instance (and its volumes and the fleet) at launch, the same for
// every NodeClaim of the NodePool and node class, so that launches alike go out as one fleet:
// the EC2NodeClass spec.tags, then Joiner's own, which the CRD forbids in spec.tags and which
// always win: kubernetes.io/cluster/<cluster> = owned, eks:eks-cluster-name,
// karpenter.sh/nodepool and karpenter.k8s.aws/ec2nodeclass.
func CommonTags(clusterName string, nodeClass *awsv1.EC2NodeClass, nodePool string) map[string]string {
	tags := maps.Clone(nodeClass.Spec.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[awsv1.TagKeyPrefixCluster+clusterName] = "owned"
	tags[awsv1.TagKeyEKSClusterName] = clusterName
	tags[awsv1.TagKeyNodePool] = nodePool
	tags[awsv1.TagKeyNodeClass] = nodeClass.Name
	return tags
}

// NodeClaimTags are the tags only one instance carries, added after its launch (upstream
// Karpenter tags the same keys once the node registered): karpenter.sh/nodeclaim = the
// NodeClaim's name and, unless spec.tags sets Name, Name = the node's name.
func NodeClaimTags(nodeClass *awsv1.EC2NodeClass, nodeClaim, nodeName string) map[string]string {
	tags := map[string]string{awsv1.TagKeyNodeClaim: nodeClaim}
	if _, set := nodeClass.Spec.Tags[awsv1.TagKeyName]; !set {
		tags[awsv1.TagKeyName] = nodeName
	}
	return tags
}
