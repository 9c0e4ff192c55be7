package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

var (
	zoneA, zoneB, zoneC = testZones[0], testZones[1], testZones[2]
	opIn                = corev1.NodeSelectorOpIn
	opNotIn             = corev1.NodeSelectorOpNotIn
	opExists            = corev1.NodeSelectorOpExists
	opDoesNotExist      = corev1.NodeSelectorOpDoesNotExist
	opGt                = corev1.NodeSelectorOpGt
	opLt                = corev1.NodeSelectorOpLt
)

// TestParityLabels: NodePool template labels against pod selectors and requirements
// (upstream "Custom Constraints / NodePool with Labels").
func TestParityLabels(t *testing.T) {
	labelled := []*v1.NodePool{anyPool("default", poolLabels("test-key", "test-value"))}
	runParity(t, []parCase{
		{name: "unconstrained pod gets the pool's labels", pools: labelled,
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label("test-key", is("test-value"), "p")}},
		{name: "conflicting node selector is not scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeSelector("test-key", "different-value"))), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonRequirements)}},
		{name: "node selector on a key nothing defines is not scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeSelector("test-key", "test-value"))), want: []parCheck{notScheduled("p")}},
		{name: "matching requirement is scheduled with the label", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opIn, "test-value", "another-value"))), want: []parCheck{label("test-key", is("test-value"), "p")}},
		{name: "conflicting requirement is not scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opIn, "another-value"))), want: []parCheck{notScheduled("p")}},
	})
}

// TestParityWellKnownLabels: zone, instance type and numeric instance labels in NodePool
// requirements, selectors, required and preferred affinity (upstream "Well Known Labels").
func TestParityWellKnownLabels(t *testing.T) {
	zonePool := func(zones ...string) []*v1.NodePool {
		return []*v1.NodePool{anyPool("default", poolReq(corev1.LabelTopologyZone, opIn, zones...))}
	}
	cpuPool := func(op v1.NodeSelectorOperator, v string) []*v1.NodePool {
		return []*v1.NodePool{anyPool("default", poolReq(awsv1.LabelInstanceCPU, op, v))}
	}
	allZones := []string{zoneA, zoneB, zoneC, "unknown"}
	runParity(t, []parCase{
		{name: "NodePool zone requirement is used", pools: zonePool(zoneB),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label(corev1.LabelTopologyZone, is(zoneB), "p")}},
		{name: "node selector narrows the NodePool's zones", pools: zonePool(zoneA, zoneB),
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneB))), want: []parCheck{label(corev1.LabelTopologyZone, is(zoneB), "p")}},
		{name: "hostname selector is not scheduled on a new node",
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelHostname, "red-node"))), want: []parCheck{notScheduled("p")}},
		{name: "unknown zone selector is not scheduled", pools: zonePool(zoneA),
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, "unknown"))), want: []parCheck{notScheduled("p")}},
		{name: "selector outside the NodePool's zones is not scheduled", pools: zonePool(zoneA),
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneB))), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonRequirements)}},
		{name: "In requirement picks its zone",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, zoneC))), want: []parCheck{label(corev1.LabelTopologyZone, is(zoneC), "p")}},
		{name: "NodePool Gt on a numeric label", pools: cpuPool(v1.NodeSelectorOpGt, "8"),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label(awsv1.LabelInstanceCPU, is("12"), "p")}},
		{name: "NodePool Lt on a numeric label", pools: cpuPool(v1.NodeSelectorOpLt, "2"),
			pods: one(pod("p", "500m", "512Mi")), want: []parCheck{label(awsv1.LabelInstanceCPU, is("1"), "p")}},
		{name: "NodePool Gte on a numeric label includes the bound", pools: cpuPool(v1.NodeSelectorOpGte, "12"),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label(awsv1.LabelInstanceCPU, is("12"), "p")}},
		{name: "NodePool Lte on a numeric label includes the bound", pools: cpuPool(v1.NodeSelectorOpLte, "1"),
			pods: one(pod("p", "500m", "512Mi")), want: []parCheck{label(awsv1.LabelInstanceCPU, is("1"), "p")}},
		{name: "In requirement on an unknown zone is not scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, "unknown"))), want: []parCheck{notScheduled("p")}},
		{name: "NotIn requirement leaves the other zone",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opNotIn, zoneA, zoneB, "unknown"))), want: []parCheck{label(corev1.LabelTopologyZone, is(zoneC), "p")}},
		{name: "NotIn requirement excluding every zone is not scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opNotIn, zoneA, zoneB, zoneC, "unknown"))), want: []parCheck{notScheduled("p")}},
		{name: "compatible In preference is honoured",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, allZones...), withPreferred(1, corev1.LabelTopologyZone, opIn, zoneB, "unknown"))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(zoneB), "p")}},
		{name: "incompatible In preference is relaxed",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, allZones...), withPreferred(1, corev1.LabelTopologyZone, opIn, "unknown"))),
			want: []parCheck{scheduled("p")}},
		{name: "compatible NotIn preference is honoured",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, allZones...), withPreferred(1, corev1.LabelTopologyZone, opNotIn, zoneA, zoneC))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(zoneB), "p")}},
		{name: "incompatible NotIn preference is relaxed",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, allZones...), withPreferred(1, corev1.LabelTopologyZone, opNotIn, zoneA, zoneB, zoneC))),
			want: []parCheck{scheduled("p")}},
		{name: "selector, requirement and preference together",
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneC), withNodeAffinity(corev1.LabelTopologyZone, opIn, zoneA, zoneB, zoneC),
				withPreferred(1, corev1.LabelTopologyZone, opIn, zoneA, zoneB, zoneC))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(zoneC), "p")}},
		{name: "multidimensional selector, requirements and preferences combine",
			pods: one(pod("p", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneC, corev1.LabelInstanceTypeStable, "c5g0.4x"),
				withNodeAffinity(corev1.LabelTopologyZone, opIn, zoneA, zoneC), withNodeAffinity(corev1.LabelInstanceTypeStable, opIn, "c5i0.4x", "c5g0.4x"),
				withPreferred(1, corev1.LabelTopologyZone, opNotIn, "unknown"), withPreferred(1, corev1.LabelInstanceTypeStable, opNotIn, "unknown"))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(zoneC), "p"), label(corev1.LabelInstanceTypeStable, is("c5g0.4x"), "p")}},
	})
}

