package status

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

var kubeEnv *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &kubeEnv))
}

// TestNodeJoinReadyWatchesAWSAuth (S1 on a real API server, AWS from the emulator): the
// controller runs in a manager; a class whose node role aws-auth does not map (the controller's
// role is mapped instead, and the cluster has no access entry) gets NodeJoinReady=False and one
// Warning event; fixing aws-auth turns it Ready at once, through the ConfigMap watch (the periodic
// re-check is a minute away).
func TestNodeJoinReadyWatchesAWSAuth(t *testing.T) {
	ctx := t.Context()
	e := emutest.Start(t)
	clk := e.Clock
	account := ""
	e.Update(t, func(w *state.World) error {
		account = w.AccountID
		r, err := w.Region("us-west-2")
		if err != nil {
			return err
		}
		clear(r.Clusters["demo"].AccessEntries)
		return nil
	})
	recorder := &testenv.Recorder{}
	if err := kubeEnv.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error {
		a := provider.Build(mgr.GetClient(), e.Clients, provider.Options{
			Cluster: userdata.Cluster{Name: "demo", Endpoint: "https://demo.eks.example", CABundle: "Q0E=", DNS: "10.100.0.10", CIDR: "10.100.0.0/16"},
			Region:  "us-west-2", KubernetesVersion: "1.33",
		}, clk)
		return NewController(mgr.GetClient(), a.NodeClasses, a.InstanceProfiles, clk, recorder).Register(ctx, mgr)
	}); err != nil {
		t.Fatal(err)
	}

	entry := func(role string) string {
		return fmt.Sprintf("- rolearn: arn:aws:iam::%s:role/%s\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n  - system:bootstrappers\n  - system:nodes\n", account, role)
	}
	awsAuth := &corev1.ConfigMap{Data: map[string]string{"mapRoles": entry(state.DefaultSeed().ControllerRole)}}
	awsAuth.Namespace, awsAuth.Name = "kube-system", "aws-auth"
	np := &v1.NodePool{}
	np.Name = "default"
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "default"}
	for _, o := range []client.Object{awsAuth, np, class()} {
		if err := kubeEnv.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	condition := func() (*awsv1.EC2NodeClass, string) {
		nc := &awsv1.EC2NodeClass{}
		if err := kubeEnv.Client.Get(ctx, client.ObjectKey{Name: "default"}, nc); err != nil {
			return nil, err.Error()
		}
		c := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeNodeJoinReady)
		if c == nil {
			return nc, "no NodeJoinReady yet"
		}
		return nc, fmt.Sprintf("NodeJoinReady=%s %s: %s", c.Status, c.Reason, c.Message)
	}
	testkit.Eventually(t, 20*time.Second, func() string {
		nc, got := condition()
		if !strings.HasPrefix(got, "NodeJoinReady=False AWSAuthMapsControllerRole: ") || !strings.Contains(got, entry(state.DefaultSeed().NodeRole)) {
			return got
		}
		if meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) {
			return "Ready is True while nodes cannot join"
		}
		if recorder.Find("default", corev1.EventTypeWarning, "AWSAuthMapsControllerRole") == "" {
			return fmt.Sprintf("no Warning event AWSAuthMapsControllerRole: %v", recorder.Events())
		}
		return ""
	})

	awsAuth.Data["mapRoles"] = entry(state.DefaultSeed().NodeRole)
	if err := kubeEnv.Client.Update(ctx, awsAuth); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, func() string {
		nc, got := condition()
		if !strings.HasPrefix(got, "NodeJoinReady=True NodesCanJoin") {
			return got
		}
		if !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) {
			return fmt.Sprintf("not Ready: %v", nc.Status.Conditions)
		}
		return ""
	})
	n := 0
	for _, e := range recorder.Events() {
		if strings.Contains(e, "AWSAuthMapsControllerRole") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d AWSAuthMapsControllerRole events, want 1 (not one per reconcile): %v", n, recorder.Events())
	}
}

