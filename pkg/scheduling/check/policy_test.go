package check_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/check"
)

// TestCheckerPolicies solves two small pods onto one NodeClaim, then adds to the input a rule
// the plan breaks (or keeps) and expects the checker to say so: default spreads, matchLabelKeys,
// mismatchLabelKeys and minValues under each policy.
func TestCheckerPolicies(t *testing.T) {
	hostnameSpread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule}}
	ownSpread := func(keys ...string) func(in *scheduling.Input, p *scheduling.Plan) {
		return func(in *scheduling.Input, _ *scheduling.Plan) {
			for _, p := range in.Pods {
				p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "anti"}}, MatchLabelKeys: keys}}
			}
		}
	}
	labelled := func(key string, values ...string) func(in *scheduling.Input, p *scheduling.Plan) {
		return func(in *scheduling.Input, _ *scheduling.Plan) {
			for i, p := range in.Pods {
				p.Labels[key] = values[i]
			}
		}
	}
	tenantAnti := func(in *scheduling.Input, _ *scheduling.Plan) {
		for _, p := range in.Pods {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey:       corev1.LabelHostname,
				LabelSelector:     &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: metav1.LabelSelectorOpExists}}},
				MismatchLabelKeys: []string{"tenant"}}}}}
		}
	}
	minValues := func(n int) func(in *scheduling.Input, p *scheduling.Plan) {
		return func(in *scheduling.Input, _ *scheduling.Plan) {
			in.NodePools[0].Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpExists, MinValues: new(n)}}
		}
	}
	relaxTo := func(n int) func(in *scheduling.Input, p *scheduling.Plan) {
		return func(_ *scheduling.Input, p *scheduling.Plan) {
			p.NodeClaims[0].MinValuesRelaxed = true
			p.NodeClaims[0].Requirements = append(p.NodeClaims[0].Requirements, v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpExists, MinValues: new(n)})
		}
	}
	// emptyNode is a second hostname domain with no pod: a node holding both pods is then at
	// skew 2.
	emptyNode := func(in *scheduling.Input, _ *scheduling.Plan) {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("20")}
		in.Nodes = []*scheduling.Node{{Name: "empty", Labels: map[string]string{corev1.LabelHostname: "empty", corev1.LabelArchStable: "amd64"}, Allocatable: l, Capacity: l}}
	}
	bestEffort := func(in *scheduling.Input, _ *scheduling.Plan) { in.MinValuesPolicy = scheduling.MinValuesBestEffort }
	tests := []struct {
		name    string
		changes []func(in *scheduling.Input, p *scheduling.Plan)
		want    string // "" when the plan is valid
	}{
		{"valid", nil, ""},
		{"default spread from a service", []func(*scheduling.Input, *scheduling.Plan){emptyNode, func(in *scheduling.Input, _ *scheduling.Plan) {
			in.DefaultSpread = &scheduling.DefaultSpread{Constraints: hostnameSpread, Services: []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "anti"}}}}}
		}}, "spread on kubernetes.io/hostname"},
		{"default spread, no selector deduced", []func(*scheduling.Input, *scheduling.Plan){emptyNode, func(in *scheduling.Input, _ *scheduling.Plan) {
			in.DefaultSpread = &scheduling.DefaultSpread{Constraints: hostnameSpread}
		}}, ""},
		{"spread, same revision", []func(*scheduling.Input, *scheduling.Plan){emptyNode, labelled("rev", "1", "1"), ownSpread("rev")}, "spread on kubernetes.io/hostname"},
		{"spread matchLabelKeys, two revisions", []func(*scheduling.Input, *scheduling.Plan){emptyNode, labelled("rev", "1", "2"), ownSpread("rev")}, ""},
		{"anti-affinity mismatchLabelKeys, one tenant", []func(*scheduling.Input, *scheduling.Plan){labelled("tenant", "a", "a"), tenantAnti}, ""},
		{"anti-affinity mismatchLabelKeys, two tenants", []func(*scheduling.Input, *scheduling.Plan){labelled("tenant", "a", "b"), tenantAnti}, "anti-affinity"},
		{"minValues met", []func(*scheduling.Input, *scheduling.Plan){minValues(2)}, ""},
		{"minValues not met", []func(*scheduling.Input, *scheduling.Plan){minValues(3)}, "minValues 3"},
		{"relaxed under Strict", []func(*scheduling.Input, *scheduling.Plan){minValues(3), relaxTo(2)}, "relaxed minValues under policy"},
		{"relaxed under BestEffort", []func(*scheduling.Input, *scheduling.Plan){minValues(3), relaxTo(2), bestEffort}, ""},
		{"relaxed below what it keeps", []func(*scheduling.Input, *scheduling.Plan){minValues(4), relaxTo(3), bestEffort}, "minValues 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput()
			for _, p := range in.Pods {
				p.Spec.Affinity = nil
				p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("100m")
			}
			plan, err := scheduling.Solve(in)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.NodeClaims) != 1 || len(plan.NodeClaims[0].Pods) != 2 || len(plan.NodeClaims[0].InstanceTypes) != 2 {
				t.Fatalf("want both pods on one NodeClaim of two types, got %+v", plan.NodeClaims)
			}
			for _, c := range tt.changes {
				c(in, plan)
			}
			var msgs []string
			for _, e := range check.Plan(in, plan) {
				msgs = append(msgs, e.Error())
			}
			all := strings.Join(msgs, "\n")
			if tt.want == "" && all != "" {
				t.Fatalf("valid plan rejected:\n%s", all)
			}
			if tt.want != "" && !strings.Contains(all, tt.want) {
				t.Fatalf("want a violation containing %q, got:\n%s", tt.want, all)
			}
		})
	}
}
