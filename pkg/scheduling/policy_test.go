package scheduling_test

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// policyCase is a parity-style case whose input is then adjusted by setup (policies, defaults).
type policyCase struct {
	name  string
	pools []*v1.NodePool
	nodes []*scheduling.Node
	pods  []*corev1.Pod
	setup func(in *scheduling.Input)
	want  []parCheck
}

func runPolicyCases(t *testing.T, cases []policyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &scheduling.Input{Pods: tc.pods, NodePools: tc.pools, Nodes: tc.nodes, InstanceTypes: parityTypes()}
			if in.NodePools == nil {
				in.NodePools = []*v1.NodePool{anyPool("default")}
			}
			if tc.setup != nil {
				tc.setup(in)
			}
			r := parResult{in: in, plan: solveChecked(t, in)}
			for _, w := range tc.want {
				w(t, r)
			}
		})
	}
}

func minValuesRelaxed(want bool, podName string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		nc := r.claimOf(podName)
		if nc == nil {
			t.Fatalf("pod %s is on no new NodeClaim", podName)
		}
		if nc.MinValuesRelaxed != want {
			t.Errorf("NodeClaim %s MinValuesRelaxed = %v, want %v", nc.Name, nc.MinValuesRelaxed, want)
		}
	}
}

// claimMinValues checks the minValues the pod's NodeClaim carries for key.
func claimMinValues(podName, key string, want int) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		nc := r.claimOf(podName)
		if nc == nil {
			t.Fatalf("pod %s is on no new NodeClaim", podName)
		}
		i := slices.IndexFunc(nc.Requirements, func(req v1.NodeSelectorRequirementWithMinValues) bool { return req.Key == key })
		if i < 0 || nc.Requirements[i].MinValues == nil || *nc.Requirements[i].MinValues != want {
			t.Errorf("NodeClaim %s requirements %v: want %s with minValues %d", nc.Name, nc.Requirements, key, want)
		}
	}
}

func policies(mv scheduling.MinValuesPolicy, pp scheduling.PreferencePolicy) func(in *scheduling.Input) {
	return func(in *scheduling.Input) { in.MinValuesPolicy, in.PreferencePolicy = mv, pp }
}

// nodeCount checks how many distinct nodes (existing or new) the named pods went to.
func nodeCount(n int, names ...string) parCheck {
	return func(t *testing.T, r parResult) {
		t.Helper()
		seen := map[string]bool{}
		for _, name := range names {
			seen[r.where(name)] = true
		}
		if len(seen) != n {
			t.Errorf("pods %v are on %d nodes, want %d", names, len(seen), n)
		}
	}
}

