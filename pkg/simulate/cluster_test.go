package simulate

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/operator"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

type volumeCloud struct{ *fake.CloudProvider }

func (volumeCloud) NodeCost(context.Context, *v1.NodePool) (float64, error) { return 0.002, nil }

// TestFromCluster: the input is what provisioning would solve now: only the pods kube-scheduler
// marked unschedulable, the DaemonSets' overhead, and each node costing the cloud's volumes plus
// the per-node cost.
func TestFromCluster(t *testing.T) {
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string, unschedulable bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
		if unschedulable {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		}
		return p
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"}, Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}}}
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	kube := crfake.NewClientBuilder().WithScheme(scheme).WithObjects(np, ds, pod("waiting", true), pod("just-created", false)).Build()
	it := &cloudprovider.InstanceType{
		Name: "m.large", Requirements: map[string][]string{corev1.LabelArchStable: {"amd64"}, corev1.LabelOSStable: {"linux"}},
		Capacity:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")},
		Offerings: []*cloudprovider.Offering{{Zone: "z1", CapacityType: v1.CapacityTypeOnDemand, Price: 0.1, Available: true}},
	}
	in, costs, excluded, err := FromCluster(t.Context(), kube, volumeCloud{&fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{it}}}, 0.01, scheduling.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(excluded) != 0 || len(in.Pods) != 1 || in.Pods[0].Name != "waiting" || len(in.DaemonSetPods) != 1 {
		t.Fatalf("excluded %v, pods %d, daemonset pods %d: want the one unschedulable pod and kube-proxy", excluded, len(in.Pods), len(in.DaemonSetPods))
	}
	if len(costs) != 1 || costs[0].Volumes != 0.002 || costs[0].PerNode != 0.01 {
		t.Errorf("costs %+v", costs)
	}
	plan, err := scheduling.Solve(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.NodeClaims) != 1 || plan.NodeClaims[0].NodeCost != 0.012 || plan.NodeClaims[0].Launch.Price != 0.1 {
		t.Errorf("plan %+v: want one m.large at $0.1/h plus $0.012/h", plan.NodeClaims)
	}
}
