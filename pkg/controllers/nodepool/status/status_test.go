package status_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joinerhq/joiner/internal/testenv"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/nodepool/status"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

func nodeClaim(name, pool, cpu, memory string) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: pool}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "np-class"},
		},
		Status: v1.NodeClaimStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}},
	}
}

func TestNodePoolStatus(t *testing.T) {
	ctx := t.Context()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := status.NewController(env.Client, cluster.New(env.Client, false), &fake.CloudProvider{}, clk)

	np := amd64NodePool("counted", "np-class")
	mustCreate(t, np)
	// Two launched NodeClaims, one not launched yet (no capacity), one of another NodePool.
	for _, nc := range []*v1.NodeClaim{nodeClaim("counted-a", "counted", "2", "8Gi"), nodeClaim("counted-b", "counted", "4", "16Gi"), nodeClaim("counted-c", "counted", "0", "0"), nodeClaim("other-a", "other", "8", "32Gi")} {
		capacity := nc.Status.Capacity
		mustCreate(t, nc)
		if cpu := capacity[corev1.ResourceCPU]; cpu.IsZero() {
			continue
		}
		nc.Status.Capacity = capacity
		if err := env.Client.Status().Update(ctx, nc); err != nil {
			t.Fatal(err)
		}
	}

	steps := []struct {
		name           string
		before         func(t *testing.T)
		nodeClassReady metav1.ConditionStatus
		nodeClassWhy   string
		ready          metav1.ConditionStatus
	}{
		{name: "node class missing", nodeClassReady: metav1.ConditionFalse, nodeClassWhy: status.ReasonNodeClassNotFound, ready: metav1.ConditionFalse},
		{
			name: "node class without conditions",
			before: func(t *testing.T) {
				mustCreate(t, nodeClass("np-class"))
			},
			nodeClassReady: metav1.ConditionUnknown, nodeClassWhy: status.ReasonAwaitingReconciliation, ready: metav1.ConditionUnknown,
		},
		{name: "node class not ready", before: setNodeClassReady(metav1.ConditionFalse, "SubnetsNotFound"), nodeClassReady: metav1.ConditionFalse, nodeClassWhy: "SubnetsNotFound", ready: metav1.ConditionFalse},
		{name: "node class ready", before: setNodeClassReady(metav1.ConditionTrue, "Ready"), nodeClassReady: metav1.ConditionTrue, nodeClassWhy: "Ready", ready: metav1.ConditionTrue},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.before != nil {
				step.before(t)
			}
			clk.Step(time.Minute)
			got := &v1.NodePool{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Reconcile(ctx, got); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Nodes == nil || *got.Status.Nodes != 3 {
				t.Errorf("status.nodes = %v, want 3", got.Status.Nodes)
			}
			for res, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "6", corev1.ResourceMemory: "24Gi", "nodes": "3"} {
				if q := got.Status.Resources[res]; q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("status.resources[%s] = %s, want %s", res, q.String(), want)
				}
			}
			ncr := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeNodeClassReady)
			if ncr == nil || ncr.Status != step.nodeClassReady || ncr.Reason != step.nodeClassWhy || ncr.ObservedGeneration != got.Generation {
				t.Errorf("NodeClassReady = %+v, want %s/%s", ncr, step.nodeClassReady, step.nodeClassWhy)
			}
			if r := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeReady); r == nil || r.Status != step.ready {
				t.Errorf("Ready = %+v, want %s", r, step.ready)
			}
		})
	}
}

func setNodeClassReady(s metav1.ConditionStatus, reason string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		ctx := context.Background()
		nc := &awsv1.EC2NodeClass{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "np-class"}, nc); err != nil {
			t.Fatal(err)
		}
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: awsv1.ConditionTypeReady, Status: s, Reason: reason, Message: "test"})
		if err := env.Client.Status().Update(ctx, nc); err != nil {
			t.Fatal(err)
		}
	}
}

func mustCreate(t *testing.T, o client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %s: %v", o.GetName(), err)
	}
}

