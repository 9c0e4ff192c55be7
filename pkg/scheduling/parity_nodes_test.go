package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// inflight is a node of NodePool "default" (Joiner-managed) in zone, empty.
func inflight(name, zone, cpu, mem string, bound ...*corev1.Pod) *scheduling.Node {
	n := zonedNode(name, zone, cpu, mem, bound...)
	n.NodePool = "default"
	n.Labels[v1.NodePoolLabelKey] = "default"
	return n
}

func tainted(n *scheduling.Node, key string, effect corev1.TaintEffect) *scheduling.Node {
	n.Taints = append(n.Taints, corev1.Taint{Key: key, Effect: effect})
	return n
}

// TestParityInFlightNodes: pods go to nodes that exist or are being launched before new ones
// (upstream "In-Flight Nodes" and "Existing Nodes").
func TestParityInFlightNodes(t *testing.T) {
	spread := func(key string) podOpt {
		return func(p *corev1.Pod) { withLabels("app", "s")(p); withSpread(key, 1, corev1.DoNotSchedule)(p) }
	}
	runParity(t, []parCase{
		{name: "an in-flight node that fits takes the pod", nodes: []*scheduling.Node{inflight("inflight-1", zoneA, "4", "8Gi")},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNode("p", "inflight-1"), claims(0)}},
		{name: "an in-flight node matching the selector takes the pod", nodes: []*scheduling.Node{inflight("inflight-1", zoneA, "4", "8Gi")},
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneA))), want: []parCheck{onNode("p", "inflight-1"), claims(0)}},
		{name: "a pod too big for the in-flight node gets a new one", nodes: []*scheduling.Node{inflight("inflight-1", zoneA, "2", "4Gi", pod("bound", "1500m", "1Gi"))},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNewNode("p")}},
		{name: "a pod whose selector the in-flight node fails gets a new one", nodes: []*scheduling.Node{inflight("inflight-1", zoneA, "4", "8Gi")},
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneB))), want: []parCheck{onNewNode("p"), label(corev1.LabelTopologyZone, is(zoneB), "p")}},
		{name: "zonal spread counts in-flight nodes' pods", nodes: []*scheduling.Node{
			inflight("n-a", zoneA, "8", "16Gi", pod("b1", "100m", "128Mi", withLabels("app", "s")), pod("b2", "100m", "128Mi", withLabels("app", "s"))),
			inflight("n-b", zoneB, "8", "16Gi", pod("b3", "100m", "128Mi", withLabels("app", "s")))},
			pods: pods(3, "p", "100m", "128Mi", spread(corev1.LabelTopologyZone)),
			want: []parCheck{allScheduled(), custom(func(t *testing.T, r parResult) {
				per := map[string]int{zoneA: 2, zoneB: 1}
				for _, n := range []string{"p-0", "p-1", "p-2"} {
					per[r.nodeLabels(n)[corev1.LabelTopologyZone]]++
				}
				if per[zoneA] != 2 || per[zoneB] != 2 || per[zoneC] != 2 {
					t.Errorf("zone counts %v, want 2 each", per)
				}
			})}},
		{name: "hostname spread counts in-flight nodes' pods", nodes: []*scheduling.Node{
			inflight("n-1", zoneA, "8", "16Gi", pod("b1", "100m", "128Mi", withLabels("app", "s"))), inflight("n-2", zoneA, "8", "16Gi")},
			pods: pods(2, "p", "100m", "128Mi", spread(corev1.LabelHostname)),
			want: []parCheck{allScheduled(), custom(func(t *testing.T, r parResult) {
				on := map[string]int{}
				for _, n := range []string{"p-0", "p-1"} {
					on[r.where(n)]++
				}
				if on["n-1"] != 0 || on["n-2"] != 1 {
					t.Errorf("placements %v, want one on n-2, none on n-1 (it has one already)", on)
				}
			})}},
		{name: "a node without taints takes the pod", nodes: []*scheduling.Node{inflight("n-1", zoneA, "4", "8Gi")},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNode("p", "n-1")}},
		{name: "a node with a taint the pod does not tolerate is skipped", nodes: []*scheduling.Node{tainted(inflight("n-1", zoneA, "4", "8Gi"), "foo", corev1.TaintEffectNoSchedule)},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNewNode("p")}},
		{name: "a NoExecute taint keeps intolerant pods off too", nodes: []*scheduling.Node{tainted(inflight("n-1", zoneA, "4", "8Gi"), "foo", corev1.TaintEffectNoExecute)},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNewNode("p")}},
		{name: "a tolerated node taint is fine", nodes: []*scheduling.Node{tainted(inflight("n-1", zoneA, "4", "8Gi"), "foo", corev1.TaintEffectNoSchedule)},
			pods: one(pod("p", "1", "1Gi", withToleration("foo", "", corev1.TaintEffectNoSchedule))), want: []parCheck{onNode("p", "n-1")}},
		// A PreferNoSchedule taint keeps pods off while anything else fits (Karpenter counts it
		// until every preference is relaxed), and is tolerated when nothing else does.
		{name: "a PreferNoSchedule node taint keeps pods off while a new node can take them", nodes: []*scheduling.Node{tainted(inflight("n-1", zoneA, "4", "8Gi"), "foo", corev1.TaintEffectPreferNoSchedule)},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNewNode("p")}},
		{name: "a PreferNoSchedule node taint is tolerated when nothing else fits", nodes: []*scheduling.Node{tainted(inflight("n-1", zoneA, "4", "8Gi"), "foo", corev1.TaintEffectPreferNoSchedule)},
			pools: []*v1.NodePool{}, pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNode("p", "n-1")}},
		{name: "several pods fill in-flight nodes before a new one", nodes: []*scheduling.Node{inflight("n-1", zoneA, "2", "4Gi"), inflight("n-2", zoneB, "2", "4Gi")},
			pods: pods(4, "p", "900m", "512Mi"), want: []parCheck{claims(0), allScheduled()}},
		{name: "the same host port goes to different nodes",
			pods: []*corev1.Pod{pod("a", "100m", "128Mi", withHostPort(80, corev1.ProtocolTCP, "")), pod("b", "100m", "128Mi", withHostPort(80, corev1.ProtocolTCP, ""))},
			want: []parCheck{differentNodes("a", "b")}},
		{name: "a bound pod's host port keeps a newcomer off the node", nodes: []*scheduling.Node{inflight("n-1", zoneA, "4", "8Gi", pod("bound", "100m", "128Mi", withHostPort(80, corev1.ProtocolTCP, "")))},
			pods: one(pod("p", "100m", "128Mi", withHostPort(80, corev1.ProtocolTCP, ""))), want: []parCheck{onNewNode("p")}},
		{name: "host ports of different protocols or IPs do not conflict",
			pods: []*corev1.Pod{pod("a", "100m", "128Mi", withHostPort(80, corev1.ProtocolTCP, "")), pod("b", "100m", "128Mi", withHostPort(80, corev1.ProtocolUDP, "")),
				pod("c", "100m", "128Mi", withHostPort(81, corev1.ProtocolTCP, "10.0.0.1")), pod("d", "100m", "128Mi", withHostPort(81, corev1.ProtocolTCP, "10.0.0.2"))},
			want: []parCheck{sameNode("a", "b", "c", "d")}},
		{name: "a node Joiner does not own takes a pod", nodes: []*scheduling.Node{zonedNode("foreign", zoneA, "4", "8Gi")},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{onNode("p", "foreign"), claims(0)}},
		{name: "a node Joiner does not own takes several pods", nodes: []*scheduling.Node{zonedNode("foreign", zoneA, "4", "8Gi")},
			pods: pods(3, "p", "1", "1Gi"), want: []parCheck{sameNode("p-0", "p-1", "p-2"), onNode("p-0", "foreign"), claims(0)}},
		{name: "a pod the node's labels rule out goes to the NodePool", nodes: []*scheduling.Node{zonedNode("foreign", zoneA, "4", "8Gi")},
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelArchStable, opIn, v1.ArchitectureArm64))),
			want: []parCheck{onNewNode("p"), label(corev1.LabelArchStable, is(v1.ArchitectureArm64), "p")}},
		{name: "pods are not placed on a node its pods already fill", nodes: []*scheduling.Node{zonedNode("full", zoneA, "2", "4Gi", pod("bound", "1900m", "1Gi"))},
			pods: one(pod("p", "200m", "128Mi")), want: []parCheck{onNewNode("p")}},
	})
}

