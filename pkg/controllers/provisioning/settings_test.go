package provisioning_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// withSettings rebuilds the harness's controller with the operator's scheduling settings.
func (h *harness) withSettings(t *testing.T, st scheduling.Settings) {
	t.Helper()
	var err error
	h.c, err = provisioning.NewController(env.Client, cluster.New(env.Client, false), h.cloud, h.clock, h.events, prometheus.NewRegistry(), idle, max, provisioning.WithScheduling(st))
	if err != nil {
		t.Fatal(err)
	}
}

// TestMinValuesPolicyAnnotatesNodeClaims: a NodePool asking minValues 3 of three instance types,
// of which the cloud offers two, launches nothing under Strict; under BestEffort its NodeClaim
// carries minValues 2 and karpenter.sh/nodeclaim-min-values-relaxed "true". A NodeClaim that
// meets them says "false".
func TestMinValuesPolicyAnnotatesNodeClaims(t *testing.T) {
	for _, tc := range []struct {
		name          string
		policy        scheduling.MinValuesPolicy
		minValues     int
		wantClaims    int
		wantAnnotated string
		wantMinValues int
	}{
		{name: "strict", policy: scheduling.MinValuesStrict, minValues: 3},
		{name: "best effort", policy: scheduling.MinValuesBestEffort, minValues: 3, wantClaims: 1, wantAnnotated: "true", wantMinValues: 2},
		{name: "met", policy: scheduling.MinValuesBestEffort, minValues: 2, wantClaims: 1, wantAnnotated: "false", wantMinValues: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset(t)
			h := newHarness(t)
			h.withSettings(t, scheduling.Settings{MinValuesPolicy: tc.policy})
			np := nodePool("default", func(np *v1.NodePool) {
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
					Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"small.2x", "large.8x", "none.1x"}, MinValues: new(tc.minValues)})
			})
			create(t, np, pendingPod("a", "500m", "1Gi"))
			h.runBatch(t)
			claims := nodeClaims(t)
			if len(claims) != tc.wantClaims {
				t.Fatalf("got %d NodeClaims, want %d", len(claims), tc.wantClaims)
			}
			if tc.wantClaims == 0 {
				return
			}
			nc := &claims[0]
			if got := nc.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey]; got != tc.wantAnnotated {
				t.Errorf("annotation %s = %q, want %q", v1.NodeClaimMinValuesRelaxedAnnotationKey, got, tc.wantAnnotated)
			}
			r := requirement(nc, corev1.LabelInstanceTypeStable)
			if r == nil || r.MinValues == nil || *r.MinValues != tc.wantMinValues {
				t.Errorf("instance-type requirement %+v, want minValues %d", r, tc.wantMinValues)
			}
		})
	}
}

// TestDefaultSpreadFromSchedulerConfig: with a default hostname spread, the pods of a
// ReplicaSet, which have no constraint of their own, go to one NodeClaim each (the selector is
// the ReplicaSet's, read from the cluster); without it, they share one.
func TestDefaultSpreadFromSchedulerConfig(t *testing.T) {
	for _, tc := range []struct {
		name       string
		defaults   []corev1.TopologySpreadConstraint
		wantClaims int
	}{
		{name: "no defaults", wantClaims: 1},
		{name: "hostname default", defaults: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule}}, wantClaims: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset(t)
			if err := env.Client.DeleteAllOf(context.Background(), &appsv1.ReplicaSet{}, client.InNamespace("default")); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t)
			h.withSettings(t, scheduling.Settings{DefaultConstraints: tc.defaults})
			labels := map[string]string{"app": "web", "pod-template-hash": "abc"}
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "default"}, Spec: appsv1.ReplicaSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}},
			}}
			create(t, nodePool("default"), rs)
			owned := func(p *corev1.Pod) {
				p.Labels = labels
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: new(true)}}
			}
			create(t, pendingPod("a", "100m", "128Mi", owned), pendingPod("b", "100m", "128Mi", owned), pendingPod("c", "100m", "128Mi", owned))
			h.runBatch(t)
			if got := len(nodeClaims(t)); got != tc.wantClaims {
				t.Errorf("got %d NodeClaims, want %d", got, tc.wantClaims)
			}
		})
	}
}