// TestNodePoolStatusDoesNotResolve: a NodePool's status changes with every node it launches or
// loses; none of those changes resolves the class again (each resolve reads AWS about fifteen
// times), while a change of the class still does. Each round patches the NodePool's status, then
// annotates the class, and waits for the resolve the annotation asks for. Resolves are counted
// by the emulator's DescribeSubnets calls (one per resolve): one per round, and at most one more,
// a reconcile of the class's own first patches that may still be queued when the rounds begin
// (the workqueue merges a request with one already queued, so no barrier tells it apart). When
// NodePool status was watched, about half the rounds resolved twice.
func TestNodePoolStatusDoesNotResolve(t *testing.T) {
	ctx := t.Context()
	removeClasses(t)
	e := emutest.Start(t)
	clk, st := e.Clock, e.State
	if err := kubeEnv.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error {
		a := provider.Build(mgr.GetClient(), e.Clients, provider.Options{
			Cluster: userdata.Cluster{Name: "demo", Endpoint: "https://demo.eks.example", CABundle: "Q0E=", DNS: "10.100.0.10", CIDR: "10.100.0.0/16"},
			Region:  "us-west-2", KubernetesVersion: "1.33",
		}, clk)
		return NewController(mgr.GetClient(), a.NodeClasses, a.InstanceProfiles, clk, &testenv.Recorder{}).Register(ctx, mgr)
	}); err != nil {
		t.Fatal(err)
	}
	resolves := func() int {
		n := 0
		st.View(func(w *state.World) { n = w.Calls["DescribeSubnets"] })
		return n
	}

	np := &v1.NodePool{}
	np.Name = "status-churn"
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "status-churn"}
	nc := class()
	nc.Name = "status-churn"
	for _, o := range []client.Object{np, nc} {
		if err := kubeEnv.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 20*time.Second, func() string {
		if err := kubeEnv.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err.Error()
		}
		if !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady) {
			return fmt.Sprintf("not Ready: %v", nc.Status.Conditions)
		}
		return ""
	})
	annotate := func(round int) {
		t.Helper()
		stored := nc.DeepCopy()
		if nc.Annotations == nil {
			nc.Annotations = map[string]string{}
		}
		nc.Annotations["test.joiner.sh/round"] = fmt.Sprint(round)
		if err := kubeEnv.Client.Patch(ctx, nc, client.MergeFrom(stored)); err != nil {
			t.Fatal(err)
		}
	}
	settled := resolves()
	annotate(0)
	testkit.Eventually(t, 20*time.Second, func() string {
		if resolves() <= settled {
			return "the annotation did not resolve the class"
		}
		return ""
	})
	base := resolves()
	const rounds = 10
	for round := 1; round <= rounds; round++ {
		stored := np.DeepCopy()
		np.Status.Nodes = new(int64(round))
		if err := kubeEnv.Client.Status().Patch(ctx, np, client.MergeFrom(stored)); err != nil {
			t.Fatal(err)
		}
		annotate(round)
		testkit.Eventually(t, 20*time.Second, func() string {
			if got := resolves() - base; got < round {
				return fmt.Sprintf("%d resolves after %d rounds", got, round)
			}
			return ""
		})
	}
	if got := resolves() - base; got > rounds+1 {
		t.Errorf("%d resolves in %d rounds of a NodePool status change and a class change, want at most %d (one per class change, and one left from the setup)", got, rounds, rounds+1)
	}
}

// removeClasses deletes the classes earlier tests of the package left on the shared API server,
// releasing their finalizers (their managers are gone), so that a test's manager resolves only
// its own.
func removeClasses(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	list := &awsv1.EC2NodeClassList{}
	if err := kubeEnv.Client.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		nc := &list.Items[i]
		stored := nc.DeepCopy()
		nc.Finalizers = nil
		if err := kubeEnv.Client.Patch(ctx, nc, client.MergeFrom(stored)); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		if err := kubeEnv.Client.Delete(ctx, nc); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
}