// TestParityTaints: NodePool taints, tolerations and startup taints (upstream scheduling suite
// top level and provisioning "Taints").
func TestParityTaints(t *testing.T) {
	taintedPool := []*v1.NodePool{anyPool("default", poolTaint("foo", "bar", corev1.TaintEffectNoSchedule))}
	runParity(t, []parCase{
		{name: "NodeClaims carry the NodePool's taints", pools: taintedPool,
			pods: one(pod("p", "1", "1Gi", withToleration("foo", "bar", corev1.TaintEffectNoSchedule))),
			want: []parCheck{custom(func(t *testing.T, r parResult) {
				nc := r.claimOf("p")
				if nc == nil || len(nc.Taints) != 1 || nc.Taints[0].Key != "foo" {
					t.Errorf("claim %+v, want taint foo", nc)
				}
			})}},
		{name: "pods that tolerate the taints are scheduled", pools: taintedPool,
			pods: []*corev1.Pod{
				pod("equal", "1", "1Gi", withToleration("foo", "bar", corev1.TaintEffectNoSchedule)),
				pod("exists", "1", "1Gi", withToleration("foo", "", corev1.TaintEffectNoSchedule)),
				pod("any-effect", "1", "1Gi", withToleration("foo", "", "")),
				pod("wildcard", "1", "1Gi", func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} }),
				pod("none", "1", "1Gi"), pod("wrong-value", "1", "1Gi", withToleration("foo", "baz", corev1.TaintEffectNoSchedule)),
			},
			want: []parCheck{scheduled("equal", "exists", "any-effect", "wildcard"), notScheduled("none", "wrong-value"), reason("none", "default", scheduling.ReasonTaints)}},
		{name: "an Exists toleration adds no taint to the NodeClaim",
			pods: one(pod("p", "1", "1Gi", func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} })),
			want: []parCheck{custom(func(t *testing.T, r parResult) {
				if nc := r.claimOf("p"); nc == nil || len(nc.Taints) != 0 {
					t.Errorf("claim %+v, want no taints", nc)
				}
			})}},
		{name: "a startup taint does not need tolerating", pools: []*v1.NodePool{anyPool("default", poolStartupTaint("foo.com/startup", corev1.TaintEffectNoSchedule))},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{scheduled("p")}},
	})
}

