package termination_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
)

// condition returns "Status/Reason: Message" of the NodeClaim's condition, or "absent".
func condition(nc *v1.NodeClaim, conditionType string) string {
	for _, c := range nc.Status.Conditions {
		if c.Type == conditionType {
			return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "absent"
}

// waitNodeClaim waits until check passes on the NodeClaim.
func waitNodeClaim(t *testing.T, name string, check func(*v1.NodeClaim) string) *v1.NodeClaim {
	t.Helper()
	nc := &v1.NodeClaim{}
	eventually(t, func() string {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, nc); err != nil {
			return err.Error()
		}
		return check(nc)
	})
	return nc
}

func hasCondition(conditionType, prefix string) func(*v1.NodeClaim) string {
	return func(nc *v1.NodeClaim) string {
		if got := condition(nc, conditionType); !strings.HasPrefix(got, prefix) {
			return fmt.Sprintf("nodeclaim %s %s = %q, want %q...", nc.Name, conditionType, got, prefix)
		}
		return ""
	}
}

// registeredNode launches a NodeClaim through the lifecycle controller and registers its Node,
// returning both.
func registeredNode(t *testing.T, name string, terminationGracePeriod *metav1.Duration) (*v1.NodeClaim, *corev1.Node) {
	t.Helper()
	ctx := t.Context()
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodeClaimSpec{
			Requirements:           []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
			NodeClassRef:           &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			TerminationGracePeriod: terminationGracePeriod,
		},
	}
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	nc = waitNodeClaim(t, name, hasCondition(v1.ConditionTypeLaunched, "True"))
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-" + name},
		Spec:       corev1.NodeSpec{ProviderID: nc.Status.ProviderID, Taints: []corev1.Taint{v1.UnregisteredNoExecuteTaint()}},
	}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	nc = waitNodeClaim(t, name, hasCondition(v1.ConditionTypeRegistered, "True"))
	return nc, node
}

// newPod creates a running pod bound to the node. A zero grace period makes an eviction delete it
// at once, as no kubelet runs to finish the job.
func newPod(t *testing.T, name, nodeName string, edit func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if edit != nil {
		edit(pod)
	}
	if err := env.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	// Running and Ready, as a kubelet would report: the Eviction API lets unready pods go whatever
	// their budget says.
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := env.Client.Status().Update(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// exists reports whether the object still exists, and whether it is being deleted.
func exists(t *testing.T, obj client.Object) (found, deleting bool) {
	t.Helper()
	err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return false, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true, !obj.GetDeletionTimestamp().IsZero()
}

func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, func() string {
		if found, _ := exists(t, obj); found {
			return fmt.Sprintf("%s %s still exists (finalizers %v)", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), obj.GetFinalizers())
		}
		return ""
	})
}

// setPDBStatus writes the status that the disruption controller (not running here) would.
func setPDBStatus(t *testing.T, pdb *policyv1.PodDisruptionBudget, allowed int32) {
	t.Helper()
	eventually(t, func() string {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(pdb), pdb); err != nil {
			return err.Error()
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{
			ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
			CurrentHealthy: 1, DesiredHealthy: 1 - allowed, ExpectedPods: 1,
		}
		if err := env.Client.Status().Update(t.Context(), pdb); err != nil {
			return err.Error()
		}
		return ""
	})
}

func TestTerminationDrainsHonouringPDB(t *testing.T) {
	ctx := t.Context()
	nc, node := registeredNode(t, "pdb", nil)
	app := newPod(t, "app", node.Name, nil)
	daemon := newPod(t, "daemon", node.Name, func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: types.UID("ds-uid")}}
	})
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
		},
	}
	if err := env.Client.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pdb) }) // t.Context() is done in cleanups
	setPDBStatus(t, pdb, 0)

	if err := env.Client.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	waitNodeClaim(t, nc.Name, func(nc *v1.NodeClaim) string {
		if got := condition(nc, v1.ConditionTypeDrained); !strings.Contains(got, "1 pods whose eviction a PodDisruptionBudget refuses") {
			return fmt.Sprintf("Drained = %q, want it to name the pod its PDB protects", got)
		}
		return ""
	})
	eventually(t, func() string {
		if found, _ := exists(t, node); !found {
			return "node gone while drain blocked"
		}
		if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == v1.DisruptedTaintKey }) {
			return fmt.Sprintf("node taints %v, want %s", node.Spec.Taints, v1.DisruptedTaintKey)
		}
		return ""
	})
	if found, deleting := exists(t, app); !found || deleting {
		t.Fatalf("pod app found=%v deleting=%v while its PDB allows no disruption", found, deleting)
	}
	if found, deleting := exists(t, daemon); !found || deleting {
		t.Fatalf("daemonset pod found=%v deleting=%v before the tier before it drained", found, deleting)
	}
	if events.Find("app", corev1.EventTypeWarning, "FailedDraining") == "" {
		t.Errorf("no FailedDraining event on the blocked pod")
	}

	setPDBStatus(t, pdb, 1)
	waitGone(t, app)
	waitGone(t, daemon)
	waitGone(t, node)
	waitGone(t, nc)
	if _, err := cloud.Get(ctx, nc.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("instance %s still exists after termination: %v", nc.Status.ProviderID, err)
	}
	if cloud.CallsTo(fake.MethodDelete) == 0 {
		t.Errorf("cloud Delete never called")
	}
}

func TestTerminationDoNotDisruptUntilGracePeriod(t *testing.T) {
	ctx := t.Context()
	nc, node := registeredNode(t, "tgp", &metav1.Duration{Duration: 10 * time.Minute})
	// The termination timestamp follows the API server's clock; leave the fake clock where it was.
	t.Cleanup(func() { fakeTime.SetTime(time.Now()) })
	pinned := newPod(t, "pinned", node.Name, func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	})
	if err := env.Client.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	got := waitNodeClaim(t, nc.Name, hasCondition(v1.ConditionTypeDrained, "False/Draining"))
	if msg := condition(got, v1.ConditionTypeDrained); !strings.Contains(msg, v1.DoNotDisruptAnnotationKey) {
		t.Errorf("Drained %q does not name the do-not-disrupt pod", msg)
	}
	if got.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey] == "" {
		t.Errorf("no termination timestamp annotation on the deleted NodeClaim")
	}
	fakeTime.Step(5 * time.Minute)
	if found, deleting := exists(t, pinned); !found || deleting {
		t.Fatalf("do-not-disrupt pod found=%v deleting=%v before terminationGracePeriod", found, deleting)
	}

	fakeTime.Step(6 * time.Minute) // past deletion + 10m
	waitGone(t, pinned)
	waitGone(t, node)
	waitGone(t, nc)
	if events.Find("pinned", corev1.EventTypeWarning, "Deleted") == "" {
		t.Errorf("no event for the pod deleted at the end of terminationGracePeriod")
	}
}

func TestDeletingNodeDeletesNodeClaim(t *testing.T) {
	nc, node := registeredNode(t, "node-first", nil)
	if err := env.Client.Delete(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	waitGone(t, node)
	waitGone(t, nc)
	if _, err := cloud.Get(t.Context(), nc.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("instance %s still exists: %v", nc.Status.ProviderID, err)
	}
}
