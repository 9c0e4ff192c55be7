package lifecycle_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/lifecycle"
	nodepoolstatus "github.com/joinerhq/joiner/pkg/controllers/nodepool/status"
)

// The package's one control plane and running controller, shared by the tests, which run one at
// a time and use names of their own.
var (
	env      *testenv.Environment
	cloud    *fake.CloudProvider
	fakeTime *clocktesting.FakeClock
	events   *testenv.Recorder
	emu      *emulator
	routedTo *routed
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, startController))
}

// startController runs the lifecycle controller on the fake cloud and clock.
func startController(ctx context.Context, e *testenv.Environment) error {
	cloud = &fake.CloudProvider{InstanceTypes: testkit.DefaultInstanceTypes()}
	fakeTime = clocktesting.NewFakeClock(time.Now())
	events = &testenv.Recorder{}
	var err error
	if emu, err = startEmulator(ctx, e.Client); err != nil {
		return fmt.Errorf("starting the emulator, %w", err)
	}
	routedTo = &routed{CloudProvider: cloud, aws: emu.aws.CloudProvider}
	provider := routedTo
	return e.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error {
		if err := lifecycle.NewController(mgr.GetClient(), provider, fakeTime, events).Register(ctx, mgr); err != nil {
			return err
		}
		return nodepoolstatus.NewController(mgr.GetClient(), cluster.New(mgr.GetClient(), false), provider, fakeTime).Register(ctx, mgr)
	})
}

// eventually polls check until it returns "" or 20s pass, then fails with its last complaint.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, check)
}

func newNodeClaim(name string) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"example.com/team": "a"}, Annotations: map[string]string{"example.com/owner": "b"}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		},
	}
}

// get reads the NodeClaim, failing the test on errors.
func get(t *testing.T, name string) *v1.NodeClaim {
	t.Helper()
	nc := &v1.NodeClaim{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, nc); err != nil {
		t.Fatalf("getting nodeclaim %s: %v", name, err)
	}
	return nc
}

// condition returns "Status/Reason: Message" of the NodeClaim's condition, or "absent".
func condition(nc *v1.NodeClaim, conditionType string) string {
	for _, c := range nc.Status.Conditions {
		if c.Type == conditionType {
			return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "absent"
}

// waitCondition waits until the NodeClaim's condition starts with want ("True/Launched").
func waitCondition(t *testing.T, name, conditionType, want string) *v1.NodeClaim {
	t.Helper()
	var nc *v1.NodeClaim
	eventually(t, func() string {
		nc = get(t, name)
		if got := condition(nc, conditionType); !strings.HasPrefix(got, want) {
			return fmt.Sprintf("nodeclaim %s %s = %q, want %q...", name, conditionType, got, want)
		}
		return ""
	})
	return nc
}

// poke changes an annotation so that the controller reconciles the NodeClaim again, as it would
// when its RequeueAfter falls due.
func poke(t *testing.T, name string) {
	t.Helper()
	nc := get(t, name)
	patch := client.MergeFrom(nc.DeepCopy())
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	nc.Annotations["test.joiner.dev/poke"] = fakeTime.Now().String()
	if err := env.Client.Patch(t.Context(), nc, patch); err != nil {
		t.Fatalf("poking nodeclaim %s: %v", name, err)
	}
}

// waitGone waits until the object no longer exists.
func waitGone(ctx context.Context, t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, func() string {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if err == nil {
			return fmt.Sprintf("%s still exists (finalizers %v)", obj.GetName(), obj.GetFinalizers())
		}
		if client.IgnoreNotFound(err) != nil {
			return err.Error()
		}
		return ""
	})
}

// newNode returns a Node for the NodeClaim's instance as the kubelet would register it.
func newNode(name, providerID string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Spec:       corev1.NodeSpec{ProviderID: providerID, Taints: taints},
	}
}