// TestCountsWrittenAtMostEveryInterval: a change of only the counts (status.nodes and
// status.resources) is written at once the first time, then no sooner than CountsWriteInterval
// after the last write, the Reconcile asking to come back when it may; a condition change is
// written at once, with the counts of the moment.
func TestCountsWrittenAtMostEveryInterval(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := status.NewController(env.Client, cluster.New(env.Client, false), &fake.CloudProvider{}, clk)
	np := amd64NodePool("throttled", "throttled-class")
	mustCreate(t, np)
	claims := 0
	addClaim := func(t *testing.T) {
		claims++
		mustCreate(t, nodeClaim(fmt.Sprintf("throttled-%d", claims), "throttled", "0", "0"))
	}
	steps := []struct {
		name        string
		before      func(t *testing.T)
		after       time.Duration
		wantNodes   int64
		wantRequeue time.Duration
	}{
		{name: "first write", before: addClaim, wantNodes: 1},
		{name: "counts only, a second later", before: addClaim, after: time.Second, wantNodes: 1, wantRequeue: status.CountsWriteInterval - time.Second},
		{name: "counts only, still within the interval", before: addClaim, after: time.Second, wantNodes: 1, wantRequeue: status.CountsWriteInterval - 2*time.Second},
		{name: "the interval over", after: status.CountsWriteInterval - 2*time.Second, wantNodes: 3},
		{name: "a condition changed, a second later", before: func(t *testing.T) {
			addClaim(t)
			mustCreate(t, nodeClass("throttled-class"))
		}, after: time.Second, wantNodes: 4},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.before != nil {
				step.before(t)
			}
			clk.Step(step.after)
			res, got := reconcileStored(t, c, np)
			if res.RequeueAfter != step.wantRequeue {
				t.Errorf("RequeueAfter = %s, want %s", res.RequeueAfter, step.wantRequeue)
			}
			if got.Status.Nodes == nil || *got.Status.Nodes != step.wantNodes {
				t.Errorf("stored status.nodes = %s, want %d", nodes(got), step.wantNodes)
			}
		})
	}
}

func nodes(np *v1.NodePool) string {
	if np.Status.Nodes == nil {
		return "unset"
	}
	return fmt.Sprint(*np.Status.Nodes)
}

// TestNodeRegistrationHealthyKeepsItsNode: NodeRegistrationHealthy turns True naming the node
// that registered first, and keeps naming it as more register (the message once named whichever
// the cache listed first, and the status was written again at nearly every reconcile).
func TestNodeRegistrationHealthyKeepsItsNode(t *testing.T) {
	ctx := t.Context()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := status.NewController(env.Client, cluster.New(env.Client, false), &fake.CloudProvider{}, clk)
	np := amd64NodePool("named", "named-class")
	mustCreate(t, np)
	registered := func(t *testing.T, name string, at time.Time) {
		t.Helper()
		nc := nodeClaim(name, "named", "0", "0")
		mustCreate(t, nc)
		nc.Status.NodeName = "node-" + name
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: "Registered", LastTransitionTime: metav1.NewTime(at)}}
		if err := env.Client.Status().Update(ctx, nc); err != nil {
			t.Fatal(err)
		}
	}
	message := func(t *testing.T) string {
		t.Helper()
		_, got := reconcileStored(t, c, np)
		cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			t.Fatalf("NodeRegistrationHealthy = %+v, want True", cond)
		}
		return cond.Message
	}
	t0 := clk.Now()
	registered(t, "named-b", t0)
	registered(t, "named-a", t0.Add(time.Second))
	if got, want := message(t), "Node node-named-b registered"; got != want {
		t.Errorf("message %q, want %q (the first to register)", got, want)
	}
	registered(t, "named-0", t0.Add(-time.Minute))
	clk.Step(time.Minute)
	if got, want := message(t), "Node node-named-b registered"; got != want {
		t.Errorf("after another registered, message %q, want it kept: %q", got, want)
	}
}

// amd64NodePool is a NodePool of amd64 nodes of the EC2NodeClass class.
func amd64NodePool(name, class string) *v1.NodePool {
	return &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: class},
		}}},
	}
}

// reconcileStored reconciles np as stored and returns the result and np as stored after.
func reconcileStored(t *testing.T, c *status.Controller, np *v1.NodePool) (reconcile.Result, *v1.NodePool) {
	t.Helper()
	got := &v1.NodePool{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(np), got); err != nil {
		t.Fatal(err)
	}
	res, err := c.Reconcile(t.Context(), got)
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(np), got); err != nil {
		t.Fatal(err)
	}
	return res, got
}

// nodeClass is an EC2NodeClass with no status yet.
func nodeClass(name string) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: awsv1.EC2NodeClassSpec{
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			Role:                       "NodeRole",
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"k": "v"}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"k": "v"}}},
		},
	}
}
