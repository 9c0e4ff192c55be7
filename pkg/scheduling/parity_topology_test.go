package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// app returns n pods of app (label app=app) requesting cpu, with opts.
func app(n int, name, cpu string, opts ...podOpt) []*corev1.Pod {
	return pods(n, name, cpu, "128Mi", append([]podOpt{withLabels("app", name)}, opts...)...)
}

func spreadBy(key string, maxSkew int32) podOpt {
	return withSpread(key, maxSkew, corev1.DoNotSchedule)
}

func spreadAnyway(key string, maxSkew int32) podOpt {
	return withSpread(key, maxSkew, corev1.ScheduleAnyway)
}

func minDomains(n int32) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints[len(p.Spec.TopologySpreadConstraints)-1].MinDomains = &n
	}
}

// boundTo returns count bound pods of app.
func bound(count int, appName string) []*corev1.Pod {
	return pods(count, appName+"-bound", "10m", "16Mi", withLabels("app", appName))
}

func poolZones(zones ...string) func(*v1.NodePool) {
	return poolReq(corev1.LabelTopologyZone, opIn, zones...)
}

// fullNode is an existing node in zone with its bound pods and no room for more.
func fullNode(name, zone string, bound ...*corev1.Pod) *scheduling.Node {
	return zonedNode(name, zone, "100m", "1Gi", bound...)
}

