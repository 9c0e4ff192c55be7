package drift

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// TestNodeClassHashKubeletOther checks that the open kubelet fields and instanceStorePolicy
// drift nodes like every other field that shapes the instance, that an empty Other hashes as no
// Other (KubeletConfiguration.MarshalJSON then writes the declared fields alone, as before
// spec.kubelet was opened, so an upgrade drifts nothing), and that the spelling of a JSON value
// does not count.
func TestNodeClassHashKubeletOther(t *testing.T) {
	base := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		AMIFamily: ptr.To("AL2023"), Role: "KarpenterNodeRole-demo",
		Kubelet: &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](20)},
	}}
	h, err := NodeClassHash(base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*awsv1.EC2NodeClass)
		same   bool
	}{
		{name: "empty Other", mutate: func(nc *awsv1.EC2NodeClass) { nc.Spec.Kubelet.Other = map[string]apiextensionsv1.JSON{} }, same: true},
		{name: "an open field", mutate: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet.Other = map[string]apiextensionsv1.JSON{"registryPullQPS": {Raw: []byte("10")}}
		}},
		{name: "instanceStorePolicy", mutate: func(nc *awsv1.EC2NodeClass) { nc.Spec.InstanceStorePolicy = ptr.To(awsv1.InstanceStorePolicyRAID0) }},
	}
	for _, tt := range tests {
		nc := base.DeepCopy()
		tt.mutate(nc)
		got, err := NodeClassHash(nc)
		if err != nil {
			t.Fatal(err)
		}
		if (got == h) != tt.same {
			t.Errorf("%s: hash %s vs %s, want same=%v", tt.name, got, h, tt.same)
		}
	}
	spaced, compact := base.DeepCopy(), base.DeepCopy()
	spaced.Spec.Kubelet.Other = map[string]apiextensionsv1.JSON{"featureGates": {Raw: []byte(`{ "A" : true }`)}}
	compact.Spec.Kubelet.Other = map[string]apiextensionsv1.JSON{"featureGates": {Raw: []byte(`{"A":true}`)}}
	hs, _ := NodeClassHash(spaced)
	hc, _ := NodeClassHash(compact)
	if hs != hc {
		t.Errorf("the same value spelt with spaces hashes %s, without %s", hs, hc)
	}
}
