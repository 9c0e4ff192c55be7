package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/lifecycle"
)

// cleanup deletes the NodeClaim and its Node when the test ends, and waits for both to go.
func cleanup(t *testing.T, nodeClaimName, nodeName string) {
	t.Cleanup(func() {
		ctx := context.Background() // t.Context() is already cancelled in cleanups
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: nodeClaimName}}
		_ = env.Client.Delete(ctx, nc)
		if nodeName != "" {
			// No termination controller runs here: lift the Node's finalizer by hand.
			node := &corev1.Node{}
			eventually(t, func() string {
				if err := env.Client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
					if apierrors.IsNotFound(err) {
						return ""
					}
					return err.Error()
				}
				patch := client.MergeFrom(node.DeepCopy())
				node.Finalizers = nil
				if err := env.Client.Patch(ctx, node, patch); err != nil {
					return err.Error()
				}
				_ = env.Client.Delete(ctx, node)
				return ""
			})
		}
		waitGone(ctx, t, nc)
	})
}

func TestLaunchSetsProviderIDAndLaunched(t *testing.T) {
	name := "launch"
	calls := cloud.CallsTo(fake.MethodCreate)
	testkit.Create(t, env.Client, newNodeClaim(name))
	cleanup(t, name, "")
	nc := waitCondition(t, name, v1.ConditionTypeLaunched, "True/Launched")
	if nc.Status.ProviderID == "" || nc.Status.ImageID != "ami-fake" {
		t.Errorf("providerID %q imageID %q, want both set from the launch", nc.Status.ProviderID, nc.Status.ImageID)
	}
	if got := nc.Status.Capacity.Cpu().String(); got != "2" {
		t.Errorf("capacity cpu = %s, want 2", got)
	}
	want := map[string]string{corev1.LabelInstanceTypeStable: "m7i.large", corev1.LabelTopologyZone: "us-west-2a", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}
	eventually(t, func() string {
		nc = get(t, name)
		for k, v := range want {
			if nc.Labels[k] != v {
				return fmt.Sprintf("label %s = %q, want %q", k, nc.Labels[k], v)
			}
		}
		return ""
	})
	if !slices.Contains(nc.Finalizers, v1.TerminationFinalizer) {
		t.Errorf("finalizers %v, want %s", nc.Finalizers, v1.TerminationFinalizer)
	}
	poke(t, name) // another reconcile must not launch again
	waitCondition(t, name, v1.ConditionTypeRegistered, "Unknown/NodeNotFound")
	if got := cloud.CallsTo(fake.MethodCreate) - calls; got != 1 {
		t.Errorf("Create called %d times, want once", got)
	}
	if events.Find(name, corev1.EventTypeNormal, "Launched") == "" {
		t.Errorf("no Launched event")
	}
}

func TestLaunchCreateErrorSurfaces(t *testing.T) {
	name := "create-error"
	// Ten failures in a row: with the controller's backoff the condition stays False for seconds.
	createErr := cloudprovider.NewCreateError(errors.New("denied"), "LaunchTemplateNotFound", "Launch template lt-1 was deleted; Joiner recreates it")
	cloud.ErrorsFor = map[string][]error{fake.MethodCreate: slices.Repeat([]error{createErr}, 10)}
	testkit.Create(t, env.Client, newNodeClaim(name))
	cleanup(t, name, "")
	nc := waitCondition(t, name, v1.ConditionTypeLaunched, "False/LaunchTemplateNotFound: Launch template lt-1 was deleted")
	if got := condition(nc, v1.ConditionTypeReady); !strings.HasPrefix(got, "False/NotLaunched") {
		t.Errorf("Ready = %q, want False/NotLaunched", got)
	}
	// Transitions are told once the status is written: the event follows the write the test saw.
	eventually(t, func() string {
		if events.Find(name, corev1.EventTypeWarning, "LaunchTemplateNotFound") == "" {
			return "no Warning event LaunchTemplateNotFound"
		}
		return ""
	})
	// The error is transient: the retry launches.
	waitCondition(t, name, v1.ConditionTypeLaunched, "True/Launched")
}

func TestInsufficientCapacityDeletesNodeClaim(t *testing.T) {
	name := "ice"
	cloud.ErrorsFor = map[string][]error{fake.MethodCreate: {cloudprovider.NewInsufficientCapacityError(errors.New("no m7i.large in us-west-2a"))}}
	nc := newNodeClaim(name)
	testkit.Create(t, env.Client, nc)
	waitGone(t.Context(), t, nc)
	if events.Find(name, corev1.EventTypeWarning, "InsufficientCapacity") == "" {
		t.Errorf("no InsufficientCapacity event")
	}
}

// launchAndRegister creates a NodeClaim, waits for its launch, and creates its Node with taints.
func launchAndRegister(t *testing.T, nc *v1.NodeClaim, nodeName string, taints ...corev1.Taint) *v1.NodeClaim {
	t.Helper()
	testkit.Create(t, env.Client, nc)
	cleanup(t, nc.Name, nodeName)
	launched := waitCondition(t, nc.Name, v1.ConditionTypeLaunched, "True")
	testkit.Create(t, env.Client, newNode(nodeName, launched.Status.ProviderID, taints...))
	return launched
}

