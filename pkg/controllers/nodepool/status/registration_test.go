package status_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/nodepool/status"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

// TestNodeRegistrationHealthy walks a NodePool through a recorded join failure: Unknown before
// any node registered; False with the cause while the inputs are unchanged, saying whether one
// more launch is allowed or launches are held; Unknown once aws-auth changed; True after a node
// registered and the record was removed.
func TestNodeRegistrationHealthy(t *testing.T) {
	ctx := t.Context()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cloud := &fake.CloudProvider{}
	c := status.NewController(env.Client, cluster.New(env.Client, false), cloud, clk)
	np := amd64NodePool("joining", "joining-class")
	mustCreate(t, np)
	record := func(nodeClaims ...string) func(t *testing.T) {
		return func(t *testing.T) {
			got := &v1.NodePool{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
				t.Fatal(err)
			}
			fp, err := joinfailure.Inputs(ctx, env.Client, cloud, got)
			if err != nil {
				t.Fatal(err)
			}
			var raw string
			var f *joinfailure.Failure
			for _, nc := range nodeClaims {
				raw, f = joinfailure.Record(f, nc, "NodeRoleNotAuthorized", "map the node role", fp, clk.Now())
			}
			patch := client.MergeFrom(got.DeepCopy())
			got.Annotations = map[string]string{v1.JoinFailureAnnotationKey: raw}
			if raw == "" {
				got.Annotations = nil
			}
			if err := env.Client.Patch(ctx, got, patch); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name    string
		before  func(t *testing.T)
		want    string
		message string
		requeue bool
	}{
		{name: "nothing yet", want: "Unknown/" + status.ReasonAwaitingRegistration},
		{name: "one failure", before: record("a"), want: "False/NodeRoleNotAuthorized", message: "One more launch is allowed", requeue: true},
		{name: "two failures", before: record("a", "b"), want: "False/NodeRoleNotAuthorized", message: "Launches are held", requeue: true},
		{name: "aws-auth changed", before: func(t *testing.T) {
			mustCreate(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aws-auth"}, Data: map[string]string{"mapRoles": "[]"}})
		}, want: "Unknown/" + status.ReasonJoinInputsChanged, message: "has changed since"},
		{name: "a node registered", before: func(t *testing.T) {
			record()(t)
			nc := nodeClaim("joining-a", "joining", "2", "8Gi")
			mustCreate(t, nc)
			nc.Status.NodeName = "node-a"
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: "Registered", LastTransitionTime: metav1.Now()}}
			if err := env.Client.Status().Update(ctx, nc); err != nil {
				t.Fatal(err)
			}
		}, want: "True/" + status.ReasonNodeRegistered, message: "node-a"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.before != nil {
				step.before(t)
			}
			got := &v1.NodePool{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
				t.Fatal(err)
			}
			res, err := c.Reconcile(ctx, got)
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if (res.RequeueAfter > 0) != step.requeue {
				t.Errorf("RequeueAfter = %s, want a requeue: %v", res.RequeueAfter, step.requeue)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy)
			if cond == nil || string(cond.Status)+"/"+cond.Reason != step.want || !strings.Contains(cond.Message, step.message) {
				t.Errorf("NodeRegistrationHealthy = %+v, want %s with %q", cond, step.want, step.message)
			}
		})
	}
}