// TestParityDaemonSets: the overhead each new node reserves for the DaemonSets that would run
// on it (upstream provisioning "Daemonsets" and "NodeClaim Creation").
func TestParityDaemonSets(t *testing.T) {
	sized := []*scheduling.InstanceType{
		customType("small", "2", "4Gi", 0.1, map[string]string{corev1.LabelArchStable: v1.ArchitectureAmd64, corev1.LabelOSStable: "linux", awsv1.LabelInstanceSize: "small"}),
		customType("medium", "4", "8Gi", 0.2, map[string]string{corev1.LabelArchStable: v1.ArchitectureAmd64, corev1.LabelOSStable: "linux", awsv1.LabelInstanceSize: "medium"}),
		customType("large", "8", "16Gi", 0.4, map[string]string{corev1.LabelArchStable: v1.ArchitectureAmd64, corev1.LabelOSStable: "linux", awsv1.LabelInstanceSize: "large"}),
	}
	ds := func(cpu string, opts ...podOpt) []*corev1.Pod { return one(pod("ds", cpu, "128Mi", opts...)) }
	size := func(s string) []parCheck { return []parCheck{label(corev1.LabelInstanceTypeStable, is(s), "p")} }
	labelledPool := []*v1.NodePool{anyPool("default", poolLabels("foo", "bar"))}
	runParity(t, []parCase{
		{name: "daemonset requests are reserved", types: sized, ds: ds("1"),
			pods: one(pod("p", "1500m", "128Mi")), want: size("medium")},
		{name: "daemonset overhead too large for every type schedules nothing", types: sized, ds: ds("7500m"),
			pods: one(pod("p", "1", "128Mi")), want: []parCheck{notScheduled("p")}},
		{name: "daemonsets count with a startup taint they do not tolerate", types: sized, ds: ds("1"),
			pools: []*v1.NodePool{anyPool("default", poolStartupTaint("foo.com/taint", corev1.TaintEffectNoSchedule))},
			pods:  one(pod("p", "1500m", "128Mi")), want: size("medium")},
		{name: "daemonsets that do not tolerate the pool's taint are ignored", types: sized, ds: ds("1"),
			pools: []*v1.NodePool{anyPool("default", poolTaint("foo", "bar", corev1.TaintEffectNoSchedule))},
			pods:  one(pod("p", "1500m", "128Mi", withToleration("foo", "bar", corev1.TaintEffectNoSchedule))), want: size("small")},
		{name: "daemonsets tolerate a PreferNoSchedule taint", types: sized, ds: ds("1"),
			pools: []*v1.NodePool{anyPool("default", poolTaint("foo", "bar", corev1.TaintEffectPreferNoSchedule))},
			pods:  one(pod("p", "1500m", "128Mi")), want: size("medium")},
		{name: "daemonsets with a selector the pool's label matches count", types: sized, ds: ds("1", withNodeSelector("foo", "bar")), pools: labelledPool,
			pods: one(pod("p", "1500m", "128Mi")), want: size("medium")},
		{name: "daemonsets with a selector the pool cannot match are ignored", types: sized, ds: ds("1", withNodeSelector("foo", "other")), pools: labelledPool,
			pods: one(pod("p", "1500m", "128Mi")), want: size("small")},
		{name: "daemonset NotIn on a key nothing defines counts", types: sized, ds: ds("1", withNodeAffinity("foo", opNotIn, "bar")),
			pods: one(pod("p", "1500m", "128Mi")), want: size("medium")},
		{name: "daemonset with alternative affinity terms counts if one matches", types: sized, pools: labelledPool,
			ds:   ds("1", withRequiredTerms(expr("foo", opIn, "nope"), expr("foo", opIn, "bar"))),
			pods: one(pod("p", "1500m", "128Mi")), want: size("medium")},
		{name: "daemonset preferences do not decide whether it runs", types: sized, pools: labelledPool,
			ds:   ds("1", withPreferred(10, "foo", opIn, "nope")),
			pods: one(pod("p", "1500m", "128Mi")), want: size("medium")},
		{name: "a daemonset with an invalid node affinity is ignored", types: sized, ds: ds("1", withNodeAffinity("foo", opGt, "not-a-number")),
			pods: one(pod("p", "1500m", "128Mi")), want: size("small")},
		{name: "the NodeClaim's requests include the daemonset overhead once", types: sized, ds: ds("500m"),
			pods: pods(2, "p", "1", "128Mi"), want: []parCheck{sameNode("p-0", "p-1"), requests("p-0", "2500m")}},
		{name: "the NodeClaim's requests are its pods' without daemonsets", types: sized,
			pods: pods(2, "p", "700m", "128Mi"), want: []parCheck{requests("p-0", "1400m")}},
	})
}