func TestRegistrationSyncsNode(t *testing.T) {
	nc := newNodeClaim("register")
	nc.Spec.Taints = []corev1.Taint{{Key: "example.com/dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	nc.Spec.StartupTaints = []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}}
	launchAndRegister(t, nc, "node-register", v1.UnregisteredNoExecuteTaint())
	got := waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "True/Registered")
	if got.Status.NodeName != "node-register" {
		t.Errorf("status.nodeName = %q, want node-register", got.Status.NodeName)
	}
	node := &corev1.Node{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: "node-register"}, node); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"example.com/team": "a", v1.NodeRegisteredLabelKey: "true", corev1.LabelInstanceTypeStable: "m7i.large"} {
		if node.Labels[k] != v {
			t.Errorf("node label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if node.Annotations["example.com/owner"] != "b" {
		t.Errorf("node annotations %v, want example.com/owner=b", node.Annotations)
	}
	var keys []string
	for _, taint := range node.Spec.Taints {
		keys = append(keys, taint.Key)
	}
	slices.Sort(keys)
	// node.kubernetes.io/not-ready comes from the API server's admission.
	if diff := cmp.Diff([]string{"example.com/dedicated", "node.cilium.io/agent-not-ready", corev1.TaintNodeNotReady}, keys); diff != "" {
		t.Errorf("node taints (-want +got):\n%s", diff)
	}
	if !slices.Contains(node.Finalizers, v1.TerminationFinalizer) {
		t.Errorf("node finalizers %v, want %s", node.Finalizers, v1.TerminationFinalizer)
	}
	if len(node.OwnerReferences) != 1 || node.OwnerReferences[0].Name != nc.Name || node.OwnerReferences[0].Kind != "NodeClaim" {
		t.Errorf("node owner references %v, want the NodeClaim", node.OwnerReferences)
	}
}

// A Node that joins without the unregistered taint is a certain failure: the NodeClaim is
// deleted at once (with its Node), and the Warning says what to look at.
func TestRegistrationWithoutUnregisteredTaint(t *testing.T) {
	nc := launchAndRegister(t, newNodeClaim("no-taint"), "node-no-taint")
	waitGone(t.Context(), t, nc)
	if findEvent(nc.Name, "Warning "+lifecycle.ReasonUnregisteredTaintNotFound+" Registered=False: ",
		"karpenter.sh/unregistered:NoExecute", "userData", "joiner render-userdata", "startupTaints") == "" {
		t.Errorf("events %q, want a Registered=False warning naming the taint, userData, joiner render-userdata and startupTaints", events.Events())
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: "node-no-taint"}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("node of the failed nodeclaim: %v, want it deleted", err)
	}
}

func TestInitializationWaitsForStartupTaint(t *testing.T) {
	nc := newNodeClaim("init")
	startup := corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}
	nc.Spec.StartupTaints = []corev1.Taint{startup}
	launchAndRegister(t, nc, "node-init", v1.UnregisteredNoExecuteTaint())
	waitCondition(t, nc.Name, v1.ConditionTypeInitialized, "False/NodeNotReady")

	// The kubelet reports Ready and the node lifecycle controller lifts not-ready: done by hand.
	ctx := t.Context()
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "node-init"}, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	removeTaint(t, "node-init", corev1.TaintNodeNotReady)
	got := waitCondition(t, nc.Name, v1.ConditionTypeInitialized, "False/StartupTaintsExist")
	if msg := condition(got, v1.ConditionTypeInitialized); !strings.Contains(msg, "node.cilium.io/agent-not-ready") {
		t.Errorf("Initialized %q does not name the startup taint", msg)
	}

	removeTaint(t, "node-init", startup.Key)
	got = waitCondition(t, nc.Name, v1.ConditionTypeInitialized, "True")
	if r := condition(got, v1.ConditionTypeReady); !strings.HasPrefix(r, "True") {
		t.Errorf("Ready = %q, want True", r)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "node-init"}, node); err != nil {
		t.Fatal(err)
	}
	if node.Labels[v1.NodeInitializedLabelKey] != "true" {
		t.Errorf("node labels %v, want %s=true", node.Labels, v1.NodeInitializedLabelKey)
	}
}

func removeTaint(t *testing.T, nodeName, key string) {
	t.Helper()
	eventually(t, func() string {
		node := &corev1.Node{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: nodeName}, node); err != nil {
			return err.Error()
		}
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
		if err := env.Client.Update(t.Context(), node); err != nil {
			return err.Error()
		}
		return ""
	})
}

