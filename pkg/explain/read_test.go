package explain_test

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/explain"
	"github.com/joinerhq/joiner/pkg/joinfailure"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, testenv.CreateDefaultServiceAccount))
}

// TestReadPodFromTheAPIServer is the acceptance case on a real API server: a pod asking for a label
// value no NodePool offers is explained with each NodePool and the values it offers.
func TestReadPodFromTheAPIServer(t *testing.T) {
	ctx := t.Context()
	for _, np := range []*v1.NodePool{
		nodePool("default", map[string]string{"nodegroup": "karpenter"}, requirement(corev1.LabelArchStable, v1.NodeSelectorOpIn, "amd64")),
		nodePool("cicd-armapps", map[string]string{"pod-type": "armapp"}, requirement(corev1.LabelArchStable, v1.NodeSelectorOpIn, "arm64")),
	} {
		if err := env.Client.Create(ctx, np); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, np) })
	}
	p := pod("500m", selector("pod-type", "gpu"))
	p.Name = "wants-gpu"
	p.Spec.Containers[0].Image = "busybox"
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, p) })
	cloud := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{testkit.InstanceType("t3.small", "amd64", 0.0208), testkit.InstanceType("t4g.small", "arm64", 0.0168)}}

	r, err := explain.ReadPod(ctx, env.Client, cloud, types.NamespacedName{Namespace: "default", Name: "wants-gpu"}, scheduling.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"outcome:  unschedulable",
		"NodePool cicd-armapps: does not fit",
		"the pod requires pod-type In [gpu]; the NodePool offers pod-type=armapp",
		"NodePool default: does not fit",
		"the pod requires pod-type In [gpu]; the NodePool gives its nodes no label pod-type",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report does not contain %q:\n%s", want, b.String())
		}
	}

	// The same pod asking for arm apps fits the arm NodePool, on its arm type at its price.
	p.Spec.NodeSelector = map[string]string{"pod-type": "armapp"}
	p2 := p.DeepCopy()
	p2.ObjectMeta = metav1.ObjectMeta{Name: "armapp", Namespace: "default"}
	if err := env.Client.Create(ctx, p2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, p2) })
	r, err = explain.ReadPod(ctx, env.Client, cloud, types.NamespacedName{Namespace: "default", Name: "armapp"}, scheduling.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := verdicts(r); strings.Join(got, "; ") != "cicd-armapps: fits; default: LabelNotOffered" {
		t.Errorf("verdicts = %v", got)
	}
	if arm := r.NodePools[0]; len(arm.InstanceTypes) != 1 || arm.InstanceTypes[0].Name != "t4g.small" || arm.InstanceTypes[0].Price != 0.0168 {
		t.Errorf("cicd-armapps instance types = %+v, want t4g.small at 0.0168", arm.InstanceTypes)
	}

	if _, err := explain.ReadPod(ctx, env.Client, cloud, types.NamespacedName{Namespace: "default", Name: "nope"}, scheduling.Settings{}); err == nil || !strings.Contains(err.Error(), "-n NAMESPACE") {
		t.Errorf("a missing pod should say to check the name and namespace, got %v", err)
	}
}