// TestParityLimits: NodePool limits against the capacity launched (upstream provisioning
// "Resource Limits").
func TestParityLimits(t *testing.T) {
	sized := []*scheduling.InstanceType{
		customType("small", "2", "4Gi", 0.1, amd64Linux()),
		customType("medium", "4", "8Gi", 0.2, amd64Linux()),
		withExtra(customType("gpu", "8", "16Gi", 1, amd64Linux()), string(gpuResource), "2"),
	}
	limited := func(kv ...string) []*v1.NodePool { return []*v1.NodePool{anyPool("default", poolLimits(kv...))} }
	apart := func(p *corev1.Pod) { withLabels("app", "l")(p); withAntiAffinity(corev1.LabelHostname)(p) }
	runParity(t, []parCase{
		{name: "an exhausted limit schedules nothing", types: sized, pools: limited("cpu", "20"),
			nodes: []*scheduling.Node{func() *scheduling.Node {
				n := inflight("n", zoneA, "20", "40Gi")
				n.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}
				return n
			}()},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonLimits)}},
		{name: "a launch within the limit is made", types: sized, pools: limited("cpu", "4"),
			pods: one(pod("p", "1500m", "1Gi")), want: []parCheck{scheduled("p")}},
		{name: "the limit schedules part of the pods", types: sized[:1], pools: limited("cpu", "4"),
			pods: pods(3, "p", "1500m", "1Gi", apart), want: []parCheck{unschedulableCount(1), claims(2)}},
		{name: "a launch beyond the limit is not made", types: sized, pools: limited("cpu", "2"),
			pods: one(pod("p", "3", "1Gi")), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonLimits)}},
		{name: "an extended-resource limit is honoured", types: sized, pools: limited(string(gpuResource), "1"),
			pods: one(pod("p", "1", "1Gi", withRequest(gpuResource, "1"))), want: []parCheck{notScheduled("p")}},
		{name: "capacity already launched counts against the limit", types: sized, pools: limited("cpu", "3"),
			nodes: []*scheduling.Node{inflight("n", zoneA, "2", "4Gi", pod("bound", "1750m", "128Mi"))},
			pods:  one(pod("p", "1750m", "128Mi")), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonLimits)}},
		// Upstream #378: a limit on nodes counts each node once, whatever its size.
		{name: "a nodes limit caps the NodeClaims", types: sized, pools: limited("nodes", "2"),
			pods: pods(3, "p", "1", "1Gi", apart), want: []parCheck{unschedulableCount(1), claims(2)}},
		{name: "nodes already launched count against a nodes limit", types: sized, pools: limited("nodes", "1"),
			nodes: []*scheduling.Node{func() *scheduling.Node {
				n := inflight("n", zoneA, "2", "4Gi")
				n.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}
				return n
			}()},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonLimits)}},
		{name: "a nodes limit lets pods share the nodes it allows", types: sized, pools: limited("nodes", "1"),
			pods: pods(3, "p", "1", "1Gi"), want: []parCheck{claims(1), unschedulableCount(0)}},
	})
}

