package scheduling_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// testZoneIDs are the zone IDs of testZones.
var testZoneIDs = map[string]string{"test-zone-a": "tz-az1", "test-zone-b": "tz-az2", "test-zone-c": "tz-az3"}

// withZoneIDs returns copies of types whose offerings carry testZoneIDs.
func withZoneIDs(types []*scheduling.InstanceType) []*scheduling.InstanceType {
	out := make([]*scheduling.InstanceType, 0, len(types))
	for _, it := range types {
		cp := *it
		cp.Offerings = slices.Clone(it.Offerings)
		for i := range cp.Offerings {
			cp.Offerings[i].ZoneID = testZoneIDs[cp.Offerings[i].Zone]
		}
		out = append(out, &cp)
	}
	return out
}

// claimZones returns the zones a planned NodeClaim may launch in: those its zone requirement
// allows among the ones its instance types offer.
func claimZones(nc scheduling.NodeClaim) []string {
	allowed := slices.Clone(testZones)
	for _, r := range nc.Requirements {
		if r.Key != corev1.LabelTopologyZone {
			continue
		}
		allowed = slices.DeleteFunc(allowed, func(z string) bool {
			in := slices.Contains(r.Values, z)
			return r.Operator == v1.NodeSelectorOpIn && !in || r.Operator == v1.NodeSelectorOpNotIn && in
		})
	}
	return allowed
}

// TestZoneIDConstraints: a constraint on topology.k8s.aws/zone-id (a pod's node selector or node
// affinity, a NodePool's requirement, a topology spread) is met as the same constraint on the
// zone whose ID it names, and the checker agrees.
func TestZoneIDConstraints(t *testing.T) {
	types := withZoneIDs(generatedTypes(100))
	zoneIDIn := func(ids ...string) func(*v1.NodePool) {
		return func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: awsv1.LabelTopologyZoneID, Operator: v1.NodeSelectorOpIn, Values: ids})
		}
	}
	selector := func(id string) podOpt {
		return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{awsv1.LabelTopologyZoneID: id} }
	}
	tests := []struct {
		name  string
		pool  *v1.NodePool
		pods  []*corev1.Pod
		zones []string // the zones of the claims, in any order; each claim must be pinned to one
	}{
		{name: "node selector", pool: nodePool("default"),
			pods: []*corev1.Pod{pod("a", "1", "1Gi", selector("tz-az2"))}, zones: []string{"test-zone-b"}},
		{name: "node affinity NotIn", pool: nodePool("default"),
			pods:  []*corev1.Pod{pod("a", "1", "1Gi", withNodeAffinity(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpNotIn, "tz-az1", "tz-az2"))},
			zones: []string{"test-zone-c"}},
		{name: "NodePool requirement", pool: nodePool("default", zoneIDIn("tz-az3")),
			pods: []*corev1.Pod{pod("a", "1", "1Gi")}, zones: []string{"test-zone-c"}},
		{name: "spread over zone IDs", pool: nodePool("default"),
			pods: []*corev1.Pod{
				pod("s1", "500m", "1Gi", withLabels("app", "s"), withSpread(awsv1.LabelTopologyZoneID, 1, corev1.DoNotSchedule)),
				pod("s2", "500m", "1Gi", withLabels("app", "s"), withSpread(awsv1.LabelTopologyZoneID, 1, corev1.DoNotSchedule)),
				pod("s3", "500m", "1Gi", withLabels("app", "s"), withSpread(awsv1.LabelTopologyZoneID, 1, corev1.DoNotSchedule)),
			},
			zones: []string{"test-zone-a", "test-zone-b", "test-zone-c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := solveChecked(t, &scheduling.Input{Pods: tt.pods, NodePools: []*v1.NodePool{tt.pool}, InstanceTypes: types})
			if len(plan.Unschedulable) > 0 {
				t.Fatalf("unschedulable: %+v", plan.Unschedulable)
			}
			var got []string
			for _, nc := range plan.NodeClaims {
				zones := claimZones(nc)
				if len(zones) != 1 {
					t.Fatalf("claim %s may launch in zones %v, want one", nc.Name, zones)
				}
				if nc.Launch.Zone != zones[0] {
					t.Errorf("claim %s is priced in %s, pinned to %s", nc.Name, nc.Launch.Zone, zones[0])
				}
				got = append(got, zones[0])
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.zones) {
				t.Errorf("claims in zones %v, want %v", got, tt.zones)
			}
		})
	}
}

// TestZoneIDUnknown: without zone IDs on the offerings, a pod asking for one cannot be placed.
func TestZoneIDUnknown(t *testing.T) {
	p := pod("a", "1", "1Gi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{awsv1.LabelTopologyZoneID: "tz-az1"} })
	plan := solveChecked(t, &scheduling.Input{Pods: []*corev1.Pod{p}, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: generatedTypes(30)})
	if len(plan.Unschedulable) != 1 || len(plan.NodeClaims) != 0 {
		t.Errorf("plan: %d claims, unschedulable %+v; want the pod unschedulable", len(plan.NodeClaims), plan.Unschedulable)
	}
}

// TestNodeClassLabel: new nodes carry karpenter.k8s.aws/ec2nodeclass, the name of their
// NodePool's EC2NodeClass, so a pod may select it.
func TestNodeClassLabel(t *testing.T) {
	selecting := func(name string) *corev1.Pod {
		return pod("a", "1", "1Gi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{awsv1.LabelNodeClass: name} })
	}
	types := generatedTypes(30)
	plan := solveChecked(t, &scheduling.Input{Pods: []*corev1.Pod{selecting("default")}, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types})
	if len(plan.NodeClaims) != 1 || len(plan.Unschedulable) != 0 {
		t.Fatalf("a pod selecting its pool's EC2NodeClass: %d claims, unschedulable %+v", len(plan.NodeClaims), plan.Unschedulable)
	}
	if got := plan.NodeClaims[0].Labels[awsv1.LabelNodeClass]; got != "default" {
		t.Errorf("claim label %s = %q, want default", awsv1.LabelNodeClass, got)
	}
	plan = solveChecked(t, &scheduling.Input{Pods: []*corev1.Pod{selecting("other")}, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types})
	if len(plan.NodeClaims) != 0 || len(plan.Unschedulable) != 1 {
		t.Errorf("a pod selecting another EC2NodeClass: %d claims, unschedulable %+v", len(plan.NodeClaims), plan.Unschedulable)
	}
}