func TestReadNodeClaimFromTheAPIServer(t *testing.T) {
	ctx := t.Context()
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "default-xyz", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"t3.small"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		},
	}
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, nc) })
	stored := nc.DeepCopy()
	nc.Status.ProviderID = "aws:///us-west-2a/i-0abc"
	nc.Status.Conditions = []metav1.Condition{
		{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", Message: "Instance launched", LastTransitionTime: metav1.Now()},
		{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionFalse, Reason: "UnregisteredTaintNotFound", Message: "Node ip-10-0-0-1 joined without the taint", LastTransitionTime: metav1.Now()},
	}
	if err := env.Client.Status().Patch(ctx, nc, client.MergeFrom(stored)); err != nil {
		t.Fatal(err)
	}
	for i, subject := range []*v1.NodeClaim{nc, {ObjectMeta: metav1.ObjectMeta{Name: "another"}}} {
		e := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: subject.Name + "-event", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "NodeClaim", Name: subject.Name, UID: subject.UID, APIVersion: v1.SchemeGroupVersion.String()},
			Type:           corev1.EventTypeWarning, Reason: []string{"UnregisteredTaintNotFound", "SomethingElse"}[i], Message: "Registered=False",
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		}
		if err := env.Client.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, e) })
	}
	// The Node joined (without the taint): it is found by providerID before registration names it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-0abc"}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, node) })
	// The controllers record through events.k8s.io/v1: those are read too.
	newAPI := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "default-xyz-launched", Namespace: "default"},
		Regarding:  corev1.ObjectReference{Kind: "NodeClaim", Name: "default-xyz", UID: nc.UID, APIVersion: v1.SchemeGroupVersion.String()},
		EventTime:  metav1.NewMicroTime(time.Now().Add(-time.Minute)), ReportingController: "karpenter", ReportingInstance: "test",
		Action: "Launch", Type: corev1.EventTypeNormal, Reason: "Launched", Note: "Launched=True: Instance launched",
	}
	if err := env.Client.Create(ctx, newAPI); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, newAPI) })
	r, err := explain.ReadNodeClaim(ctx, env.Client, "default-xyz")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 2 || r.Events[0].Reason != "Launched" || r.Events[1].Reason != "UnregisteredTaintNotFound" {
		t.Errorf("events = %+v, want the NodeClaim's own two, oldest first", r.Events)
	}
	if r.Node == nil || r.Node.Name != "ip-10-0-0-1" {
		t.Errorf("node = %+v, want ip-10-0-0-1 found by providerID", r.Node)
	}
	if len(r.Diagnosis) != 1 || !strings.Contains(r.Diagnosis[0], "Registered=False UnregisteredTaintNotFound: Node ip-10-0-0-1 joined without the taint") {
		t.Errorf("diagnosis = %v", r.Diagnosis)
	}
	if _, err := explain.ReadNodeClaim(ctx, env.Client, "never-existed"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an unknown NodeClaim should be an error, got %v", err)
	}
}

// TestReadPodHeldNodePool: a NodePool whose nodes failed to join for one certain cause, with its
// inputs unchanged since, is held by the controller: explain says the NodePool cannot launch now
// and why, rather than planning a node the controller will not launch.
func TestReadPodHeldNodePool(t *testing.T) {
	ctx := t.Context()
	cloud := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{testkit.InstanceType("t3.small", "amd64", 0.0208)}}
	np := nodePool("not-joining", map[string]string{"team": "held"}, requirement(corev1.LabelArchStable, v1.NodeSelectorOpIn, "amd64"))
	if err := env.Client.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, np) })
	fp, err := joinfailure.Inputs(ctx, env.Client, cloud, np)
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	var f *joinfailure.Failure
	for _, nc := range []string{"held-a", "held-b"} {
		raw, f = joinfailure.Record(f, nc, "NodeRoleNotAuthorized", "the kubelet is refused 401 Unauthorized", fp, time.Now())
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Annotations = map[string]string{v1.JoinFailureAnnotationKey: raw}
	if err := env.Client.Patch(ctx, np, patch); err != nil {
		t.Fatal(err)
	}
	p := pod("500m", selector("team", "held"))
	p.Name = "waits-on-held"
	p.Spec.Containers[0].Image = "busybox"
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, p) })

	r, err := explain.ReadPod(ctx, env.Client, cloud, types.NamespacedName{Namespace: "default", Name: p.Name}, scheduling.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"outcome:  unschedulable", "the NodePool cannot launch now (NodePoolNodesNotJoining)", "NodeRoleNotAuthorized"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report does not contain %q:\n%s", want, b.String())
		}
	}
}
