package scheduling_test

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// nodeView is one way a node could launch: a type and one of its offerings.
type nodeView struct {
	it *scheduling.InstanceType
	o  scheduling.Offering
}

func (n nodeView) labels() map[string]string {
	l := maps.Clone(n.it.Labels)
	l[corev1.LabelInstanceTypeStable] = n.it.Name
	l[corev1.LabelTopologyZone] = n.o.Zone
	l[v1.CapacityTypeLabelKey] = n.o.CapacityType
	return l
}

// cheapestWith asserts the pod launches at the lowest price of any available offering whose
// labels match want (the pool's and the pod's constraints, restated), and that every option and
// the launch match want.
func cheapestWith(podName string, want map[string][]string) parCheck {
	match := func(l map[string]string) bool {
		for k, vs := range want {
			found := false
			for _, v := range vs {
				found = found || l[k] == v
			}
			if !found {
				return false
			}
		}
		return true
	}
	return func(t *testing.T, r parResult) {
		t.Helper()
		nc := r.claimOf(podName)
		if nc == nil {
			t.Fatalf("pod %s has no NodeClaim", podName)
		}
		best := -1.0
		for _, it := range r.in.InstanceTypes {
			for _, o := range it.Offerings {
				if o.Available && match(nodeView{it, o}.labels()) && (best < 0 || o.Price < best) {
					best = o.Price
				}
			}
		}
		if nc.Launch.Price != best {
			t.Errorf("launch %+v, want the cheapest matching price %v", nc.Launch, best)
		}
		if !match(r.nodeLabels(podName)) {
			t.Errorf("launch %+v does not match %v", nc.Launch, want)
		}
		for _, name := range nc.InstanceTypes {
			it := r.instanceType(name)
			ok := false
			for _, o := range it.Offerings {
				ok = ok || o.Available && match(nodeView{it, o}.labels())
			}
			if !ok {
				t.Errorf("option %s has no offering matching %v", name, want)
			}
		}
	}
}

