package consolidatable_test

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/consolidatable"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

func TestReconcile(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	initialized := now.Add(-time.Minute)
	tests := []struct {
		name             string
		consolidateAfter string
		initialized      bool
		lastPodEvent     time.Time
		want             bool
		wantRequeue      time.Duration
	}{
		{name: "quiet-since-initialized", consolidateAfter: "30s", initialized: true, want: true},
		{name: "not-initialized", consolidateAfter: "30s"},
		{name: "within-wait", consolidateAfter: "2m", initialized: true, wantRequeue: time.Minute},
		{name: "recent-pod-event", consolidateAfter: "30s", initialized: true, lastPodEvent: now.Add(-10 * time.Second), wantRequeue: 20 * time.Second},
		{name: "old-pod-event-initialized-later", consolidateAfter: "90s", initialized: true, lastPodEvent: now.Add(-time.Hour), wantRequeue: 30 * time.Second},
		{name: "pod-event-long-ago", consolidateAfter: "30s", initialized: true, lastPodEvent: now.Add(-40 * time.Second), want: true},
		{name: "never", consolidateAfter: v1.Never, initialized: true},
		{name: "zero", consolidateAfter: "0s", initialized: true, lastPodEvent: now, want: true},
	}
	c := consolidatable.NewController(env.Client, clocktesting.NewFakeClock(now))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.CreateForTest(t, env.Client, &v1.NodePool{
				ObjectMeta: metav1.ObjectMeta{Name: tt.name},
				Spec: v1.NodePoolSpec{
					Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
						Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
						NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
					}},
					Disruption: v1.Disruption{ConsolidateAfter: v1.MustParseNillableDuration(tt.consolidateAfter)},
				},
			})
			nc := &v1.NodeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: tt.name, Labels: map[string]string{v1.NodePoolLabelKey: tt.name}},
				Spec: v1.NodeClaimSpec{
					Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
					NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
				},
			}
			testkit.CreateForTest(t, env.Client, nc)
			// A stale True condition, which the controller must remove when it no longer holds.
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue, Reason: "Stale", LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
			if tt.initialized {
				nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: metav1.NewTime(initialized)})
			}
			nc.Status.LastPodEventTime = metav1.NewTime(tt.lastPodEvent)
			if err := env.Client.Status().Update(t.Context(), nc); err != nil {
				t.Fatal(err)
			}
			res, err := c.Reconcile(t.Context(), nc)
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tt.wantRequeue {
				t.Errorf("RequeueAfter = %s, want %s", res.RequeueAfter, tt.wantRequeue)
			}
			got := &v1.NodeClaim{}
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeConsolidatable)
			switch {
			case tt.want && (cond == nil || cond.Status != metav1.ConditionTrue):
				t.Errorf("Consolidatable = %+v, want True", cond)
			case !tt.want && cond != nil:
				t.Errorf("Consolidatable = %+v, want absent", cond)
			}
		})
	}
}
