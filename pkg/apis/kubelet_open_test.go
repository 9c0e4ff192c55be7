package apis_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// TestKubeletOpenMapKept applies the Karpenter v1.15-style EC2NodeClasses and checks that the API
// server keeps spec.kubelet and spec.instanceStorePolicy as written (no field pruned), and that
// the typed EC2NodeClass reads the undeclared kubelet fields into Other and writes them back.
func TestKubeletOpenMapKept(t *testing.T) {
	ctx := context.WithoutCancel(t.Context())
	for file, objects := range readManifests(t, "testdata/valid/ec2nodeclasses-kubelet-v115.yaml") {
		for _, obj := range objects {
			t.Run(obj.GetName(), func(t *testing.T) {
				sent := obj.DeepCopy()
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Fatalf("%s: creating %s: %v", file, obj.GetName(), err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(awsv1.SchemeGroupVersion.WithKind("EC2NodeClass"))
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
					t.Fatal(err)
				}
				for _, field := range []string{"kubelet", "instanceStorePolicy"} {
					want, _, _ := unstructured.NestedFieldNoCopy(sent.Object, "spec", field)
					have, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", field)
					if diff := cmp.Diff(normalJSON(t, want), normalJSON(t, have)); diff != "" {
						t.Errorf("spec.%s as stored (-sent +stored):\n%s", field, diff)
					}
				}

				typed := &awsv1.EC2NodeClass{}
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), typed); err != nil {
					t.Fatal(err)
				}
				sentKubelet, _, _ := unstructured.NestedMap(sent.Object, "spec", "kubelet")
				raw, err := json.Marshal(typed.Spec.Kubelet)
				if err != nil {
					t.Fatal(err)
				}
				var written map[string]any
				if err := json.Unmarshal(raw, &written); err != nil {
					t.Fatal(err)
				}
				// metav1.Duration writes its canonical form (1m as 1m0s): the same duration.
				sentKubelet = maps.Clone(sentKubelet)
				delete(sentKubelet, "evictionSoftGracePeriod")
				delete(written, "evictionSoftGracePeriod")
				if diff := cmp.Diff(normalJSON(t, sentKubelet), any(written)); diff != "" {
					t.Errorf("typed spec.kubelet written back (-sent +written):\n%s", diff)
				}
				for name := range typed.Spec.Kubelet.Other {
					if _, ok := sentKubelet[name]; !ok {
						t.Errorf("Other holds %s, which the manifest does not set", name)
					}
				}
			})
		}
	}
}

// TestKubeletOtherTypedCreate creates an EC2NodeClass through the typed client with undeclared
// kubelet fields in Other and reads them back.
func TestKubeletOtherTypedCreate(t *testing.T) {
	ctx := context.WithoutCancel(t.Context())
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		Role:                       "KarpenterNodeRole-demo",
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		InstanceStorePolicy:        ptr.To(awsv1.InstanceStorePolicyRAID0),
		Kubelet: &awsv1.KubeletConfiguration{
			MaxPods: ptr.To[int32](42),
			Other: map[string]apiextensionsv1.JSON{
				"registryPullQPS": {Raw: []byte(`10`)},
				"featureGates":    {Raw: []byte(`{"InPlacePodVerticalScaling":true}`)},
			},
		},
	}}
	nc.Name = "kubelet-other-typed"
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatalf("creating: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, nc) })
	got := &awsv1.EC2NodeClass{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Kubelet == nil || ptr.Deref(got.Spec.Kubelet.MaxPods, 0) != 42 {
		t.Fatalf("spec.kubelet.maxPods lost: %+v", got.Spec.Kubelet)
	}
	if names := slices.Sorted(maps.Keys(got.Spec.Kubelet.Other)); !slices.Equal(names, []string{"featureGates", "registryPullQPS"}) {
		t.Errorf("Other = %v, want featureGates and registryPullQPS", names)
	}
	if v := string(got.Spec.Kubelet.Other["featureGates"].Raw); v != `{"InPlacePodVerticalScaling":true}` {
		t.Errorf("featureGates = %s", v)
	}
}

// normalJSON is v as encoding/json reads it back (numbers as float64), so that values decoded by
// different decoders compare equal.
func normalJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