// TestParityInstanceSelection: the cheapest compatible instance launches and every option is
// valid (upstream "Instance Type Selection").
func TestParityInstanceSelection(t *testing.T) {
	arch, os, zone, ct := corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelTopologyZone, v1.CapacityTypeLabelKey
	pool := func(opts ...func(*v1.NodePool)) []*v1.NodePool { return []*v1.NodePool{anyPool("default", opts...)} }
	small := func(opts ...podOpt) []*corev1.Pod { return one(pod("p", "100m", "128Mi", opts...)) }
	w := func(kv ...string) map[string][]string {
		m := map[string][]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = append(m[kv[i]], kv[i+1])
		}
		return m
	}
	spotVsOnDemand := []*scheduling.InstanceType{
		customType("one", "1", "1Gi", 1.0, amd64Linux()),
		customType("two", "1", "1Gi", 1.3, amd64Linux()),
	}
	spotVsOnDemand[0].Offerings[1].Price, spotVsOnDemand[1].Offerings[1].Price = 0.2, 0.1
	for i := range spotVsOnDemand[1].Offerings {
		if spotVsOnDemand[1].Offerings[i].CapacityType == v1.CapacityTypeSpot {
			spotVsOnDemand[1].Offerings[i].Price = 0.1
		}
	}
	runParity(t, []parCase{
		{name: "cheapest of all", pods: small(), want: []parCheck{cheapestWith("p", w())}},
		{name: "cheapest with pod arch amd64", pods: small(withNodeSelector(arch, "amd64")), want: []parCheck{cheapestWith("p", w(arch, "amd64"))}},
		{name: "cheapest with pod arch arm64", pods: small(withNodeSelector(arch, "arm64")), want: []parCheck{cheapestWith("p", w(arch, "arm64"))}},
		{name: "cheapest with pool arch amd64", pools: pool(poolReq(arch, opIn, "amd64")), pods: small(), want: []parCheck{cheapestWith("p", w(arch, "amd64"))}},
		{name: "cheapest with pool arch arm64", pools: pool(poolReq(arch, opIn, "arm64")), pods: small(), want: []parCheck{cheapestWith("p", w(arch, "arm64"))}},
		{name: "cheapest with pool os windows", pools: pool(poolReq(os, opIn, "windows")), pods: small(), want: []parCheck{cheapestWith("p", w(os, "windows"))}},
		{name: "cheapest with pod os windows", pods: small(withNodeSelector(os, "windows")), want: []parCheck{cheapestWith("p", w(os, "windows"))}},
		{name: "cheapest with pool os windows and pod arch amd64", pools: pool(poolReq(os, opIn, "windows")), pods: small(withNodeSelector(arch, "amd64")),
			want: []parCheck{cheapestWith("p", w(os, "windows", arch, "amd64"))}},
		{name: "cheapest with pod os linux", pods: small(withNodeSelector(os, "linux")), want: []parCheck{cheapestWith("p", w(os, "linux"))}},
		{name: "cheapest with pool os linux and pod arch arm64", pools: pool(poolReq(os, opIn, "linux")), pods: small(withNodeSelector(arch, "arm64")),
			want: []parCheck{cheapestWith("p", w(os, "linux", arch, "arm64"))}},
		{name: "cheapest with pool zone b", pools: pool(poolReq(zone, opIn, zoneB)), pods: small(), want: []parCheck{cheapestWith("p", w(zone, zoneB))}},
		{name: "cheapest with pod zone b", pods: small(withNodeSelector(zone, zoneB)), want: []parCheck{cheapestWith("p", w(zone, zoneB))}},
		{name: "cheapest with pool spot", pools: pool(poolReq(ct, opIn, "spot")), pods: small(), want: []parCheck{cheapestWith("p", w(ct, "spot"))}},
		{name: "cheapest with pod spot", pods: small(withNodeSelector(ct, "spot")), want: []parCheck{cheapestWith("p", w(ct, "spot"))}},
		{name: "cheapest with pool on-demand in zone a", pools: pool(poolReq(ct, opIn, "on-demand"), poolReq(zone, opIn, zoneA)), pods: small(),
			want: []parCheck{cheapestWith("p", w(ct, "on-demand", zone, zoneA))}},
		{name: "cheapest with pod spot in zone a", pods: small(withNodeSelector(ct, "spot", zone, zoneA)), want: []parCheck{cheapestWith("p", w(ct, "spot", zone, zoneA))}},
		{name: "cheapest with pool spot and pod zone b", pools: pool(poolReq(ct, opIn, "spot")), pods: small(withNodeSelector(zone, zoneB)),
			want: []parCheck{cheapestWith("p", w(ct, "spot", zone, zoneB))}},
		{name: "cheapest with pool on-demand, zone a, arm64, linux", pools: pool(poolReq(ct, opIn, "on-demand"), poolReq(zone, opIn, zoneA), poolReq(arch, opIn, "arm64"), poolReq(os, opIn, "linux")),
			pods: small(), want: []parCheck{cheapestWith("p", w(ct, "on-demand", zone, zoneA, arch, "arm64", os, "linux"))}},
		{name: "cheapest with pool spot in zone b and pod amd64 linux", pools: pool(poolReq(ct, opIn, "spot"), poolReq(zone, opIn, zoneB)),
			pods: small(withNodeSelector(arch, "amd64", os, "linux")), want: []parCheck{cheapestWith("p", w(ct, "spot", zone, zoneB, arch, "amd64", os, "linux"))}},
		{name: "cheapest with pod spot, zone b, amd64, linux", pods: small(withNodeSelector(ct, "spot", zone, zoneB, arch, "amd64", os, "linux")),
			want: []parCheck{cheapestWith("p", w(ct, "spot", zone, zoneB, arch, "amd64", os, "linux"))}},
		{name: "no type matches a pod arch", pods: small(withNodeSelector(arch, "arm")), want: []parCheck{notScheduled("p")}},
		{name: "no type matches a pod arch in a zone", pods: small(withNodeSelector(arch, "arm", zone, zoneB)), want: []parCheck{notScheduled("p")}},
		{name: "no type matches a pool arch with a pod zone", pools: pool(poolReq(arch, opIn, "arm")), pods: small(withNodeSelector(zone, zoneB)), want: []parCheck{notScheduled("p")}},
		{name: "the type has enough resources", pods: one(pod("p", "7", "20Gi")), want: []parCheck{everyOption("large enough", func(it *scheduling.InstanceType) bool {
			cpu, mem := it.Allocatable[corev1.ResourceCPU], it.Allocatable[corev1.ResourceMemory]
			return cpu.MilliValue() >= 7000 && mem.Value() >= 20<<30
		}, "p")}},
		{name: "the on-demand price decides for an on-demand pod, not the spot one", types: spotVsOnDemand,
			pods: small(withNodeSelector(ct, "on-demand")), want: []parCheck{label(corev1.LabelInstanceTypeStable, is("one"), "p")}},
	})
}

