package drift_test

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
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/drift"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

// TestReconcile: each reason, in order, on a launched NodeClaim of a NodePool.
func TestReconcile(t *testing.T) {
	tests := []struct {
		name     string
		nodePool func(*v1.NodePool) // applied after the NodeClaim was made from it
		types    []string           // the cloud's instance types; nil: m7i.large
		cloud    cloudprovider.DriftReason
		want     string // the Drifted reason; "" for no condition
	}{
		{name: "matches"},
		{name: "nodepool-template", nodePool: func(np *v1.NodePool) { np.Spec.Template.Labels = map[string]string{"team": "b"} }, want: "NodePoolDrifted"},
		{name: "requirements", nodePool: func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"arm64"}}}
		}, want: "RequirementsDrifted"},
		{name: "instance-type-gone", types: []string{"m8i.large"}, want: "InstanceTypeNotFound"},
		{name: "cloud", cloud: "AMIDrift", want: "AMIDrift"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			np := &v1.NodePool{
				ObjectMeta: metav1.ObjectMeta{Name: "drift-" + tt.name},
				Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
					Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
					NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
				}}},
			}
			testkit.CreateForTest(t, env.Client, np)
			nc := &v1.NodeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: "drift-" + tt.name, Labels: map[string]string{
					v1.NodePoolLabelKey: np.Name, corev1.LabelArchStable: "amd64", corev1.LabelInstanceTypeStable: "m7i.large",
				}, Annotations: map[string]string{
					v1.NodePoolHashAnnotationKey: np.Hash(), v1.NodePoolHashVersionAnnotationKey: v1.NodePoolHashVersion,
				}},
				Spec: v1.NodeClaimSpec{NodeClassRef: np.Spec.Template.Spec.NodeClassRef, Requirements: np.Spec.Template.Spec.Requirements},
			}
			testkit.CreateForTest(t, env.Client, nc)
			nc.Status.ProviderID = "fake:///drift-" + tt.name
			if err := env.Client.Status().Update(ctx, nc); err != nil {
				t.Fatal(err)
			}
			if tt.nodePool != nil {
				tt.nodePool(np)
				if err := env.Client.Update(ctx, np); err != nil {
					t.Fatal(err)
				}
			}
			cloud := &fake.CloudProvider{Drifted: map[string]cloudprovider.DriftReason{nc.Status.ProviderID: tt.cloud}}
			names := tt.types
			if names == nil {
				names = []string{"m7i.large"}
			}
			for _, n := range names {
				cloud.InstanceTypes = append(cloud.InstanceTypes, &cloudprovider.InstanceType{Name: n})
			}
			c := drift.NewController(env.Client, cloud, clocktesting.NewFakeClock(time.Now()))
			res, err := c.Reconcile(ctx, nc)
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != drift.PollInterval {
				t.Errorf("requeue after %s, want %s", res.RequeueAfter, drift.PollInterval)
			}
			got := &v1.NodeClaim{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDrifted)
			switch {
			case tt.want == "" && cond != nil:
				t.Errorf("Drifted = %+v, want none", cond)
			case tt.want != "" && (cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != tt.want):
				t.Errorf("Drifted = %+v, want True/%s", cond, tt.want)
			}
		})
	}
}