// TestParityLabelDomains: label keys in restricted and Kubernetes domains, and the well-known
// labels (upstream "Constraints Validation").
func TestParityLabelDomains(t *testing.T) {
	k8sPool := []*v1.NodePool{anyPool("default", poolReq("kubernetes.io/test", v1.NodeSelectorOpIn, "test-value"), poolReq("k8s.io/test", v1.NodeSelectorOpIn, "test-value"))}
	subPool := []*v1.NodePool{anyPool("default", poolReq("subdomain.kubernetes.io/test", v1.NodeSelectorOpIn, "test-value"), poolReq("subdomain.k8s.io/test", v1.NodeSelectorOpIn, "test-value"))}
	runParity(t, []parCase{
		{name: "requirement on a Karpenter label no node has is not scheduled",
			pods: []*corev1.Pod{pod("initialized", "1", "1Gi", withNodeAffinity(v1.NodeInitializedLabelKey, opIn, "test")), pod("registered", "1", "1Gi", withNodeAffinity(v1.NodeRegisteredLabelKey, opIn, "test"))},
			want: []parCheck{notScheduled("initialized", "registered")}},
		{name: "requirement on an unknown key of a restricted domain is not scheduled",
			pods: []*corev1.Pod{
				pod("k8s", "1", "1Gi", withNodeAffinity("kubernetes.io/test", opIn, "test")), pod("k8sio", "1", "1Gi", withNodeAffinity("k8s.io/test", opIn, "test")),
				pod("karpenter", "1", "1Gi", withNodeAffinity("karpenter.sh/test", opIn, "test")), pod("aws", "1", "1Gi", withNodeAffinity("karpenter.k8s.aws/test", opIn, "test")),
			},
			want: []parCheck{notScheduled("k8s", "k8sio", "karpenter", "aws")}},
		{name: "NodePool requirement in the kubernetes domains labels the node", pools: k8sPool,
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label("kubernetes.io/test", is("test-value"), "p"), label("k8s.io/test", is("test-value"), "p")}},
		{name: "NodePool requirement in a subdomain of the kubernetes domains labels the node", pools: subPool,
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label("subdomain.kubernetes.io/test", is("test-value"), "p"), label("subdomain.k8s.io/test", is("test-value"), "p")}},
		{name: "selectors on well-known labels are scheduled",
			pods: []*corev1.Pod{
				pod("zone", "1", "1Gi", withNodeSelector(corev1.LabelTopologyZone, zoneA)), pod("type", "1", "1Gi", withNodeSelector(corev1.LabelInstanceTypeStable, "c5i0.4x")),
				pod("arch", "1", "1Gi", withNodeSelector(corev1.LabelArchStable, v1.ArchitectureArm64)), pod("os", "1", "1Gi", withNodeSelector(corev1.LabelOSStable, "linux")),
				pod("ct", "1", "1Gi", withNodeSelector(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot)),
			},
			want: []parCheck{allScheduled(), label(v1.CapacityTypeLabelKey, is(v1.CapacityTypeSpot), "ct"), label(corev1.LabelArchStable, is(v1.ArchitectureArm64), "arch")}},
	})
}

