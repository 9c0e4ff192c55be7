package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// TestParityPodAffinity: required and preferred pod affinity and anti-affinity (upstream
// topology suite, "Pod Affinity/Anti-Affinity"). The targets are bound, the pods' own kind, or
// pending in the same batch (placed first whatever the input order: TestPodAffinityWithinBatchPlacesTargetsFirst
// runs those cases over shuffled inputs).
func TestParityPodAffinity(t *testing.T) {
	zone, host, arch := corev1.LabelTopologyZone, corev1.LabelHostname, corev1.LabelArchStable
	fivePods := []*scheduling.InstanceType{customType("five-pods", "16", "32Gi", 0.5, amd64Linux())}
	fivePods[0].Allocatable[corev1.ResourcePods] = resource5()
	emptyAffinity := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{}, PodAntiAffinity: &corev1.PodAntiAffinity{}}
	}
	target := func(name, zone string) *scheduling.Node {
		return zonedNode(name, zone, "16", "32Gi", pod("target", "100m", "128Mi", withLabels("app", "target")))
	}
	runParity(t, []parCase{
		{name: "empty pod affinity and anti-affinity are no constraint", pods: one(pod("p", "1", "1Gi", emptyAffinity)), want: []parCheck{scheduled("p")}},
		{name: "hostname affinity to a bound pod joins its node", nodes: []*scheduling.Node{target("n-t", zoneB), zonedNode("n-other", zoneA, "16", "32Gi")},
			pods: one(pod("p", "1", "1Gi", withPodAffinityTo(host, false, matchApp("target")))), want: []parCheck{onNode("p", "n-t")}},
		{name: "arch affinity to a bound pod picks its architecture", nodes: []*scheduling.Node{fullNode("n-t", zoneB, pod("target", "10m", "16Mi", withLabels("app", "target")))},
			pods: one(pod("p", "1", "1Gi", withPodAffinityTo(arch, false, matchApp("target")))), want: []parCheck{onNewNode("p"), label(arch, is(v1.ArchitectureAmd64), "p")}},
		{name: "hostname affinity to a pod pending in the same batch joins its node",
			pods: []*corev1.Pod{pod("target", "100m", "128Mi", withLabels("app", "target")), pod("p", "1", "1Gi", withPodAffinityTo(host, false, matchApp("target")))},
			want: []parCheck{allScheduled(), sameNode("target", "p")}},
		{name: "arch affinity to a pod pending in the same batch picks its architecture",
			pods: []*corev1.Pod{pod("target", "100m", "128Mi", withLabels("app", "target"), withNodeSelector(arch, v1.ArchitectureArm64)),
				pod("p", "1", "1Gi", withPodAffinityTo(arch, false, matchApp("target")))},
			want: []parCheck{allScheduled(), label(arch, is(v1.ArchitectureArm64), "target", "p")}},
		{name: "zone affinity to an unconstrained pod pending in the same batch joins its zone",
			pods: podList(one(pod("target", "100m", "128Mi", withLabels("app", "target"))), pods(3, "p", "4", "4Gi", withPodAffinityTo(zone, false, matchApp("target")))),
			want: []parCheck{allScheduled(), custom(func(t *testing.T, r parResult) {
				for _, p := range []string{"p-0", "p-1", "p-2"} {
					if got, want := r.nodeLabels(p)[zone], r.nodeLabels("target")[zone]; got != want {
						t.Errorf("%s in %s, target in %s", p, got, want)
					}
				}
			})}},
		{name: "zone affinity to a constrained pod pending in the same batch joins the target's zone",
			pods: podList(one(pod("target", "100m", "128Mi", withLabels("app", "target"), withNodeSelector(zone, zoneC))), pods(3, "p", "4", "4Gi", withPodAffinityTo(zone, false, matchApp("target")))),
			want: []parCheck{allScheduled(), label(zone, is(zoneC), "target", "p-0", "p-1", "p-2")}},
		{name: "a chain of hostname affinities between pending pods lands on one node",
			pods: []*corev1.Pod{pod("ui", "100m", "128Mi", withLabels("app", "ui"), withPodAffinityTo(host, false, matchApp("cache"))),
				pod("cache", "100m", "128Mi", withLabels("app", "cache"), withPodAffinityTo(host, false, matchApp("web"))),
				pod("web", "100m", "128Mi", withLabels("app", "web"), withPodAffinityTo(host, false, matchApp("db"))),
				pod("db", "100m", "128Mi", withLabels("app", "db"))},
			want: []parCheck{allScheduled(), sameNode("db", "web", "cache", "ui"), claims(1)}},
		{name: "self hostname affinity puts the pods on one node",
			pods: app(3, "s", "100m", withAffinity(host)), want: []parCheck{sameNode("s-0", "s-1", "s-2"), claims(1)}},
		{name: "self hostname affinity fills the first node only", types: fivePods,
			pods: app(10, "s", "100m", withAffinity(host)), want: []parCheck{claims(1), unschedulableCount(5)}},
		{name: "self hostname affinity with a matching pod elsewhere cannot open a node",
			nodes: []*scheduling.Node{fullNode("n-a", zoneA, bound(1, "s")...)},
			pods:  app(3, "s", "100m", withAffinity(host), withNodeAffinity(zone, opIn, zoneB, zoneC)), want: []parCheck{unschedulableCount(3)}},
		{name: "self zone affinity keeps the pods in one zone",
			pods: app(6, "s", "2", withAffinity(zone)), want: []parCheck{allScheduled(), skew(zone, "s", 6)}},
		{name: "self zone affinity within a zone constraint",
			pods: app(6, "s", "2", withAffinity(zone), withNodeAffinity(zone, opIn, zoneC)), want: []parCheck{allScheduled(), label(zone, is(zoneC), "s-0", "s-5")}},
		{name: "matching zone affinities with incompatible zones: the first placed binds the other",
			pods: []*corev1.Pod{pod("b", "1", "1Gi", withLabels("app", "s"), withAffinity(zone), withNodeAffinity(zone, opIn, zoneB)),
				pod("c", "1", "1Gi", withLabels("app", "s"), withAffinity(zone), withNodeAffinity(zone, opIn, zoneC))},
			want: []parCheck{unschedulableCount(1)}},
		{name: "preferred zone anti-affinity is relaxed once every zone has one",
			pods: app(6, "s", "100m", withPreferredPodAffinityTo(zone, true, matchApp("s"))), want: []parCheck{allScheduled()}},
		{name: "hostname anti-affinity separates the pods",
			pods: []*corev1.Pod{pod("a", "100m", "128Mi", withLabels("app", "a")), pod("b", "100m", "128Mi", withPodAffinityTo(host, true, matchApp("a")))},
			want: []parCheck{differentNodes("a", "b")}},
		{name: "zone anti-affinity finds no zone when every zone has a match",
			pods: []*corev1.Pod{pod("z1", "2", "1Gi", withLabels("app", "s"), withNodeSelector(zone, zoneA)), pod("z2", "2", "1Gi", withLabels("app", "s"), withNodeSelector(zone, zoneB)),
				pod("z3", "2", "1Gi", withLabels("app", "s"), withNodeSelector(zone, zoneC)), pod("anti", "100m", "128Mi", withPodAffinityTo(zone, true, matchApp("s")))},
			want: []parCheck{scheduled("z1", "z2", "z3"), notScheduled("anti")}},
		{name: "zone anti-affinity avoids the zone a pod placed first went to",
			pods: []*corev1.Pod{pod("first", "2", "1Gi", withLabels("app", "s")), pod("anti", "100m", "128Mi", withPodAffinityTo(zone, true, matchApp("s")))},
			want: []parCheck{allScheduled(), custom(func(t *testing.T, r parResult) {
				if r.nodeLabels("first")[zone] == r.nodeLabels("anti")[zone] {
					t.Errorf("both in %s", r.nodeLabels("first")[zone])
				}
			})}},
		{name: "arch anti-affinity picks the other architecture",
			pods: []*corev1.Pod{pod("first", "2", "1Gi", withLabels("app", "s"), withNodeSelector(arch, v1.ArchitectureArm64)), pod("anti", "100m", "128Mi", withPodAffinityTo(arch, true, matchApp("s")))},
			want: []parCheck{label(arch, is(v1.ArchitectureAmd64), "anti")}},
		{name: "preferred zone anti-affinity of placed pods does not block a newcomer",
			pods: podList(app(3, "s", "2", withPreferredPodAffinityTo(zone, true, matchApp("x"))), one(pod("x", "100m", "128Mi", withLabels("app", "x")))),
			want: []parCheck{allScheduled()}},
		{name: "required zone anti-affinity of placed pods blocks a matching newcomer",
			pods: podList(app(3, "s", "2", withPodAffinityTo(zone, true, matchApp("x")), spreadBy(zone, 1)), one(pod("x", "100m", "128Mi", withLabels("app", "x")))),
			want: []parCheck{scheduled("s-0", "s-1", "s-2"), notScheduled("x")}},
		{name: "zone anti-affinity: the owner placed first keeps its zone free of matches",
			pods: []*corev1.Pod{pod("owner", "2", "1Gi", withPodAffinityTo(zone, true, matchApp("x"))), pod("x", "100m", "128Mi", withLabels("app", "x"))},
			want: []parCheck{allScheduled(), custom(func(t *testing.T, r parResult) {
				if r.nodeLabels("owner")[zone] == r.nodeLabels("x")[zone] {
					t.Errorf("both in %s", r.nodeLabels("x")[zone])
				}
			})}},
		{name: "bound pods' required zone anti-affinity blocks every zone",
			nodes: []*scheduling.Node{
				fullNode("n-a", zoneA, pod("o1", "10m", "16Mi", withPodAffinityTo(zone, true, matchApp("x")))),
				fullNode("n-b", zoneB, pod("o2", "10m", "16Mi", withPodAffinityTo(zone, true, matchApp("x")))),
				fullNode("n-c", zoneC, pod("o3", "10m", "16Mi", withPodAffinityTo(zone, true, matchApp("x"))))},
			pods: one(pod("x", "100m", "128Mi", withLabels("app", "x"))), want: []parCheck{notScheduled("x"), reason("x", "default", scheduling.ReasonTopology)}},
		{name: "bound pods' preferred zone anti-affinity does not block",
			nodes: []*scheduling.Node{
				fullNode("n-a", zoneA, pod("o1", "10m", "16Mi", withPreferredPodAffinityTo(zone, true, matchApp("x")))),
				fullNode("n-b", zoneB, pod("o2", "10m", "16Mi", withPreferredPodAffinityTo(zone, true, matchApp("x"))))},
			pods: one(pod("x", "100m", "128Mi", withLabels("app", "x"))), want: []parCheck{scheduled("x")}},
		{name: "a preferred affinity conflicting with a required spread is relaxed",
			pods: app(3, "s", "100m", spreadBy(host, 1), withPreferredPodAffinityTo(host, false, matchApp("s"))), want: []parCheck{allScheduled(), claims(3)}},
		{name: "a preferred affinity to a pod that does not exist is relaxed",
			pods: app(3, "s", "100m", spreadBy(host, 1), withPreferredPodAffinityTo(host, false, matchApp("missing"))), want: []parCheck{allScheduled(), claims(3)}},
		{name: "self zone anti-affinity: one pod per zone, the rest pending",
			pods: app(5, "s", "100m", withAntiAffinity(zone)), want: []parCheck{skew(zone, "s", 1, 1, 1), unschedulableCount(2)}},
		{name: "affinity to a pod that exists nowhere is unschedulable",
			pods: pods(3, "p", "100m", "128Mi", withPodAffinityTo(zone, false, matchApp("missing"))), want: []parCheck{unschedulableCount(3)}},
		{name: "affinity to a pod that never can exist does not loop",
			pods: one(pod("p", "100m", "128Mi", withPodAffinityTo(host, false, matchApp("missing")))), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonTopology)}},
		{name: "affinity to a pod in another namespace does not match",
			nodes: []*scheduling.Node{zonedNode("n-t", zoneA, "16", "32Gi", pod("target", "100m", "128Mi", withLabels("app", "target"), inNamespace("other-ns")))},
			pods:  one(pod("p", "100m", "128Mi", withPodAffinityTo(host, false, matchApp("target")))), want: []parCheck{notScheduled("p")}},
		{name: "affinity with a namespace list matches there",
			nodes: []*scheduling.Node{zonedNode("n-t", zoneA, "16", "32Gi", pod("target", "100m", "128Mi", withLabels("app", "target"), inNamespace("other-ns-list"))),
				zonedNode("n-other", zoneA, "16", "32Gi")},
			pods: one(pod("p", "100m", "128Mi", withPodAffinityTo(host, false, matchApp("target"), "other-ns-list"))), want: []parCheck{onNode("p", "n-t")}},
		{name: "affinity with an empty namespace selector matches every namespace",
			nodes: []*scheduling.Node{zonedNode("n-t", zoneA, "16", "32Gi", pod("target", "100m", "128Mi", withLabels("app", "target"), inNamespace("elsewhere"))),
				zonedNode("n-other", zoneA, "16", "32Gi")},
			pods: one(pod("p", "100m", "128Mi", func(p *corev1.Pod) {
				withPodAffinityTo(host, false, matchApp("target"))(p)
				p.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].NamespaceSelector = &metav1.LabelSelector{}
			})), want: []parCheck{onNode("p", "n-t")}},
	})
}
