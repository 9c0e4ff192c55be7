package lifecycle

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/joinerhq/joiner/internal/testenv"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	fakecloud "github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/operator"
)

// TestStaleReadWaitsForTheNewerNodeClaim: a reconcile of a NodeClaim read before another write
// of it (a cache that lags) conflicts on its status write; it neither fails (a retry from the same
// cache conflicts again) nor tells its transitions, and comes back later. Read afresh, the same
// reconcile writes the status and tells each transition once.
func TestStaleReadWaitsForTheNewerNodeClaim(t *testing.T) {
	ctx := t.Context()
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	const providerID = "aws:///us-west-2a/i-0123456789abcdef0"
	nodeClaim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "stale", UID: "stale-uid", Finalizers: []string{v1.TerminationFinalizer}},
		Status: v1.NodeClaimStatus{ProviderID: providerID, Conditions: []metav1.Condition{
			{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: metav1.Now()},
		}},
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-stale", UID: "node-uid", Labels: map[string]string{v1.NodeRegisteredLabelKey: "true"}},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(nodeClaim, node).WithStatusSubresource(&v1.NodeClaim{}).
		WithIndex(&corev1.Node{}, nodeProviderIDIndex, func(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }).
		Build()
	recorder := &testenv.Recorder{}
	c := NewController(kube, &fakecloud.CloudProvider{}, clocktesting.NewFakeClock(time.Now()), recorder)

	stale := &v1.NodeClaim{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(nodeClaim), stale); err != nil {
		t.Fatal(err)
	}
	newer := stale.DeepCopy()
	newer.Status.LastPodEventTime = metav1.Now()
	if err := kube.Status().Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	res, err := c.Reconcile(ctx, stale.DeepCopy())
	if err != nil {
		t.Fatalf("Reconcile of a stale NodeClaim: %v, want no error", err)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > conflictRequeue {
		t.Errorf("RequeueAfter = %s, want a retry within %s", res.RequeueAfter, conflictRequeue)
	}
	if got := recorder.Events(); len(got) != 0 {
		t.Errorf("events %q after a write that conflicted, want none", got)
	}

	fresh := &v1.NodeClaim{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(nodeClaim), fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reconcile(ctx, fresh); err != nil {
		t.Fatalf("Reconcile of a fresh NodeClaim: %v", err)
	}
	if recorder.Find("stale", corev1.EventTypeNormal, "Registered") == "" {
		t.Errorf("events %q, want one Registered", recorder.Events())
	}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(nodeClaim), fresh); err != nil {
		t.Fatal(err)
	}
	if !isTrue(fresh, v1.ConditionTypeRegistered) || fresh.Status.LastPodEventTime.IsZero() {
		t.Errorf("stored status %+v, want Registered True and the newer write's lastPodEventTime kept", fresh.Status)
	}
}
