package lifecycle_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/lifecycle"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

// findEvent returns the first event of the named object that starts with prefix (after the name)
// and contains every one of want, or "".
func findEvent(name, prefix string, want ...string) string {
next:
	for _, e := range events.Events() {
		if !strings.HasPrefix(e, name+" "+prefix) {
			continue
		}
		for _, w := range want {
			if !strings.Contains(e, w) {
				continue next
			}
		}
		return e
	}
	return ""
}

// newNodePool creates a NodePool of the name, changed by mutate, deleted when the test ends.
func newNodePool(t *testing.T, name string, mutate ...func(*v1.NodePool)) *v1.NodePool {
	t.Helper()
	np := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		}}},
	}
	for _, m := range mutate {
		m(np)
	}
	testkit.Create(t, env.Client, np)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), np) })
	return np
}

// An uncertain diagnosis keeps Registered=Unknown with what was seen, and the cloud is asked at
// most every DiagnosisInterval of the injected clock.
func TestUncertainDiagnosisWaits(t *testing.T) {
	nc := newNodeClaim("diag-uncertain")
	cloud.Diagnoses = map[string]cloudprovider.Diagnosis{nc.Name: {Message: "The kubelet's last registration attempt failed: the server is currently unable to handle the request",
		Evidence: `"Unable to register node with API server" err="the server is currently unable to handle the request"`}}
	t.Cleanup(func() { cloud.Diagnoses = nil })
	testkit.Create(t, env.Client, nc)
	cleanup(t, nc.Name, "")
	got := waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "Unknown/NodeNotFound: Waiting for a Node with providerID")
	if c := condition(got, v1.ConditionTypeRegistered); !strings.Contains(c, "unable to handle the request") || !strings.Contains(c, "Seen: ") {
		t.Errorf("Registered %q, want what was seen", c)
	}
	calls := cloud.CallsTo(fake.MethodDiagnoseJoin)
	for range 3 {
		poke(t, nc.Name)
	}
	eventually(t, func() string {
		if get(t, nc.Name).Annotations["test.joiner.dev/poke"] == "" {
			return "poke not seen"
		}
		return ""
	})
	if n := cloud.CallsTo(fake.MethodDiagnoseJoin); n != calls {
		t.Errorf("DiagnoseJoin called %d times within the interval, want %d", n, calls)
	}
	t.Cleanup(resetClock)
	fakeTime.Step(lifecycle.DiagnosisInterval)
	poke(t, nc.Name)
	eventually(t, func() string {
		if n := cloud.CallsTo(fake.MethodDiagnoseJoin); n <= calls {
			return "DiagnoseJoin not called again after the interval"
		}
		return ""
	})
	if get(t, nc.Name).DeletionTimestamp != nil {
		t.Errorf("nodeclaim deleted on uncertain evidence")
	}
}