func TestMinValuesPolicy(t *testing.T) {
	// Only two instance types satisfy the pool, which asks for three.
	twoTypes := func() *v1.NodePool {
		return anyPool("default", poolMinValues(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, 3, "c5i0.1x", "m5i0.1x"))
	}
	met := func() *v1.NodePool {
		return anyPool("default", poolMinValues(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, 2, "c5i0.1x", "m5i0.1x"))
	}
	runPolicyCases(t, []policyCase{
		{name: "strict refuses a NodeClaim below minValues", pools: []*v1.NodePool{twoTypes()}, pods: one(pod("p", "100m", "128Mi")),
			want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonRequirements)}},
		{name: "best effort relaxes minValues and says so", pools: []*v1.NodePool{twoTypes()}, pods: one(pod("p", "100m", "128Mi")),
			setup: policies(scheduling.MinValuesBestEffort, ""),
			want:  []parCheck{scheduled("p"), minValuesRelaxed(true, "p"), claimMinValues("p", corev1.LabelInstanceTypeStable, 2)}},
		{name: "best effort keeps minValues that are met", pools: []*v1.NodePool{met()}, pods: one(pod("p", "100m", "128Mi")),
			setup: policies(scheduling.MinValuesBestEffort, ""),
			want:  []parCheck{scheduled("p"), minValuesRelaxed(false, "p"), claimMinValues("p", corev1.LabelInstanceTypeStable, 2)}},
		// Only one of the two types holds 2 GiB; a relaxed node keeps its lower minValues and
		// more pods join it within them.
		{name: "best effort relaxes for a pod only one type holds", pools: []*v1.NodePool{met()}, pods: []*corev1.Pod{pod("big", "200m", "2Gi"), pod("small", "100m", "128Mi")},
			setup: policies(scheduling.MinValuesBestEffort, ""),
			want:  []parCheck{allScheduled(), minValuesRelaxed(true, "big"), claimMinValues("big", corev1.LabelInstanceTypeStable, 1), sameNode("big", "small")}},
		{name: "strict refuses a pod only one type holds", pools: []*v1.NodePool{met()}, pods: one(pod("big", "200m", "2Gi")),
			want: []parCheck{notScheduled("big")}},
		// The heavier NodePool is relaxed before a lighter one that meets its minValues is tried.
		{name: "best effort relaxes the heavier NodePool first", pools: []*v1.NodePool{
			anyPool("heavy", poolWeight(10), poolMinValues(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, 3, "c5i0.1x", "m5i0.1x")),
			anyPool("light", poolMinValues(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpExists, 3))},
			pods: one(pod("p", "100m", "128Mi")), setup: policies(scheduling.MinValuesBestEffort, ""),
			want: []parCheck{custom(func(t *testing.T, r parResult) {
				if nc := r.claimOf("p"); nc == nil || nc.NodePool != "heavy" || !nc.MinValuesRelaxed {
					t.Errorf("pod p on %+v, want a relaxed NodeClaim of heavy", nc)
				}
			})}},
		{name: "strict falls through to the lighter NodePool", pools: []*v1.NodePool{
			anyPool("heavy", poolWeight(10), poolMinValues(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, 3, "c5i0.1x", "m5i0.1x")),
			anyPool("light", poolMinValues(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpExists, 3))},
			pods: one(pod("p", "100m", "128Mi")),
			want: []parCheck{custom(func(t *testing.T, r parResult) {
				if nc := r.claimOf("p"); nc == nil || nc.NodePool != "light" || nc.MinValuesRelaxed {
					t.Errorf("pod p on %+v, want a NodeClaim of light", nc)
				}
			})}},
		// Three zones exist; the pool asks for four.
		{name: "strict refuses unmet zone minValues", pools: []*v1.NodePool{anyPool("default", poolMinValues(corev1.LabelTopologyZone, v1.NodeSelectorOpExists, 4))},
			pods: one(pod("p", "100m", "128Mi")), want: []parCheck{notScheduled("p")}},
		{name: "best effort relaxes zone minValues", pools: []*v1.NodePool{anyPool("default", poolMinValues(corev1.LabelTopologyZone, v1.NodeSelectorOpExists, 4))},
			pods: one(pod("p", "100m", "128Mi")), setup: policies(scheduling.MinValuesBestEffort, ""),
			want: []parCheck{scheduled("p"), minValuesRelaxed(true, "p"), claimMinValues("p", corev1.LabelTopologyZone, 3)}},
		{name: "best effort relaxes type and zone minValues", pools: []*v1.NodePool{anyPool("default",
			poolMinValues(corev1.LabelTopologyZone, v1.NodeSelectorOpExists, 4), poolMinValues(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, 3, "c5i0.1x", "m5i0.1x"))},
			pods: one(pod("p", "100m", "128Mi")), setup: policies(scheduling.MinValuesBestEffort, ""),
			want: []parCheck{scheduled("p"), minValuesRelaxed(true, "p"), claimMinValues("p", corev1.LabelTopologyZone, 3), claimMinValues("p", corev1.LabelInstanceTypeStable, 2)}},
	})
}

