package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/console"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, testenv.CreateDefaultServiceAccount))
}

func get(t *testing.T, srv *httptest.Server, path string) string {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", path, resp.Status, b)
	}
	return string(b)
}

func create(ctx context.Context, t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
}

// TestPagesOnTheAPIServer: a NodePool with a launched, joined NodeClaim and one whose node failed
// to join, a pending pod no NodePool can hold: the pages show the cost, the reason and the
// diagnosis.
func TestPagesOnTheAPIServer(t *testing.T) {
	ctx := t.Context()
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	create(ctx, t, np)
	labels := map[string]string{v1.NodePoolLabelKey: "default", corev1.LabelInstanceTypeStable: "t3.small", corev1.LabelTopologyZone: "us-west-2a", v1.CapacityTypeLabelKey: "on-demand"}
	claim := func(name, providerID string, conds ...metav1.Condition) *v1.NodeClaim {
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"t3.small"}}},
			NodeClassRef: np.Spec.Template.Spec.NodeClassRef,
		}}
		create(ctx, t, nc)
		nc.Status.ProviderID = providerID
		now := metav1.Now()
		for _, c := range conds {
			c.LastTransitionTime, c.ObservedGeneration = now, nc.Generation
			nc.Status.Conditions = append(nc.Status.Conditions, c)
		}
		if err := env.Client.Status().Update(ctx, nc); err != nil {
			t.Fatal(err)
		}
		return nc
	}
	launched := metav1.Condition{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched"}
	claim("default-ok", "aws:///us-west-2a/i-0aaa", launched, metav1.Condition{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: "Registered"})
	claim("default-bad", "aws:///us-west-2a/i-0bbb", launched, metav1.Condition{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionFalse,
		Reason: "NodeRoleNotMapped", Message: "the node role is not in aws-auth: add an access entry of type EC2_LINUX"})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1", Labels: labels}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-0aaa"}}
	create(ctx, t, node)
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("29")}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	podOf := func(name, nodeName, cpu string, selector map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: nodeName, NodeSelector: selector,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	create(ctx, t, podOf("running", "ip-10-0-0-1", "1", nil), podOf("wants-gpu", "", "500m", map[string]string{"pod-type": "gpu"}))

	cloud := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{testkit.InstanceType("t3.small", "amd64", 0.0208)}}
	c, err := console.New(env.Client, cloud, clock.RealClock{}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		path string
		want []string
	}{
		// Two launched t3.small on-demand at $0.0208: $0.0416 per hour; one failed join.
		{"/", []string{`<dd id="cost">$0.0416</dd>`, "<td>default</td><td>on-demand</td><td>2</td><td>$0.0416</td>", "Failed joins</dt><dd class=\"bad\"><a href=\"/nodeclaims\">1</a>"}},
		{"/nodes", []string{"NodePool default (1)", "ip-10-0-0-1", "1.00/2.00", "$0.0208", "kept"}},
		{"/pending", []string{"Pending pods (1)", "default/wants-gpu", "LabelNotOffered", "the pod requires pod-type In [gpu]"}},
		{"/nodeclaims", []string{"default-bad <span class=\"tag blocked\">join failed</span>", "NodeRoleNotMapped", "add an access entry of type EC2_LINUX", "Diagnosis"}},
		{"/nodeclasses", []string{"EC2NodeClasses", "No EC2NodeClass."}},
		{"/api/pending", []string{`"page":"pending"`, "wants-gpu"}},
		{"/static/style.css", []string{"prefers-color-scheme: dark"}},
		{"/static/console.js", []string{"/api/"}},
	} {
		body := get(t, srv, tc.path)
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s does not contain %q:\n%s", tc.path, w, body)
			}
		}
	}
	// The failed NodeClaim is listed before the healthy one.
	if body := get(t, srv, "/nodeclaims"); strings.Index(body, "default-bad") > strings.Index(body, "default-ok") {
		t.Errorf("the failed NodeClaim should come first")
	}
	// Read-only: no method but GET.
	resp, err := http.Post(srv.URL+"/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %s, want 405", resp.Status)
	}
}
