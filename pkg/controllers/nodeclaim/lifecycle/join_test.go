package lifecycle_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/lifecycle"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

// bootEmulated lets the emulator boot the instances that are due (and retry refused kubelets).
func bootEmulated(t *testing.T) {
	t.Helper()
	emu.clock.Step(state.PendingFor + state.BootDelay)
	// The world moves instances along (pending to running) when it is next written.
	if err := emu.state.Update(func(*state.World) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := emu.kubelets.Sync(t.Context()); err != nil {
		t.Fatalf("booting: %v", err)
	}
}

// emulatedNodeClaim returns a NodeClaim of the NodePool that launches on the emulator.
func emulatedNodeClaim(name, nodePool string) *v1.NodeClaim {
	nc := newNodeClaim(name)
	nc.Labels[v1.NodePoolLabelKey] = nodePool
	nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m5.large"}}}
	nc.Spec.NodeClassRef.Name = emulatedNodeClass
	return nc
}

// launchedInstances counts the emulator's instances launched for the NodePool.
func launchedInstances(nodePool string) int {
	n := 0
	emu.state.View(func(w *state.World) {
		for _, i := range w.Regions["us-west-2"].Instances {
			if i.Tags["karpenter.sh/nodepool"] == nodePool {
				n++
			}
		}
	})
	return n
}

// nodePoolCondition returns "Status/Reason: Message" of the NodePool's condition.
func nodePoolCondition(t *testing.T, name, conditionType string) string {
	t.Helper()
	np := &v1.NodePool{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(np.Status.Conditions, conditionType)
	if c == nil {
		return "absent"
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

// held is what provisioning asks before launching for the NodePool.
func held(t *testing.T, name string) bool {
	t.Helper()
	np := &v1.NodePool{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	_, h, err := joinfailure.Held(t.Context(), env.Client, cloud, np, fakeTime.Now(), joinfailure.DefaultHold)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestUnmappedNodeRoleIsDiagnosed is field case S1 on the emulator: the node role is in neither
// aws-auth nor an access entry, so the kubelet is refused 401 Unauthorized. Each NodeClaim is
// failed with NodeRoleNotAuthorized within 60 s (injected time) of the first refusal, its
// NodePool reports NodeRegistrationHealthy=False, only one more instance is launched for the same
// cause, and once aws-auth maps the role a new launch joins.
func TestUnmappedNodeRoleIsDiagnosed(t *testing.T) {
	if err := emu.state.Update(func(w *state.World) error {
		clear(w.Regions["us-west-2"].Clusters[state.DefaultSeed().ClusterName].AccessEntries)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resetClock)
	np := newNodePool(t, "s1", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = emulatedNodeClass })

	// Provisioning's part, played by the test: launch while the NodePool is not held.
	for attempt := 1; !held(t, np.Name); attempt++ {
		if attempt > joinfailure.MaxLaunchesPerCause {
			t.Fatalf("%d launches and the NodePool is still not held", attempt-1)
		}
		nc := emulatedNodeClaim(fmt.Sprintf("s1-%d", attempt), np.Name)
		testkit.Create(t, env.Client, nc)
		waitCondition(t, nc.Name, v1.ConditionTypeLaunched, "True")
		bootEmulated(t)
		if console := consoleOf(t, nc.Name); !strings.Contains(console, `err="Unauthorized"`) {
			t.Fatalf("the kubelet was not refused; console:\n%s", console)
		}
		refused := fakeTime.Now()
		// The controller looks again every DiagnosisInterval; its RequeueAfter is real time, so
		// the test steps the injected clock and pokes instead.
		for !failed(t, nc) {
			if fakeTime.Since(refused) > time.Minute {
				t.Fatalf("nodeclaim %s not failed within 60s of the kubelet's refusal; Registered %s", nc.Name, condition(get(t, nc.Name), v1.ConditionTypeRegistered))
			}
			fakeTime.Step(lifecycle.DiagnosisInterval)
			pokeAndWait(t, nc)
		}
		t.Logf("nodeclaim %s failed %s after the refusal (injected clock)", nc.Name, fakeTime.Since(refused))
		// The reconcile that fails the NodeClaim deletes it, then writes its status: a read in
		// between sees it deleting with the reason not written yet.
		eventually(t, func() string {
			deleting := &v1.NodeClaim{}
			if env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), deleting) != nil {
				return "" // gone: its finalizer lifted before this read
			}
			if c := condition(deleting, v1.ConditionTypeRegistered); !strings.HasPrefix(c, "False/"+cloudprovider.ReasonNodeRoleNotAuthorized) {
				return fmt.Sprintf("deleting nodeclaim %s has Registered %q, want False/%s", nc.Name, c, cloudprovider.ReasonNodeRoleNotAuthorized)
			}
			return ""
		})
		waitGone(t.Context(), t, nc)
		e := findEvent(nc.Name, "Warning "+cloudprovider.ReasonNodeRoleNotAuthorized+" Registered=False: ", "401 Unauthorized", "system:node:{{EC2PrivateDNSName}}", "create-access-entry")
		if e == "" {
			t.Fatalf("events %q, want Registered=False NodeRoleNotAuthorized with the fix", events.Events())
		}
	}
	if n := launchedInstances(np.Name); n != joinfailure.MaxLaunchesPerCause {
		t.Errorf("%d instances launched for one certain cause, want %d", n, joinfailure.MaxLaunchesPerCause)
	}
	testenvEventually(t, func() string {
		if c := nodePoolCondition(t, np.Name, v1.ConditionTypeNodeRegistrationHealthy); !strings.HasPrefix(c, "False/NodeRoleNotAuthorized") || !strings.Contains(c, "Launches are held") {
			return "NodeRegistrationHealthy " + c
		}
		return ""
	})

	// The operator maps the node role, as the fix says.
	var roleARN string
	emu.state.View(func(w *state.World) { roleARN = w.IAM.Roles[state.DefaultSeed().NodeRole].ARN })
	authMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aws-auth"}, Data: map[string]string{"mapRoles": fmt.Sprintf(
		"- rolearn: %s\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n    - system:bootstrappers\n    - system:nodes\n", roleARN)}}
	testkit.Create(t, env.Client, authMap)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), authMap) })
	if held(t, np.Name) {
		t.Fatal("the NodePool is still held after aws-auth changed")
	}
	nc := emulatedNodeClaim("s1-fixed", np.Name)
	testkit.Create(t, env.Client, nc)
	waitCondition(t, nc.Name, v1.ConditionTypeLaunched, "True")
	bootEmulated(t)
	registered := waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "True/Registered")
	cleanup(t, nc.Name, registered.Status.NodeName)
	testenvEventually(t, func() string {
		if c := nodePoolCondition(t, np.Name, v1.ConditionTypeNodeRegistrationHealthy); !strings.HasPrefix(c, "True/") {
			return "NodeRegistrationHealthy " + c
		}
		return ""
	})
}