// TestParityOperators: each operator on a defined and an undefined key (upstream "Scheduling
// Logic").
func TestParityOperators(t *testing.T) {
	labelled := []*v1.NodePool{anyPool("default", poolLabels("test-key", "test-value"))}
	runParity(t, []parCase{
		{name: "In on an undefined key is not scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opIn, "test-value"))), want: []parCheck{notScheduled("p")}},
		{name: "NotIn on an undefined key is scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opNotIn, "test-value"))), want: []parCheck{scheduled("p"), noLabel("test-key", "p")}},
		{name: "Exists on an undefined key is not scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opExists))), want: []parCheck{notScheduled("p")}},
		{name: "DoesNotExist on an undefined key is scheduled",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opDoesNotExist))), want: []parCheck{scheduled("p"), noLabel("test-key", "p")}},
		{name: "unconstrained pod on a labelled pool", pools: labelled,
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{label("test-key", is("test-value"), "p")}},
		{name: "In with the matching value is scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opIn, "test-value"))), want: []parCheck{label("test-key", is("test-value"), "p")}},
		{name: "NotIn with the matching value is not scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opNotIn, "test-value"))), want: []parCheck{notScheduled("p")}},
		{name: "Exists on a defined key is scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opExists))), want: []parCheck{label("test-key", is("test-value"), "p")}},
		{name: "DoesNotExist on a defined key is not scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opDoesNotExist))), want: []parCheck{notScheduled("p")}},
		{name: "In with a different value is not scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opIn, "another-value"))), want: []parCheck{notScheduled("p")}},
		{name: "NotIn with a different value is scheduled", pools: labelled,
			pods: one(pod("p", "1", "1Gi", withNodeAffinity("test-key", opNotIn, "another-value"))), want: []parCheck{label("test-key", is("test-value"), "p")}},
		{name: "compatible pods share a node", pools: labelled,
			pods: []*corev1.Pod{pod("a", "1", "1Gi", withNodeAffinity("test-key", opIn, "test-value")), pod("b", "1", "1Gi", withNodeAffinity("test-key", opNotIn, "another-value"))},
			want: []parCheck{sameNode("a", "b"), claims(1)}},
		{name: "incompatible pods get different nodes", pools: []*v1.NodePool{anyPool("default", poolReq("test-key", v1.NodeSelectorOpIn, "test-value", "another-value"))},
			pods: []*corev1.Pod{pod("a", "1", "1Gi", withNodeAffinity("test-key", opIn, "test-value")), pod("b", "1", "1Gi", withNodeAffinity("test-key", opIn, "another-value"))},
			want: []parCheck{differentNodes("a", "b"), label("test-key", is("test-value"), "a"), label("test-key", is("another-value"), "b")}},
		{name: "Exists does not widen an In on the same key",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, "non-existent-zone"), withNodeAffinity(corev1.LabelTopologyZone, opExists))),
			want: []parCheck{notScheduled("p")}},
	})
}

// TestParityPreferenceFallback: required terms are alternatives tried in order, preferences
// relaxed heaviest last (upstream "Preferential Fallback" in both suites).
func TestParityPreferenceFallback(t *testing.T) {
	badZone := expr(corev1.LabelTopologyZone, opIn, "invalid")
	runParity(t, []parCase{
		{name: "the last required term is not relaxed",
			pods: one(pod("p", "1", "1Gi", withRequiredTerms(badZone, expr(corev1.LabelTopologyZone, opIn, "also-invalid")))), want: []parCheck{notScheduled("p")}},
		{name: "required terms are tried until one fits",
			pods: one(pod("p", "1", "1Gi", withRequiredTerms(badZone, expr(corev1.LabelTopologyZone, opIn, "also-invalid"), expr(corev1.LabelTopologyZone, opIn, zoneB)))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(zoneB), "p")}},
		{name: "every preference is relaxed when none fits",
			pods: one(pod("p", "1", "1Gi", withPreferred(1, corev1.LabelTopologyZone, opIn, "invalid"), withPreferred(50, corev1.LabelTopologyZone, opIn, "also-invalid"),
				withPreferred(100, corev1.LabelInstanceTypeStable, opIn, "nope"))), want: []parCheck{scheduled("p")}},
		{name: "lighter preferences survive when only the heaviest fails",
			pods: one(pod("p", "1", "1Gi", withPreferred(100, corev1.LabelTopologyZone, opIn, "invalid"), withPreferred(50, corev1.LabelTopologyZone, opIn, zoneC))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(zoneC), "p")}},
		{name: "a preference conflicting with a requirement is dropped",
			pods: one(pod("p", "1", "1Gi", withNodeAffinity(corev1.LabelTopologyZone, opIn, zoneA), withPreferred(10, corev1.LabelTopologyZone, opIn, zoneB))),
			want: []parCheck{label(corev1.LabelTopologyZone, is(zoneA), "p")}},
		{name: "conflicting preferences are relaxed until they agree",
			pods: one(pod("p", "1", "1Gi", withPreferred(10, corev1.LabelTopologyZone, opIn, zoneA), withPreferred(20, corev1.LabelTopologyZone, opNotIn, zoneA))),
			want: []parCheck{scheduled("p")}},
		{name: "a preference that rules out every pool is dropped, not the pool",
			pools: []*v1.NodePool{anyPool("default", poolReq(corev1.LabelArchStable, v1.NodeSelectorOpIn, v1.ArchitectureAmd64))},
			pods:  one(pod("p", "1", "1Gi", withPreferred(10, corev1.LabelArchStable, opIn, v1.ArchitectureArm64))),
			want:  []parCheck{label(corev1.LabelArchStable, is(v1.ArchitectureAmd64), "p")}},
	})
}