// TestParityNodePools: choosing among NodePools (upstream provisioning "Multiple NodePools" and
// "Weighted NodePools").
func TestParityNodePools(t *testing.T) {
	runParity(t, []parCase{
		{name: "a pod selecting a NodePool by name gets it", pools: []*v1.NodePool{anyPool("a"), anyPool("b")},
			pods: one(pod("p", "1", "1Gi", withNodeSelector(v1.NodePoolLabelKey, "b"))), want: []parCheck{label(v1.NodePoolLabelKey, is("b"), "p")}},
		{name: "a pod selecting a NodePool's label gets it", pools: []*v1.NodePool{anyPool("a"), anyPool("b", poolLabels("team", "blue"))},
			pods: one(pod("p", "1", "1Gi", withNodeSelector("team", "blue"))), want: []parCheck{label(v1.NodePoolLabelKey, is("b"), "p"), label("team", is("blue"), "p")}},
		{name: "the highest weight wins whatever the price", pools: []*v1.NodePool{anyPool("cheap", poolReq(v1.CapacityTypeLabelKey, opIn, v1.CapacityTypeSpot)),
			anyPool("dear", poolWeight(100), poolReq(v1.CapacityTypeLabelKey, opIn, v1.CapacityTypeOnDemand)), anyPool("mid", poolWeight(50))},
			pods: pods(3, "p", "1", "1Gi"), want: []parCheck{label(v1.NodePoolLabelKey, is("dear"), "p-0", "p-1", "p-2")}},
		{name: "an explicitly selected NodePool beats a heavier one", pools: []*v1.NodePool{anyPool("light"), anyPool("heavy", poolWeight(100))},
			pods: one(pod("p", "1", "1Gi", withNodeSelector(v1.NodePoolLabelKey, "light"))), want: []parCheck{label(v1.NodePoolLabelKey, is("light"), "p")}},
		{name: "a heavier NodePool that cannot take the pod is passed over", pools: []*v1.NodePool{anyPool("light"), anyPool("heavy", poolWeight(100), poolReq(corev1.LabelArchStable, opIn, v1.ArchitectureArm64))},
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelArchStable, v1.ArchitectureAmd64))), want: []parCheck{label(v1.NodePoolLabelKey, is("light"), "p")}},
		{name: "every NodePool's reason is reported", pools: []*v1.NodePool{anyPool("a", poolTaint("t", "v", corev1.TaintEffectNoSchedule)), anyPool("b", poolReq(corev1.LabelArchStable, opIn, v1.ArchitectureArm64))},
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelArchStable, v1.ArchitectureAmd64))),
			want: []parCheck{reason("p", "a", scheduling.ReasonTaints), reason("p", "b", scheduling.ReasonRequirements)}},
		// Upstream #446.
		{name: "a NodePool with a PreferNoSchedule taint is passed over when another fits", pools: []*v1.NodePool{anyPool("a", poolTaint("foo", "bar", corev1.TaintEffectPreferNoSchedule)), anyPool("b")},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label(v1.NodePoolLabelKey, is("b"), "p")}},
		{name: "a NodePool with a PreferNoSchedule taint takes the pod when no other can", pools: []*v1.NodePool{anyPool("a", poolTaint("foo", "bar", corev1.TaintEffectPreferNoSchedule)),
			anyPool("b", poolReq(corev1.LabelArchStable, opIn, v1.ArchitectureArm64))},
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelArchStable, v1.ArchitectureAmd64))), want: []parCheck{label(v1.NodePoolLabelKey, is("a"), "p")}},
		// Upstream #442: the taint outlasts the pod's preferences, which are relaxed first.
		{name: "PreferNoSchedule taints are tolerated only after preferences are relaxed", pools: []*v1.NodePool{
			anyPool("a", poolTaint("foo", "bar", corev1.TaintEffectPreferNoSchedule), poolReq(corev1.LabelTopologyZone, opIn, zoneA)),
			anyPool("b", poolReq(corev1.LabelTopologyZone, opIn, zoneB))},
			pods: one(pod("p", "1", "1Gi", withPreferred(10, corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zoneA))), want: []parCheck{label(v1.NodePoolLabelKey, is("b"), "p")}},
		{name: "with no NodePool a pod is unschedulable", pools: []*v1.NodePool{},
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{notScheduled("p"), reason("p", "", scheduling.ReasonNoFit)}},
	})
}
