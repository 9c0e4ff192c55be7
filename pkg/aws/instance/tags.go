package instance

import (
	"maps"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Tags are the tags of an instance (and its volumes and network interfaces) launched for a
// NodeClaim: the EC2NodeClass spec.tags, then Joiner's own, which the CRD forbids in spec.tags
// and which always win: kubernetes.io/cluster/<cluster> = owned, eks:eks-cluster-name,
// karpenter.sh/nodepool, karpenter.sh/nodeclaim and karpenter.k8s.aws/ec2nodeclass. Name is the
// NodeClaim's name unless spec.tags sets it.
func Tags(clusterName string, nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim) map[string]string {
	tags := map[string]string{awsv1.TagKeyName: nodeClaim.Name}
	maps.Copy(tags, nodeClass.Spec.Tags)
	tags[awsv1.TagKeyPrefixCluster+clusterName] = "owned"
	tags[awsv1.TagKeyEKSClusterName] = clusterName
	tags[awsv1.TagKeyNodePool] = nodeClaim.Labels[v1.NodePoolLabelKey]
	tags[awsv1.TagKeyNodeClaim] = nodeClaim.Name
	tags[awsv1.TagKeyNodeClass] = nodeClass.Name
	return tags
}