func TestRegistrationTimeoutDeletesNodeClaim(t *testing.T) {
	nc := newNodeClaim("timeout")
	testkit.Create(t, env.Client, nc)
	waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "Unknown/NodeNotFound")
	t.Cleanup(resetClock)
	fakeTime.Step(14 * time.Minute)
	poke(t, nc.Name)
	waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "Unknown/NodeNotFound")
	if get(t, nc.Name).DeletionTimestamp != nil {
		t.Fatalf("nodeclaim deleted before the 15m registration timeout")
	}
	fakeTime.Step(2 * time.Minute)
	poke(t, nc.Name)
	waitGone(t.Context(), t, nc)
	e := events.Find(nc.Name, corev1.EventTypeWarning, "RegistrationTimeout")
	if !strings.Contains(e, "15m0s") || !strings.Contains(e, "Waiting for a Node with providerID") {
		t.Errorf("event %q, want the timeout and the last Registered message", e)
	}
}

func TestRegistrationTimeoutFromNodePoolAnnotation(t *testing.T) {
	nodePool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "short", Annotations: map[string]string{v1.RegistrationTimeoutAnnotationKey: "2m"}},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		}}},
	}
	testkit.Create(t, env.Client, nodePool)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), nodePool) })
	nc := newNodeClaim("short-timeout")
	nc.Labels[v1.NodePoolLabelKey] = nodePool.Name
	testkit.Create(t, env.Client, nc)
	waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "Unknown/NodeNotFound")
	t.Cleanup(resetClock)
	fakeTime.Step(3 * time.Minute)
	poke(t, nc.Name)
	waitGone(t.Context(), t, nc)
	if e := events.Find(nc.Name, corev1.EventTypeWarning, "RegistrationTimeout"); !strings.Contains(e, "2m0s") {
		t.Errorf("event %q, want the NodePool's 2m timeout", e)
	}
}

func TestLaunchWaitsForNodeClass(t *testing.T) {
	name := "nodeclass-not-ready"
	// Refused more than once: the controller's own status patch brings the NodeClaim straight back.
	notReady := cloudprovider.NewNodeClassNotReadyError(errors.New("EC2NodeClass default is not Ready: ValidationSucceeded=False"))
	cloud.ErrorsFor = map[string][]error{fake.MethodCreate: slices.Repeat([]error{notReady}, 20)}
	t.Cleanup(func() { cloud.ErrorsFor = nil })
	testkit.Create(t, env.Client, newNodeClaim(name))
	cleanup(t, name, "")
	nc := waitCondition(t, name, v1.ConditionTypeLaunched, "False/NodeClassNotReady")
	if msg := condition(nc, v1.ConditionTypeLaunched); !strings.Contains(msg, "ValidationSucceeded=False") {
		t.Errorf("Launched %q does not carry the node class's reason", msg)
	}
	if nc.Status.ProviderID != "" {
		t.Errorf("providerID %q set by a refused launch", nc.Status.ProviderID)
	}
}

func TestRegistrationDoNotSyncTaints(t *testing.T) {
	nc := newNodeClaim("do-not-sync")
	nc.Spec.Taints = []corev1.Taint{{Key: "example.com/dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	testkit.Create(t, env.Client, nc)
	cleanup(t, nc.Name, "node-do-not-sync")
	launched := waitCondition(t, nc.Name, v1.ConditionTypeLaunched, "True")
	node := newNode("node-do-not-sync", launched.Status.ProviderID, v1.UnregisteredNoExecuteTaint())
	node.Labels[v1.NodeDoNotSyncTaintsLabelKey] = "true"
	testkit.Create(t, env.Client, node)
	waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "True")
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(node), node); err != nil {
		t.Fatal(err)
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == "example.com/dedicated" || taint.Key == v1.UnregisteredTaintKey {
			t.Errorf("node taint %s present; want NodeClaim taints not synced and the unregistered taint removed", taint.ToString())
		}
	}
}

// resetClock brings the fake clock back to the wall clock, which the API server's creation
// timestamps (and so the launch timeout) follow.
func resetClock() { fakeTime.SetTime(time.Now()) }

func TestLaunchTimeoutDeletesNodeClaim(t *testing.T) {
	nc := newNodeClaim("launch-timeout")
	notReady := cloudprovider.NewNodeClassNotReadyError(errors.New("EC2NodeClass default is not Ready"))
	cloud.ErrorsFor = map[string][]error{fake.MethodCreate: slices.Repeat([]error{notReady}, 20)}
	t.Cleanup(func() { cloud.ErrorsFor = nil })
	testkit.Create(t, env.Client, nc)
	waitCondition(t, nc.Name, v1.ConditionTypeLaunched, "False/NodeClassNotReady")
	t.Cleanup(resetClock)
	fakeTime.Step(lifecycle.DefaultLaunchTimeout + time.Minute)
	poke(t, nc.Name)
	waitGone(t.Context(), t, nc)
	if e := events.Find(nc.Name, corev1.EventTypeWarning, "LaunchTimeout"); !strings.Contains(e, "EC2NodeClass default is not Ready") {
		t.Errorf("event %q, want the launch timeout with the last Launched message", e)
	}
}