// TestParityMinValues: minValues on NodePool requirements (upstream "Instance Type Selection /
// MinValues" and the Strict policy of "MinValuesPolicy").
func TestParityMinValues(t *testing.T) {
	cpu, family, itype := awsv1.LabelInstanceCPU, awsv1.LabelInstanceFamily, corev1.LabelInstanceTypeStable
	pool := func(opts ...func(*v1.NodePool)) []*v1.NodePool { return []*v1.NodePool{anyPool("default", opts...)} }
	distinct := func(key string, atLeast int, podNames ...string) parCheck {
		return custom(func(t *testing.T, r parResult) {
			for _, n := range podNames {
				nc := r.claimOf(n)
				if nc == nil {
					t.Errorf("pod %s has no NodeClaim", n)
					continue
				}
				seen := map[string]bool{}
				for _, name := range nc.InstanceTypes {
					it := r.instanceType(name)
					if key == itype {
						seen[name] = true
					} else if v, ok := it.Labels[key]; ok {
						seen[v] = true
					}
				}
				if len(seen) < atLeast {
					t.Errorf("pod %s: %d values of %s among %v, want at least %d", n, len(seen), key, nc.InstanceTypes, atLeast)
				}
			}
		})
	}
	twoTypes := []*scheduling.InstanceType{customType("type-1", "1", "1Gi", 0.52, amd64Linux()), customType("type-2", "4", "4Gi", 1, amd64Linux())}
	runParity(t, []parCase{
		{name: "minValues on instance types keeps that many options", types: twoTypes, pools: pool(poolMinValues(itype, opIn, 2, "type-1", "type-2")),
			pods: pods(2, "p", "300m", "256Mi"), want: []parCheck{allScheduled(), distinct(itype, 2, "p-0")}},
		{name: "minValues with Gt keeps that many values", pools: pool(poolMinValues(cpu, opGt, 3, "1")),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{distinct(cpu, 3, "p")}},
		{name: "minValues with Gt that too few values pass fails", pools: pool(poolMinValues(cpu, opGt, 2, "8")),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{notScheduled("p"), reason("p", "default", scheduling.ReasonRequirements)}},
		{name: "minValues with Lt keeps that many values", pools: pool(poolMinValues(cpu, opLt, 3, "8")),
			pods: one(pod("p", "500m", "512Mi")), want: []parCheck{distinct(cpu, 3, "p")}},
		{name: "minValues with Lt that too few values pass fails", pools: pool(poolMinValues(cpu, opLt, 4, "8")),
			pods: one(pod("p", "500m", "512Mi")), want: []parCheck{notScheduled("p")}},
		{name: "In and NotIn on one key: the larger minValues holds", pools: pool(poolMinValues(family, opExists, 2), poolMinValues(family, opNotIn, 5, "nope")),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{distinct(family, 5, "p")}},
		{name: "Gt and Lt on one key: the larger minValues holds", pools: pool(poolMinValues(cpu, opGt, 1, "1"), poolMinValues(cpu, opLt, 3, "12")),
			pods: one(pod("p", "500m", "512Mi")), want: []parCheck{distinct(cpu, 3, "p")}},
		{name: "fewer instance types than minValues fails", types: twoTypes, pools: pool(poolMinValues(itype, opIn, 3, "type-1", "type-2")),
			pods: one(pod("p", "300m", "256Mi")), want: []parCheck{notScheduled("p")}},
		{name: "minValues holds as pods fill the node", types: twoTypes, pools: pool(poolMinValues(itype, opIn, 2, "type-1", "type-2")),
			pods: pods(4, "p", "300m", "256Mi"), want: []parCheck{allScheduled(), distinct(itype, 2, "p-0", "p-1", "p-2", "p-3")}},
		{name: "minValues on several keys all hold", pools: pool(poolMinValues(family, opExists, 3), poolMinValues(itype, opExists, 8), poolMinValues(cpu, opExists, 2)),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{distinct(family, 3, "p"), distinct(itype, 8, "p"), distinct(cpu, 2, "p")}},
		{name: "zone minValues beyond the zones fails", pools: pool(poolMinValues(corev1.LabelTopologyZone, opIn, 3, zoneA, zoneB)),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{notScheduled("p")}},
		{name: "zone minValues within the zones holds", pools: pool(poolMinValues(corev1.LabelTopologyZone, opIn, 2, zoneA, zoneB)),
			pods: one(pod("p", "1", "1Gi")), want: []parCheck{scheduled("p")}},
	})
}
