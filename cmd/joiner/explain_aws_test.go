package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/joinerhq/joiner/awsemu/emutest"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/explain"
	"github.com/joinerhq/joiner/pkg/operator"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// TestExplainPodReadsInstanceTypesFromAWS runs explain pod's AWS path (the default credential
// chain and AWS_ENDPOINT_URL) against the emulator: the NodePool's instance types and prices come
// from its EC2NodeClass through EC2 and the Price List.
func TestExplainPodReadsInstanceTypesFromAWS(t *testing.T) {
	ctx := t.Context()
	e := emutest.Start(t)
	clk := e.Clock
	cluster, err := e.ClusterWithCA()
	if err != nil {
		t.Fatal(err)
	}
	e.SetEnv(t)

	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&awsv1.EC2NodeClass{}).Build()
	// The EC2NodeClass as the controller leaves it: resolved and Ready.
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: awsv1.EC2NodeClassSpec{
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		Role:                       "KarpenterNodeRole-demo",
	}}
	controller := provider.Build(kube, e.Clients, provider.Options{Cluster: cluster, Region: "us-west-2", KubernetesVersion: "1.33"}, clk)
	if err := controller.NodeClasses.Resolve(ctx, nc); err != nil {
		t.Fatal(err)
	}
	status := nc.Status
	if err := kube.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	nc.Status = status
	if err := kube.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "arm"}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"arm64"}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"},
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	for _, o := range []client.Object{np, pod} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	cloud, err := explainCloud(ctx, kube, "", "us-west-2")
	if err != nil {
		t.Fatal(err)
	}
	r, err := explain.ReadPod(ctx, kube, cloud, types.NamespacedName{Namespace: "default", Name: "p"}, scheduling.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.NodePools) != 1 || !r.NodePools[0].Fits || r.NodePools[0].FittingTypes == 0 {
		t.Fatalf("report %+v: want NodePool arm to fit with instance types from AWS", r)
	}
	for _, it := range r.NodePools[0].InstanceTypes {
		if it.Price <= 0 || it.Zone == "" {
			t.Errorf("instance type %+v has no price or zone", it)
		}
	}
	t.Logf("%s; %+v", r.Outcome, r.NodePools[0].InstanceTypes[:min(3, len(r.NodePools[0].InstanceTypes))])
	if !strings.Contains(r.Outcome, "would launch a NodeClaim of NodePool arm") {
		t.Errorf("outcome = %q", r.Outcome)
	}
}
