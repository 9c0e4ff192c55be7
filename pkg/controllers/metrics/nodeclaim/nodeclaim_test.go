package nodeclaim_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/metrics/nodeclaim"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

func cond(conditionType string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: conditionType, Status: status, Reason: reason, LastTransitionTime: metav1.Now()}
}

func claim(pool string, conditions ...metav1.Condition) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "nc", Labels: map[string]string{v1.NodePoolLabelKey: pool}},
		Status:     v1.NodeClaimStatus{Conditions: conditions},
	}
}

// counts reads every counter of the controller as "name{labels}" -> value, leaving out zeros.
func counts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName() + "{"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			if v := m.GetCounter().GetValue(); v != 0 {
				out[key+"}"] = v
			}
		}
	}
	return out
}

func TestTransitions(t *testing.T) {
	const T, F, U = metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown
	launched := cond(v1.ConditionTypeLaunched, T, "Launched")
	for _, tc := range []struct {
		name     string
		old, new *v1.NodeClaim
		deleted  *v1.NodeClaim
		want     map[string]float64
	}{
		{name: "launch", old: claim("default", cond(v1.ConditionTypeLaunched, U, "")), new: claim("default", launched),
			want: map[string]float64{"karpenter_nodeclaims_launched_total{nodepool=default}": 1}},
		{name: "no transition, no count", old: claim("default", launched), new: claim("default", launched), want: map[string]float64{}},
		{name: "register and initialize at once", old: claim("a", launched),
			new:  claim("a", launched, cond(v1.ConditionTypeRegistered, T, "Registered"), cond(v1.ConditionTypeInitialized, T, "Initialized")),
			want: map[string]float64{"karpenter_nodeclaims_registered_total{nodepool=a}": 1, "karpenter_nodeclaims_initialized_total{nodepool=a}": 1}},
		{name: "registration fails with a reason", old: claim("a", launched, cond(v1.ConditionTypeRegistered, U, "NodeNotFound")),
			new:  claim("a", launched, cond(v1.ConditionTypeRegistered, F, "UnregisteredTaintNotFound")),
			want: map[string]float64{"joiner_nodeclaims_join_failed_total{nodepool=a,reason=UnregisteredTaintNotFound}": 1}},
		{name: "a second False reason is the same failure", old: claim("a", launched, cond(v1.ConditionTypeRegistered, F, "MultipleNodesFound")),
			new: claim("a", launched, cond(v1.ConditionTypeRegistered, F, "UnregisteredTaintNotFound")), want: map[string]float64{}},
		{name: "deleted while waiting for the node", deleted: claim("b", launched, cond(v1.ConditionTypeRegistered, U, "NodeNotFound")),
			want: map[string]float64{"joiner_nodeclaims_join_failed_total{nodepool=b,reason=NodeNotFound}": 1}},
		{name: "deleted without a Registered condition", deleted: claim("b", launched),
			want: map[string]float64{"joiner_nodeclaims_join_failed_total{nodepool=b,reason=Unknown}": 1}},
		{name: "deleted after a counted failure", deleted: claim("b", launched, cond(v1.ConditionTypeRegistered, F, "UnregisteredTaintNotFound")), want: map[string]float64{}},
		{name: "deleted before launch is not a failed join", deleted: claim("b", cond(v1.ConditionTypeLaunched, F, "InsufficientCapacity")), want: map[string]float64{}},
		{name: "deleted after joining", deleted: claim("b", launched, cond(v1.ConditionTypeRegistered, T, "Registered")), want: map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			c, err := nodeclaim.NewController(reg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.new != nil {
				c.Observe(tc.old, tc.new)
			}
			if tc.deleted != nil {
				c.Deleted(tc.deleted)
			}
			got := counts(t, reg)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("counters = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRegistersTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := nodeclaim.NewController(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := nodeclaim.NewController(reg)
	if err != nil {
		t.Fatalf("a second controller on one registry should share the counters, %v", err)
	}
	a.Deleted(claim("x", cond(v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched")))
	b.Deleted(claim("x", cond(v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched")))
	want := map[string]float64{"joiner_nodeclaims_join_failed_total{nodepool=x,reason=Unknown}": 2}
	if got := counts(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counters = %v, want %v: one shared series", got, want)
	}
}

// TestCountsFromTheAPIServer drives a NodeClaim through its conditions on a real API server and
// reads the counters the informer handler kept, including the failed join at deletion.
func TestCountsFromTheAPIServer(t *testing.T) {
	ctx := t.Context()
	reg := prometheus.NewRegistry()
	c, err := nodeclaim.NewController(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error { return c.Register(ctx, mgr) }); err != nil {
		t.Fatal(err)
	}
	newClaim := func(name string) *v1.NodeClaim {
		nc := &v1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "metrics"}},
			Spec: v1.NodeClaimSpec{
				Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
				NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			},
		}
		if err := env.Client.Create(ctx, nc); err != nil {
			t.Fatal(err)
		}
		return nc
	}
	setConditions := func(nc *v1.NodeClaim, conditions ...metav1.Condition) {
		t.Helper()
		stored := nc.DeepCopy()
		nc.Status.Conditions = conditions
		if err := env.Client.Status().Patch(ctx, nc, client.MergeFrom(stored)); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want map[string]float64) {
		t.Helper()
		testkit.Eventually(t, 10*time.Second, func() string {
			if got := counts(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Sprintf("counters = %v, want %v", got, want)
			}
			return ""
		})
	}
	const T, U = metav1.ConditionTrue, metav1.ConditionUnknown
	joined := newClaim("metrics-joined")
	setConditions(joined, cond(v1.ConditionTypeLaunched, T, "Launched"), cond(v1.ConditionTypeRegistered, U, "NodeNotFound"))
	expect(map[string]float64{"karpenter_nodeclaims_launched_total{nodepool=metrics}": 1})
	setConditions(joined, cond(v1.ConditionTypeLaunched, T, "Launched"), cond(v1.ConditionTypeRegistered, T, "Registered"), cond(v1.ConditionTypeInitialized, T, "Initialized"))
	lost := newClaim("metrics-lost")
	setConditions(lost, cond(v1.ConditionTypeLaunched, T, "Launched"), cond(v1.ConditionTypeRegistered, U, "NodeNotFound"))
	if err := env.Client.Delete(ctx, lost); err != nil {
		t.Fatal(err)
	}
	expect(map[string]float64{
		"karpenter_nodeclaims_launched_total{nodepool=metrics}":                     2,
		"karpenter_nodeclaims_registered_total{nodepool=metrics}":                   1,
		"karpenter_nodeclaims_initialized_total{nodepool=metrics}":                  1,
		"joiner_nodeclaims_join_failed_total{nodepool=metrics,reason=NodeNotFound}": 1,
	})
}