// A certain cause fails the NodeClaim at once: Registered=False with the reason and the fix (the
// Warning event), the NodeClaim deleted, and the cause recorded on its NodePool with the
// fingerprint of the inputs; a second failure for the same cause with the same inputs holds the
// NodePool's launches, and a change of aws-auth lifts the hold.
func TestCertainDiagnosisFailsNodeClaim(t *testing.T) {
	np := newNodePool(t, "diag-pool")
	fix := "Map the EC2NodeClass's node role in kube-system/aws-auth"
	for i, name := range []string{"diag-certain-1", "diag-certain-2"} {
		nc := newNodeClaim(name)
		nc.Labels[v1.NodePoolLabelKey] = np.Name
		cloud.Diagnoses = map[string]cloudprovider.Diagnosis{name: {Certain: true, Reason: cloudprovider.ReasonNodeRoleNotAuthorized,
			Message: "The API server answers the kubelet 401 Unauthorized. " + fix, Evidence: `err="Unauthorized"`}}
		t.Cleanup(func() { cloud.Diagnoses = nil })
		testkit.Create(t, env.Client, nc)
		waitGone(t.Context(), t, nc)
		if findEvent(name, "Warning NodeRoleNotAuthorized Registered=False: ", fix) == "" || findEvent(name, "Warning NodeRoleNotAuthorized", "deleting it now", fix) == "" {
			t.Errorf("events %q, want Registered=False with the fix and the deletion", events.Events())
		}
		got := &v1.NodePool{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(np), got); err != nil {
			t.Fatal(err)
		}
		f := joinfailure.Read(got)
		if f == nil || f.Reason != cloudprovider.ReasonNodeRoleNotAuthorized || len(f.NodeClaims) != i+1 || !strings.Contains(f.Message, fix) {
			t.Fatalf("join failure on the nodepool %+v, want %d NodeClaims failed for NodeRoleNotAuthorized", f, i+1)
		}
		_, held, err := joinfailure.Held(t.Context(), env.Client, cloud, got, fakeTime.Now(), joinfailure.DefaultHold)
		if err != nil {
			t.Fatal(err)
		}
		if want := i+1 >= joinfailure.MaxLaunchesPerCause; held != want {
			t.Errorf("after %d failures held = %v, want %v", i+1, held, want)
		}
	}
	authMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aws-auth"},
		Data: map[string]string{"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo\n"}}
	testkit.Create(t, env.Client, authMap)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), authMap) })
	got := &v1.NodePool{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(np), got); err != nil {
		t.Fatal(err)
	}
	if _, held, err := joinfailure.Held(t.Context(), env.Client, cloud, got, fakeTime.Now(), joinfailure.DefaultHold); err != nil || held {
		t.Errorf("after aws-auth changed held = %v (%v), want false", held, err)
	}
	if _, held, _ := joinfailure.Held(t.Context(), env.Client, cloud, got, fakeTime.Now().Add(time.Hour), joinfailure.DefaultHold); held {
		t.Errorf("held after the hold lapsed")
	}
}

// A terminated instance fails its NodeClaim at once, but is not held against the NodePool.
func TestInstanceTerminatedIsNotHeldAgainstTheNodePool(t *testing.T) {
	np := newNodePool(t, "diag-terminated")
	nc := newNodeClaim("diag-terminated")
	nc.Labels[v1.NodePoolLabelKey] = np.Name
	cloud.Diagnoses = map[string]cloudprovider.Diagnosis{nc.Name: {Certain: true, InstanceOnly: true, Reason: cloudprovider.ReasonInstanceTerminated,
		Message: "Instance i-1 stopped before its Node joined: it is terminated"}}
	t.Cleanup(func() { cloud.Diagnoses = nil })
	testkit.Create(t, env.Client, nc)
	waitGone(t.Context(), t, nc)
	if e := events.Find(nc.Name, corev1.EventTypeWarning, cloudprovider.ReasonInstanceTerminated); e == "" {
		t.Errorf("no InstanceTerminated warning")
	}
	got := &v1.NodePool{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(np), got); err != nil {
		t.Fatal(err)
	}
	if f := joinfailure.Read(got); f != nil {
		t.Errorf("join failure recorded on the nodepool: %+v", f)
	}
}

// A Node registering clears its NodePool's join failure record.
func TestRegistrationClearsJoinFailure(t *testing.T) {
	np := newNodePool(t, "diag-clear")
	raw, _ := joinfailure.Record(nil, "earlier", cloudprovider.ReasonNodeRoleNotAuthorized, "401", "fp", fakeTime.Now())
	patch := client.MergeFrom(np.DeepCopy())
	np.Annotations = map[string]string{v1.JoinFailureAnnotationKey: raw}
	if err := env.Client.Patch(t.Context(), np, patch); err != nil {
		t.Fatal(err)
	}
	nc := newNodeClaim("diag-clear")
	nc.Labels[v1.NodePoolLabelKey] = np.Name
	launchAndRegister(t, nc, "node-diag-clear", v1.UnregisteredNoExecuteTaint())
	waitCondition(t, nc.Name, v1.ConditionTypeRegistered, "True/Registered")
	eventually(t, func() string {
		got := &v1.NodePool{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(np), got); err != nil {
			return err.Error()
		}
		if f := joinfailure.Read(got); f != nil {
			return "join failure still recorded"
		}
		return ""
	})
}
