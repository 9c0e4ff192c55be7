package status

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instanceprofile"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

type env struct {
	kube       client.Client
	controller *Controller
	iam        *iam.Client
	setPolicy  func(doc string)
}

func newEnv(t *testing.T, objects ...client.Object) *env {
	t.Helper()
	e := emutest.Start(t)
	clk, c := e.Clock, e.Clients
	scheme := runtime.NewScheme()
	_ = awsv1.AddToScheme(scheme)
	_ = v1.AddToScheme(scheme)
	kube := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&awsv1.EC2NodeClass{}).WithObjects(objects...).Build()
	a := provider.Build(kube, c, provider.Options{
		Cluster: userdata.Cluster{Name: "demo", Endpoint: "https://demo.eks.example", CABundle: "Q0E=", DNS: "10.100.0.10", CIDR: "10.100.0.0/16"},
		Region:  "us-west-2", KubernetesVersion: "1.33",
	}, clk)
	return &env{kube: kube, controller: NewController(kube, a.NodeClasses, a.InstanceProfiles, clk, events.NewFakeRecorder(100)), iam: c.IAM, setPolicy: func(doc string) { e.SetControllerPolicy(t, doc) }}
}

func class() *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		Role:                       "KarpenterNodeRole-demo",
	}}
	nc.Name = "default"
	return nc
}

// reconcile runs one reconcile of the stored class and returns the class as stored after it.
func (e *env) reconcile(t *testing.T) (*awsv1.EC2NodeClass, time.Duration) {
	t.Helper()
	nc := &awsv1.EC2NodeClass{}
	if err := e.kube.Get(t.Context(), client.ObjectKey{Name: "default"}, nc); err != nil {
		t.Fatal(err)
	}
	res, err := e.controller.Reconcile(t.Context(), nc)
	if err != nil {
		t.Fatal(err)
	}
	out := &awsv1.EC2NodeClass{}
	if err := e.kube.Get(t.Context(), client.ObjectKey{Name: "default"}, out); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return out, res.RequeueAfter
}

// TestRevalidatesWithinAMinute: a class failing validation is requeued within a minute, and the
// reconcile after the policy is fixed turns it Ready.
func TestRevalidatesWithinAMinute(t *testing.T) {
	e := newEnv(t, class())
	nc, after := e.reconcile(t)
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) || after != ReadyRequeue {
		t.Fatalf("first reconcile: Ready %v, requeue %v", meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeReady), after)
	}
	if nc.Annotations[awsv1.AnnotationEC2NodeClassHash] == "" || !strings.Contains(strings.Join(nc.Finalizers, ","), awsv1.TerminationFinalizer) {
		t.Errorf("annotations %v finalizers %v", nc.Annotations, nc.Finalizers)
	}

	e.setPolicy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":"iam:PassRole","Resource":"*"}]}`)
	nc, after = e.reconcile(t)
	cond := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
	if cond == nil || cond.Status != "False" || !strings.Contains(cond.Message, "iam:PassRole") {
		t.Fatalf("ValidationSucceeded %+v, want False naming iam:PassRole", cond)
	}
	if after > time.Minute {
		t.Errorf("failing class requeued after %v, want within a minute", after)
	}

	e.setPolicy(state.AllowAllPolicy)
	nc, _ = e.reconcile(t)
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) {
		t.Errorf("after fixing the policy: %+v", nc.Status.Conditions)
	}
}

// TestFinalizer: deletion waits for the class's NodeClaims, then deletes the instance profile and
// releases the class.
func TestFinalizer(t *testing.T) {
	claim := &v1.NodeClaim{Spec: v1.NodeClaimSpec{NodeClassRef: &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "default"}}}
	claim.Name = "general-a"
	e := newEnv(t, class(), claim)
	nc, _ := e.reconcile(t)
	profile := nc.Status.InstanceProfile
	if err := e.kube.Delete(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	nc, after := e.reconcile(t)
	if nc.Name == "" || after == 0 {
		t.Fatalf("class released while a NodeClaim refers to it (requeue %v)", after)
	}
	if _, err := e.iam.GetInstanceProfile(t.Context(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(profile)}); err != nil {
		t.Errorf("instance profile gone while a NodeClaim refers to the class: %v", err)
	}
	if err := e.kube.Delete(t.Context(), claim); err != nil {
		t.Fatal(err)
	}
	nc, _ = e.reconcile(t)
	if nc.Name != "" {
		t.Errorf("class still stored with finalizers %v", nc.Finalizers)
	}
	if _, err := e.iam.GetInstanceProfile(t.Context(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(profile)}); err == nil {
		t.Error("instance profile still exists")
	}
	if profile != instanceprofile.Name("demo", "us-west-2", class()) {
		t.Errorf("profile %s", profile)
	}
}