func TestPreferencePolicy(t *testing.T) {
	web := func(n int, opt podOpt) []*corev1.Pod {
		return pods(n, "web", "100m", "128Mi", withLabels("app", "web"), opt)
	}
	noZoneReq := custom(func(t *testing.T, r parResult) {
		nc := r.claimOf("p")
		if slices.ContainsFunc(nc.Requirements, func(req v1.NodeSelectorRequirementWithMinValues) bool { return req.Key == corev1.LabelTopologyZone }) {
			t.Errorf("NodeClaim requirements %v constrain the zone: the preference was not ignored", nc.Requirements)
		}
	})
	runPolicyCases(t, []policyCase{
		{name: "respect: preferred node affinity narrows the node", pods: one(pod("p", "100m", "128Mi", withPreferred(10, corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, testZones[2]))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(testZones[2]), "p")}},
		{name: "ignore: preferred node affinity is left out", pods: one(pod("p", "100m", "128Mi", withPreferred(10, corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, testZones[2]))),
			setup: policies("", scheduling.PreferenceIgnore), want: []parCheck{scheduled("p"), noZoneReq}},
		{name: "respect: ScheduleAnyway hostname spread spreads", pods: web(3, withSpread(corev1.LabelHostname, 1, corev1.ScheduleAnyway)),
			want: []parCheck{nodeCount(3, "web-0", "web-1", "web-2")}},
		{name: "ignore: ScheduleAnyway hostname spread is left out", pods: web(3, withSpread(corev1.LabelHostname, 1, corev1.ScheduleAnyway)),
			setup: policies("", scheduling.PreferenceIgnore), want: []parCheck{nodeCount(1, "web-0", "web-1", "web-2")}},
		{name: "ignore keeps DoNotSchedule spreads", pods: web(3, withSpread(corev1.LabelHostname, 1, corev1.DoNotSchedule)),
			setup: policies("", scheduling.PreferenceIgnore), want: []parCheck{nodeCount(3, "web-0", "web-1", "web-2")}},
		{name: "respect: preferred pod anti-affinity separates", pods: web(3, withPreferredPodAffinityTo(corev1.LabelHostname, true, matchApp("web"))),
			want: []parCheck{nodeCount(3, "web-0", "web-1", "web-2")}},
		{name: "ignore: preferred pod anti-affinity is left out", pods: web(3, withPreferredPodAffinityTo(corev1.LabelHostname, true, matchApp("web"))),
			setup: policies("", scheduling.PreferenceIgnore), want: []parCheck{nodeCount(1, "web-0", "web-1", "web-2")}},
		{name: "ignore keeps required pod anti-affinity", pods: web(3, withPodAffinityTo(corev1.LabelHostname, true, matchApp("web"))),
			setup: policies("", scheduling.PreferenceIgnore), want: []parCheck{nodeCount(3, "web-0", "web-1", "web-2")}},
	})
}

// withLabelKeys sets matchLabelKeys (and mismatchLabelKeys) on the pod's last spread or last
// required pod (anti-)affinity term.
func withSpreadLabelKeys(keys ...string) podOpt {
	return func(p *corev1.Pod) {
		c := &p.Spec.TopologySpreadConstraints[len(p.Spec.TopologySpreadConstraints)-1]
		c.MatchLabelKeys = keys
	}
}

func withTermLabelKeys(anti bool, match, mismatch []string) podOpt {
	return func(p *corev1.Pod) {
		terms := p.Spec.Affinity.PodAffinity
		var list []corev1.PodAffinityTerm
		if anti {
			list = p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		} else {
			list = terms.RequiredDuringSchedulingIgnoredDuringExecution
		}
		list[len(list)-1].MatchLabelKeys, list[len(list)-1].MismatchLabelKeys = match, mismatch
	}
}