// TestParityTopologySpread: the top-level and zonal topology spread cases (upstream topology
// suite, "Zonal").
func TestParityTopologySpread(t *testing.T) {
	zone := corev1.LabelTopologyZone
	exprSpread := func(p *corev1.Pod) {
		withSelectorSpread(zone, 1, corev1.DoNotSchedule, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"s"}}}})(p)
	}
	existingA := func(count int) []*scheduling.Node {
		return []*scheduling.Node{fullNode("n-a", zoneA, bound(count, "s")...)}
	}
	runParity(t, []parCase{
		{name: "a spread on a key no node has is unschedulable, other pods are not",
			pods: []*corev1.Pod{pod("spread", "1", "1Gi", withLabels("app", "s"), spreadBy("unknown", 1)), pod("plain", "1", "1Gi")},
			want: []parCheck{notScheduled("spread"), scheduled("plain")}},
		{name: "a spread without a selector counts no pods and does not spread",
			pods: app(2, "s", "100m", withSelectorSpread(zone, 1, corev1.DoNotSchedule, nil)), want: []parCheck{skew(zone, "s", 2)}},
		{name: "balance across zones with matchLabels",
			pods: app(4, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 1, 1, 2)}},
		{name: "balance across zones with matchExpressions",
			pods: app(4, "s", "100m", exprSpread), want: []parCheck{skew(zone, "s", 1, 1, 2)}},
		{name: "a NodePool listing every zone balances across them", pools: []*v1.NodePool{anyPool("default", poolZones(zoneA, zoneB, zoneC))},
			pods: app(4, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 1, 1, 2)}},
		{name: "a NodePool's zone subset is the spread's universe", pools: []*v1.NodePool{anyPool("default", poolZones(zoneA, zoneB))},
			pods: app(4, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 2, 2)}},
		{name: "a NodePool's zone label is its only zone", pools: []*v1.NodePool{anyPool("default", poolLabels(zone, zoneA))},
			pods: app(4, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 4)}},
		{name: "a NodePool's zone label within its zone requirement", pools: []*v1.NodePool{anyPool("default", poolZones(zoneA, zoneB), poolLabels(zone, zoneA))},
			pods: app(4, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 4)}},
		{name: "zone labels of two NodePools are the universe", pools: []*v1.NodePool{anyPool("one", poolZones(zoneA, zoneB), poolLabels(zone, zoneA)), anyPool("two", poolLabels(zone, zoneB))},
			pods: app(4, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 2, 2)}},
		{name: "an existing pod in a zone the NodePool cannot reach caps the others", pools: []*v1.NodePool{anyPool("default", poolZones(zoneA, zoneB))},
			nodes: []*scheduling.Node{fullNode("n-c", zoneC, bound(1, "s")...)},
			pods:  app(6, "s", "1100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 1, 2, 2), unschedulableCount(2)}},
		{name: "the only reachable domain takes pods up to maxSkew", pools: []*v1.NodePool{anyPool("default", poolZones(zoneC))},
			nodes: []*scheduling.Node{fullNode("n-a", zoneA, bound(1, "s")...), fullNode("n-b", zoneB, bound(1, "s")...)},
			pods:  app(10, "s", "1100m", spreadBy(zone, 5)), want: []parCheck{skew(zone, "s", 1, 1, 6), unschedulableCount(4)}},
		{name: "with maxSkew already exceeded only the smallest domains take pods", nodes: existingA(3),
			pods: app(3, "s", "1100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 3, 1, 2)}},
		{name: "DoNotSchedule never exceeds maxSkew", pools: []*v1.NodePool{anyPool("default", poolZones(zoneB, zoneC))}, nodes: existingA(1),
			pods: app(10, "s", "1100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 1, 2, 2), unschedulableCount(6)}},
		{name: "bound pods count only in their namespace, with matching labels, on nodes with the key",
			nodes: []*scheduling.Node{
				zonedNode("n-a", zoneA, "16", "32Gi", append(bound(2, "s"), pod("other-ns", "10m", "16Mi", withLabels("app", "s"), inNamespace("elsewhere")), pod("unlabelled", "10m", "16Mi"))...),
				zonedNode("n-b", zoneB, "16", "32Gi", bound(1, "s")...),
				existingNode("no-zone", "16", "32Gi", map[string]string{corev1.LabelHostname: "no-zone"}, pod("nozone", "10m", "16Mi", withLabels("app", "s"))),
			},
			pods: app(2, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 2, 2, 1), custom(func(t *testing.T, r parResult) {
				if r.where("s-0") == "no-zone" || r.where("s-1") == "no-zone" {
					t.Errorf("a pod went to the node without a zone")
				}
			})}},
		{name: "a pod matches its own spread when the selector is its labels",
			pods: app(1, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 1)}},
		{name: "a selector no pod matches packs them onto one node",
			pods: pods(5, "p", "100m", "128Mi", withSelectorSpread(corev1.LabelHostname, 1, corev1.DoNotSchedule, matchApp("nobody"))), want: []parCheck{claims(1)}},
		{name: "minDomains beyond the reachable zones caps each at maxSkew", pools: []*v1.NodePool{anyPool("default", poolZones(zoneA, zoneB))},
			pods: app(3, "s", "100m", spreadBy(zone, 1), minDomains(3)), want: []parCheck{skew(zone, "s", 1, 1), unschedulableCount(1)}},
		{name: "minDomains equal to the zones spreads as usual",
			pods: app(11, "s", "100m", spreadBy(zone, 1), minDomains(3)), want: []parCheck{skew(zone, "s", 4, 4, 3)}},
		{name: "minDomains below the zones spreads as usual",
			pods: app(11, "s", "100m", spreadBy(zone, 1), minDomains(2)), want: []parCheck{skew(zone, "s", 4, 4, 3)}},
	})
}

// TestParityTopologyHostname: spreads over nodes (upstream "Hostname").
func TestParityTopologyHostname(t *testing.T) {
	host := corev1.LabelHostname
	runParity(t, []parCase{
		{name: "balance across nodes", pods: app(4, "s", "100m", spreadBy(host, 1)), want: []parCheck{skew(host, "s", 1, 1, 1, 1)}},
		{name: "pods share a node up to maxSkew", pods: app(4, "s", "100m", spreadBy(host, 4)), want: []parCheck{skew(host, "s", 4)}},
		{name: "two deployments spread independently, sharing nodes",
			pods: podList(app(2, "x", "100m", spreadBy(host, 1)), app(2, "y", "100m", spreadBy(host, 1))),
			want: []parCheck{skew(host, "x", 1, 1), skew(host, "y", 1, 1), claims(2)}},
		{name: "two deployments of different architectures spread independently",
			pods: podList(app(2, "x", "100m", spreadBy(host, 1), withNodeSelector(corev1.LabelArchStable, v1.ArchitectureAmd64)),
				app(2, "y", "100m", spreadBy(host, 1), withNodeSelector(corev1.LabelArchStable, v1.ArchitectureArm64))),
			want: []parCheck{skew(host, "x", 1, 1), skew(host, "y", 1, 1), claims(4)}},
	})
}

// TestParityTopologyCapacityType: spreads over capacity types and architectures (upstream
// "CapacityType").
func TestParityTopologyCapacityType(t *testing.T) {
	ct := v1.CapacityTypeLabelKey
	ctNode := func(name, capacityType string, bound ...*corev1.Pod) *scheduling.Node {
		n := fullNode(name, zoneA, bound...)
		n.Labels[ct] = capacityType
		return n
	}
	onlyCT := func(c string) []*v1.NodePool { return []*v1.NodePool{anyPool("default", poolReq(ct, opIn, c))} }
	runParity(t, []parCase{
		{name: "balance across capacity types", pods: app(4, "s", "100m", spreadBy(ct, 1)), want: []parCheck{skew(ct, "s", 2, 2)}},
		{name: "a NodePool's capacity type is the universe", pools: onlyCT(v1.CapacityTypeSpot),
			pods: app(4, "s", "100m", spreadBy(ct, 1)), want: []parCheck{skew(ct, "s", 4)}},
		{name: "DoNotSchedule caps the reachable capacity type", pools: onlyCT(v1.CapacityTypeOnDemand),
			nodes: []*scheduling.Node{ctNode("n-spot", v1.CapacityTypeSpot, bound(1, "s")...)},
			pods:  app(5, "s", "1100m", spreadBy(ct, 1)), want: []parCheck{skew(ct, "s", 1, 2), unschedulableCount(3)}},
		{name: "ScheduleAnyway exceeds maxSkew rather than leave pods pending", pools: onlyCT(v1.CapacityTypeOnDemand),
			nodes: []*scheduling.Node{ctNode("n-spot", v1.CapacityTypeSpot, bound(1, "s")...)},
			pods:  app(5, "s", "1100m", spreadAnyway(ct, 1)), want: []parCheck{skew(ct, "s", 1, 5), allScheduled()}},
		{name: "bound pods count only with matching labels in the namespace",
			nodes: []*scheduling.Node{
				ctNode("n-spot", v1.CapacityTypeSpot, append(bound(2, "s"), pod("other-ns", "10m", "16Mi", withLabels("app", "s"), inNamespace("elsewhere")))...),
				ctNode("n-od", v1.CapacityTypeOnDemand, bound(1, "s")...),
			},
			pods: app(2, "s", "100m", spreadBy(ct, 1)), want: []parCheck{skew(ct, "s", 2, 3)}},
		{name: "a spread without a selector leaves the pod free", pods: one(pod("p", "100m", "128Mi", withSelectorSpread(ct, 1, corev1.DoNotSchedule, nil))),
			want: []parCheck{scheduled("p")}},
		{name: "a selector no pod matches packs pods by capacity type too",
			pods: pods(5, "p", "100m", "128Mi", withSelectorSpread(ct, 1, corev1.DoNotSchedule, matchApp("nobody"))), want: []parCheck{claims(1)}},
		{name: "required node affinity leaves nodes it excludes out of the count",
			nodes: []*scheduling.Node{ctNode("n-od", v1.CapacityTypeOnDemand, bound(1, "s")...)},
			pods:  app(5, "s", "100m", spreadBy(ct, 1), withNodeAffinity(corev1.LabelTopologyZone, opIn, zoneB), withNodeAffinity(ct, opIn, v1.CapacityTypeSpot)),
			want:  []parCheck{skew(ct, "s", 1, 5)}},
		{name: "without node affinity an existing on-demand node caps the spot pods", pools: onlyCT(v1.CapacityTypeSpot),
			nodes: []*scheduling.Node{ctNode("n-od", v1.CapacityTypeOnDemand, bound(1, "s")...)},
			pods:  app(5, "s", "100m", spreadBy(ct, 1)), want: []parCheck{skew(ct, "s", 1, 2), unschedulableCount(3)}},
		{name: "an existing amd64 node caps arm64 pods of an arch spread", pools: []*v1.NodePool{anyPool("default", poolReq(corev1.LabelArchStable, opIn, v1.ArchitectureArm64))},
			nodes: []*scheduling.Node{fullNode("n-amd", zoneA, bound(1, "s")...)},
			pods:  app(5, "s", "100m", spreadBy(corev1.LabelArchStable, 1)), want: []parCheck{skew(corev1.LabelArchStable, "s", 1, 2), unschedulableCount(3)}},
	})
}

// TestParityTopologyCombined: several spreads at once and spreads with node affinity
// (upstream "Combined ..." contexts).
func TestParityTopologyCombined(t *testing.T) {
	zone, host, ct := corev1.LabelTopologyZone, corev1.LabelHostname, v1.CapacityTypeLabelKey
	runParity(t, []parCase{
		{name: "zone and hostname spreads both hold",
			pods: app(11, "s", "100m", spreadBy(zone, 1), spreadBy(host, 3)), want: []parCheck{skew(zone, "s", 4, 4, 3), maxPerDomain(host, "s", 3)}},
		{name: "zone and hostname spreads with a NodePool that cannot launch", pools: []*v1.NodePool{anyPool("default", poolZones(zoneA, zoneB)),
			anyPool("never", poolZones(zoneC), poolLimits("cpu", "0"))},
			pods: app(10, "s", "100m", spreadBy(zone, 1), spreadBy(host, 1)), want: []parCheck{skew(zone, "s", 1, 1), skew(host, "s", 1, 1), unschedulableCount(8)}},
		{name: "capacity type and hostname spreads both hold",
			pods: app(21, "s", "100m", spreadBy(ct, 1), spreadBy(host, 3)), want: []parCheck{skew(ct, "s", 11, 10), maxPerDomain(host, "s", 3)}},
		{name: "capacity type and zone spreads both hold",
			pods: app(12, "s", "100m", spreadBy(ct, 1), spreadBy(zone, 1)), want: []parCheck{skew(ct, "s", 6, 6), skew(zone, "s", 4, 4, 4)}},
		{name: "hostname, zone and capacity type spreads all hold",
			pods: app(12, "s", "100m", spreadBy(ct, 1), spreadBy(zone, 1), spreadBy(host, 3)),
			want: []parCheck{skew(ct, "s", 6, 6), skew(zone, "s", 4, 4, 4), maxPerDomain(host, "s", 3)}},
		{name: "a zone node selector limits the spread's domains",
			pods: app(6, "s", "100m", spreadBy(zone, 1), withNodeAffinity(zone, opIn, zoneA, zoneB)), want: []parCheck{skew(zone, "s", 3, 3)}},
		{name: "a NodePool's zones limit the spread's domains", pools: []*v1.NodePool{anyPool("default", poolZones(zoneA, zoneB))},
			pods: app(6, "s", "100m", spreadBy(zone, 1)), want: []parCheck{skew(zone, "s", 3, 3)}},
		{name: "required zone affinity limits the spread's domains",
			pods: app(6, "s", "100m", spreadBy(zone, 1), withNodeAffinity(zone, opNotIn, zoneC)), want: []parCheck{skew(zone, "s", 3, 3)}},
		{name: "a preferred zone affinity does not limit the spread's domains",
			pods: app(6, "s", "100m", spreadBy(zone, 1), withPreferred(10, zone, opIn, zoneA)), want: []parCheck{allScheduled(), skew(zone, "s", 2, 2, 2)}},
		{name: "a capacity-type node selector limits the spread's domains",
			pods: app(4, "s", "100m", spreadBy(ct, 1), withNodeSelector(ct, v1.CapacityTypeSpot)), want: []parCheck{skew(ct, "s", 4)}},
		{name: "capacity-type node affinity limits the spread's domains",
			pods: app(4, "s", "100m", spreadBy(ct, 1), withNodeAffinity(ct, opIn, v1.CapacityTypeOnDemand)), want: []parCheck{skew(ct, "s", 4)}},
	})
}

// TestParityTopologyInclusionPolicies: nodeTaintsPolicy and nodeAffinityPolicy with existing
// nodes and NodePools that share domains (upstream topology suite, "NodeTaintsPolicy" and
// "NodeAffinityPolicy"). Upstream spreads over a label of its own; these spread over zones,
// the domains being the same kind (existing nodes' values and NodePools' values). The cases on
// NodePools alone are in TestTopologyNodeAffinityPolicyIgnoreCountsEveryPoolsZones.
func TestParityTopologyInclusionPolicies(t *testing.T) {
	zone := corev1.LabelTopologyZone
	ignore, honor := corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor
	policies := func(affinity, taints *corev1.NodeInclusionPolicy) podOpt {
		return func(p *corev1.Pod) {
			c := &p.Spec.TopologySpreadConstraints[len(p.Spec.TopologySpreadConstraints)-1]
			c.NodeAffinityPolicy, c.NodeTaintsPolicy = affinity, taints
		}
	}
	// taintedNodes are full existing nodes in zones a and b that the pods do not tolerate.
	taintedNodes := func() []*scheduling.Node {
		var out []*scheduling.Node
		for _, z := range []string{zoneA, zoneB} {
			n := fullNode("n-"+z, z)
			n.Taints = []corev1.Taint{{Key: "taintname", Value: "taintvalue", Effect: corev1.TaintEffectNoSchedule}}
			out = append(out, n)
		}
		return out
	}
	// mismatchedNodes are full existing nodes in zones a and b whose selector label the pods' nodeSelector rules out.
	mismatchedNodes := func() []*scheduling.Node {
		var out []*scheduling.Node
		for _, z := range []string{zoneA, zoneB} {
			n := fullNode("n-"+z, z)
			n.Labels["selector"] = "mismatch"
			out = append(out, n)
		}
		return out
	}
	poolC := func() []*v1.NodePool {
		return []*v1.NodePool{anyPool("default", poolZones(zoneC), poolLabels("selector", "value"))}
	}
	exclusive := []*v1.NodePool{
		anyPool("np-0", poolZones(zoneA, zoneB), poolTaint("taint-key", "nodepool-0", corev1.TaintEffectNoSchedule)),
		anyPool("np-1", poolZones(zoneA, zoneC), poolTaint("taint-key", "nodepool-1", corev1.TaintEffectNoSchedule)),
	}
	runParity(t, []parCase{
		{name: "nodeTaintsPolicy Ignore: tainted existing nodes' zones count, one pod in the pool's zone",
			nodes: taintedNodes(), pools: poolC(),
			pods: app(5, "s", "1", spreadBy(zone, 1), policies(nil, &ignore)), want: []parCheck{skew(zone, "s", 1), unschedulableCount(4)}},
		{name: "nodeTaintsPolicy Honor: tainted existing nodes' zones do not count, every pod in the pool's zone",
			nodes: taintedNodes(), pools: poolC(),
			pods: app(5, "s", "1", spreadBy(zone, 1), policies(nil, &honor)), want: []parCheck{allScheduled(), skew(zone, "s", 5)}},
		{name: "nodeTaintsPolicy Honor: NodePools exclusive by taints sharing a zone spread each workload over its own zones",
			pools: exclusive,
			pods: podList(app(2, "s", "1", spreadBy(zone, 1), policies(nil, &honor), withToleration("taint-key", "nodepool-0", corev1.TaintEffectNoSchedule)),
				pods(4, "t", "1", "128Mi", withLabels("app", "s"), spreadBy(zone, 1), policies(nil, &honor), withToleration("taint-key", "nodepool-1", corev1.TaintEffectNoSchedule))),
			want: []parCheck{allScheduled(), skew(zone, "s", 3, 2, 1)}},
		{name: "nodeAffinityPolicy Ignore: existing nodes' zones the pod cannot reach count, one pod in the pool's zone",
			nodes: mismatchedNodes(), pools: poolC(),
			pods: app(5, "s", "1", withNodeSelector("selector", "value"), spreadBy(zone, 1), policies(&ignore, nil)), want: []parCheck{skew(zone, "s", 1), unschedulableCount(4)}},
		{name: "nodeAffinityPolicy Honor: existing nodes' zones the pod cannot reach do not count, every pod in the pool's zone",
			nodes: mismatchedNodes(), pools: poolC(),
			pods: app(5, "s", "1", withNodeSelector("selector", "value"), spreadBy(zone, 1), policies(&honor, nil)), want: []parCheck{allScheduled(), skew(zone, "s", 5)}},
	})
}
