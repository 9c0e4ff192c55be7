package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	clientfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/console"
	"github.com/joinerhq/joiner/pkg/operator"
)

// BenchmarkPages serves each page of a cluster of 1,000 nodes (and NodeClaims) and 10,000 pods,
// 100 of them pending, from a fake client: the server time of one page is ns/op.
//
//	go test -run '^$' -bench BenchmarkPages -benchtime 5x ./pkg/console/
func BenchmarkPages(b *testing.B) {
	scheme, err := operator.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	kube := clientfake.NewClientBuilder().WithScheme(scheme).WithObjects(benchObjects()...).Build()
	benchPages(b, kube)
}

// benchObjects is a NodePool, 1,000 NodeClaims and their Nodes, and 10,000 pods: 9,900 bound, ten
// per node, and 100 pending that no NodePool can hold.
func benchObjects() []client.Object {
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	objs := []client.Object{np}
	labels := map[string]string{v1.NodePoolLabelKey: "default", corev1.LabelInstanceTypeStable: "t3.small", corev1.LabelTopologyZone: "us-west-2a", v1.CapacityTypeLabelKey: "on-demand", corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"}
	now := metav1.Now()
	for i := range 1000 {
		id := fmt.Sprintf("aws:///us-west-2a/i-%05d", i)
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("default-%04d", i), Labels: labels}, Status: v1.NodeClaimStatus{ProviderID: id, NodeName: fmt.Sprintf("node-%04d", i),
			Conditions: []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: now}, {Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: "Registered", LastTransitionTime: now}}}}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i), Labels: labels}, Spec: corev1.NodeSpec{ProviderID: id},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("29")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		objs = append(objs, nc, node)
	}
	for i := range 10000 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%05d", i), Namespace: "default"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if i < 100 {
			p.Status.Phase = corev1.PodPending
			p.Spec.NodeSelector = map[string]string{"pod-type": "gpu"}
		} else {
			p.Spec.NodeName = fmt.Sprintf("node-%04d", i%1000)
		}
		objs = append(objs, p)
	}
	return objs
}

func benchPages(b *testing.B, kube client.Reader) {
	cloud := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{fakeType("t3.small", "amd64", 0.0208), fakeType("m7i.large", "amd64", 0.1008)}}
	c, err := console.New(kube, cloud, clock.RealClock{}, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	h := c.Handler()
	for _, path := range []string{"/", "/nodes", "/pending", "/nodeclaims", "/nodeclasses", "/api/nodes"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String()[:min(500, rec.Body.Len())])
				}
			}
		})
	}
}