// failed reports whether the NodeClaim is being deleted or gone.
func failed(t *testing.T, nc *v1.NodeClaim) bool {
	t.Helper()
	got := &v1.NodeClaim{}
	err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), got)
	if err != nil && client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err != nil || !got.DeletionTimestamp.IsZero()
}

// consoleOf returns the console of the NodeClaim's instance in the emulator.
func consoleOf(t *testing.T, nodeClaim string) string {
	t.Helper()
	// By providerID: an instance gets its NodeClaim's tag only once its node registered.
	nc := get(t, nodeClaim)
	id := nc.Status.ProviderID[strings.LastIndex(nc.Status.ProviderID, "/")+1:]
	var lines []string
	emu.state.View(func(w *state.World) {
		if i := w.Regions["us-west-2"].Instances[id]; i != nil {
			lines = i.Console
		}
	})
	return strings.Join(lines, "\n")
}

// pokeAndWait pokes the NodeClaim, if it still exists, and waits until the controller has seen
// the poke: it diagnosed the NodeClaim again (or deleted it).
func pokeAndWait(t *testing.T, nc *v1.NodeClaim) {
	t.Helper()
	got := &v1.NodeClaim{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), got); err != nil {
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		return
	}
	want := fakeTime.Now().String()
	calls := routedTo.awsDiagnoses.Load()
	patch := client.MergeFrom(got.DeepCopy())
	got.Annotations["test.joiner.dev/poke"] = want
	if err := env.Client.Patch(t.Context(), got, patch); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	testenvEventually(t, func() string {
		got := &v1.NodeClaim{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), got); err != nil {
			return ""
		}
		if !got.DeletionTimestamp.IsZero() || routedTo.awsDiagnoses.Load() > calls {
			return ""
		}
		return "the poke did not lead to a diagnosis yet"
	})
	// The reconcile that diagnosed goes on to patch or delete the NodeClaim: give it a moment
	// (a poll with a deadline; a diagnosis that changes nothing simply runs it out).
	_ = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 2*time.Second, true, func(context.Context) (bool, error) {
		return failed(t, nc), nil
	})
}

func testenvEventually(t *testing.T, check func() string) {
	t.Helper()
	eventually(t, check)
}
