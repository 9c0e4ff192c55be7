package instance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func TestTags(t *testing.T) {
	nodeClaim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-x7k2p", Labels: map[string]string{v1.NodePoolLabelKey: "default"}}}
	tests := []struct {
		name     string
		specTags map[string]string
		want     map[string]string
	}{
		{
			name: "defaults",
			want: map[string]string{
				"Name": "default-x7k2p", "kubernetes.io/cluster/demo": "owned", "eks:eks-cluster-name": "demo",
				"karpenter.sh/nodepool": "default", "karpenter.sh/nodeclaim": "default-x7k2p", "karpenter.k8s.aws/ec2nodeclass": "web",
			},
		},
		{
			name:     "spec.tags, Name among them; Joiner's own keys win",
			specTags: map[string]string{"team": "web", "Name": "web-node", "karpenter.sh/nodepool": "forged"},
			want: map[string]string{
				"Name": "web-node", "team": "web", "kubernetes.io/cluster/demo": "owned", "eks:eks-cluster-name": "demo",
				"karpenter.sh/nodepool": "default", "karpenter.sh/nodeclaim": "default-x7k2p", "karpenter.k8s.aws/ec2nodeclass": "web",
			},
		},
	}
	for _, tt := range tests {
		nodeClass := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: awsv1.EC2NodeClassSpec{Tags: tt.specTags}}
		if diff := cmp.Diff(tt.want, Tags("demo", nodeClass, nodeClaim)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