func TestMatchLabelKeys(t *testing.T) {
	// Three pods of the previous revision fill zone a; the new revision's zone spread counts
	// only its own revision when matchLabelKeys names the pod-template-hash.
	oldRevision := func() []*scheduling.Node {
		bound := pods(3, "old", "100m", "128Mi", withLabels("app", "web", "pod-template-hash", "old"))
		return []*scheduling.Node{zonedNode("n-a", testZones[0], "1", "2Gi", bound...)}
	}
	newRevision := func(opts ...podOpt) []*corev1.Pod {
		opts = append([]podOpt{withLabels("app", "web", "pod-template-hash", "new"), withSelectorSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule, matchApp("web"))}, opts...)
		return pods(3, "new", "100m", "128Mi", opts...)
	}
	inZoneA := func(want bool) parCheck {
		return custom(func(t *testing.T, r parResult) {
			got := false
			for _, n := range []string{"new-0", "new-1", "new-2"} {
				got = got || r.nodeLabels(n)[corev1.LabelTopologyZone] == testZones[0]
			}
			if got != want {
				t.Errorf("a new-revision pod in zone a: %v, want %v", got, want)
			}
		})
	}
	// An existing node holds a pod of another revision (or tenant).
	holding := func(kv ...string) []*scheduling.Node {
		return []*scheduling.Node{zonedNode("n-1", testZones[0], "4", "8Gi", pod("bound", "100m", "128Mi", withLabels(kv...)))}
	}
	antiWeb := withPodAffinityTo(corev1.LabelHostname, true, matchApp("web"))
	tenantSel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: metav1.LabelSelectorOpExists}}}
	antiTenant := withPodAffinityTo(corev1.LabelHostname, true, tenantSel)
	runPolicyCases(t, []policyCase{
		{name: "spread without matchLabelKeys counts the old revision", nodes: oldRevision(), pods: newRevision(),
			want: []parCheck{allScheduled(), inZoneA(false)}},
		{name: "spread matchLabelKeys counts only the pod's revision", nodes: oldRevision(), pods: newRevision(withSpreadLabelKeys("pod-template-hash")),
			want: []parCheck{allScheduled(), inZoneA(true)}},
		{name: "spread matchLabelKeys naming a label the pod lacks changes nothing", nodes: oldRevision(), pods: newRevision(withSpreadLabelKeys("no-such-label")),
			want: []parCheck{allScheduled(), inZoneA(false)}},
		{name: "anti-affinity without matchLabelKeys avoids the other revision", nodes: holding("app", "web", "pod-template-hash", "old"),
			pods: one(pod("p", "100m", "128Mi", withLabels("app", "web", "pod-template-hash", "new"), antiWeb)), want: []parCheck{onNewNode("p")}},
		{name: "anti-affinity matchLabelKeys ignores the other revision", nodes: holding("app", "web", "pod-template-hash", "old"),
			pods: one(pod("p", "100m", "128Mi", withLabels("app", "web", "pod-template-hash", "new"), antiWeb, withTermLabelKeys(true, []string{"pod-template-hash"}, nil))),
			want: []parCheck{onNode("p", "n-1")}},
		{name: "anti-affinity mismatchLabelKeys shares a node with its own tenant", nodes: holding("tenant", "a"),
			pods: one(pod("p", "100m", "128Mi", withLabels("tenant", "a"), antiTenant, withTermLabelKeys(true, nil, []string{"tenant"}))),
			want: []parCheck{onNode("p", "n-1")}},
		{name: "anti-affinity mismatchLabelKeys keeps off another tenant", nodes: holding("tenant", "b"),
			pods: one(pod("p", "100m", "128Mi", withLabels("tenant", "a"), antiTenant, withTermLabelKeys(true, nil, []string{"tenant"}))),
			want: []parCheck{onNewNode("p")}},
		{name: "affinity matchLabelKeys joins only its own revision", nodes: holding("app", "web", "pod-template-hash", "old"),
			pods: one(pod("p", "100m", "128Mi", withLabels("app", "api", "pod-template-hash", "new"), withPodAffinityTo(corev1.LabelHostname, false, matchApp("web")),
				withTermLabelKeys(false, []string{"pod-template-hash"}, nil))),
			want: []parCheck{notScheduled("p")}},
		{name: "affinity without matchLabelKeys joins the other revision", nodes: holding("app", "web", "pod-template-hash", "old"),
			pods: one(pod("p", "100m", "128Mi", withLabels("app", "api", "pod-template-hash", "new"), withPodAffinityTo(corev1.LabelHostname, false, matchApp("web")))),
			want: []parCheck{onNode("p", "n-1")}},
	})
}

func TestDefaultSpreadConstraints(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "abc"}}}}
	ownedBy := func(kind, name string) podOpt {
		return func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, Controller: new(true)}}
		}
	}
	web := func(opts ...podOpt) []*corev1.Pod {
		return pods(3, "web", "100m", "128Mi", append([]podOpt{withLabels("app", "web", "pod-template-hash", "abc")}, opts...)...)
	}
	hostname := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule}}
	defaults := func(ds *scheduling.DefaultSpread) func(in *scheduling.Input) {
		return func(in *scheduling.Input) { in.DefaultSpread = ds }
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	otherNS := svc.DeepCopy()
	otherNS.Namespace = "other"
	names := []string{"web-0", "web-1", "web-2"}
	runPolicyCases(t, []policyCase{
		{name: "no defaults: one node", pods: web(ownedBy("ReplicaSet", "web-abc")), want: []parCheck{nodeCount(1, names...)}},
		{name: "replicaset's selector spreads its pods", pods: web(ownedBy("ReplicaSet", "web-abc")),
			setup: defaults(&scheduling.DefaultSpread{Constraints: hostname, ReplicaSets: []*appsv1.ReplicaSet{rs}}), want: []parCheck{nodeCount(3, names...)}},
		{name: "a service selecting the pods spreads them", pods: web(),
			setup: defaults(&scheduling.DefaultSpread{Constraints: hostname, Services: []*corev1.Service{svc}}), want: []parCheck{nodeCount(3, names...)}},
		{name: "a service of another namespace does not", pods: web(),
			setup: defaults(&scheduling.DefaultSpread{Constraints: hostname, Services: []*corev1.Service{otherNS}}), want: []parCheck{nodeCount(1, names...)}},
		{name: "a pod with nothing to deduce a selector from is not defaulted", pods: web(ownedBy("Job", "web")),
			setup: defaults(&scheduling.DefaultSpread{Constraints: hostname, ReplicaSets: []*appsv1.ReplicaSet{rs}}), want: []parCheck{nodeCount(1, names...)}},
		{name: "a pod with its own constraints keeps them", pods: web(ownedBy("ReplicaSet", "web-abc"), withSpread(corev1.LabelHostname, 3, corev1.DoNotSchedule)),
			setup: defaults(&scheduling.DefaultSpread{Constraints: hostname, ReplicaSets: []*appsv1.ReplicaSet{rs}}), want: []parCheck{nodeCount(1, names...)}},
		{name: "ScheduleAnyway defaults are preferences, left out under Ignore", pods: web(ownedBy("ReplicaSet", "web-abc")),
			setup: func(in *scheduling.Input) {
				in.PreferencePolicy = scheduling.PreferenceIgnore
				in.DefaultSpread = &scheduling.DefaultSpread{Constraints: scheduling.SystemDefaultConstraints(), ReplicaSets: []*appsv1.ReplicaSet{rs}}
			}, want: []parCheck{nodeCount(1, names...)}},
	})
}

func TestValidateDefaultConstraints(t *testing.T) {
	ok := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule}
	with := func(f func(c *corev1.TopologySpreadConstraint)) []corev1.TopologySpreadConstraint {
		c := ok
		f(&c)
		return []corev1.TopologySpreadConstraint{c}
	}
	for _, tc := range []struct {
		name    string
		cs      []corev1.TopologySpreadConstraint
		wantErr bool
	}{
		{"valid", []corev1.TopologySpreadConstraint{ok}, false},
		{"system defaults", scheduling.SystemDefaultConstraints(), false},
		{"maxSkew 0", with(func(c *corev1.TopologySpreadConstraint) { c.MaxSkew = 0 }), true},
		{"no key", with(func(c *corev1.TopologySpreadConstraint) { c.TopologyKey = "" }), true},
		{"bad action", with(func(c *corev1.TopologySpreadConstraint) { c.WhenUnsatisfiable = "Sometimes" }), true},
		{"selector", with(func(c *corev1.TopologySpreadConstraint) { c.LabelSelector = matchApp("x") }), true},
		{"matchLabelKeys", with(func(c *corev1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"a"} }), true},
		{"repeated", []corev1.TopologySpreadConstraint{ok, ok}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := scheduling.ValidateDefaultConstraints(tc.cs); (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
