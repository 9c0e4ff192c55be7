package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// affinityTo is a required pod affinity on key to the pods labelled app=app.
func affinityTo(key, app string) podOpt {
	return func(p *corev1.Pod) {
		a := ensureAffinity(p)
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}})
	}
}

func withSelector(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

// shuffled returns n permutations of pods (the first is pods itself), from a fixed seed.
func shuffled(pods []*corev1.Pod, n int) [][]*corev1.Pod {
	rng := rand.New(rand.NewPCG(7, 11))
	out := [][]*corev1.Pod{pods}
	for range n - 1 {
		p := slices.Clone(pods)
		rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		out = append(out, p)
	}
	return out
}

// TestMergeCompatiblePodsOnOneNode: pods whose requirements intersect share a node, narrowed to
// the intersection, whenever that is cheaper than a node each; pods whose requirements do not
// intersect, or that would make a large node dearer than a small one of their own, stay apart.
func TestMergeCompatiblePodsOnOneNode(t *testing.T) {
	zoneB, zoneC := testZones[1], testZones[2]
	zoneInBC := withNodeAffinity(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zoneB, zoneC)
	amd := withNodeAffinity(corev1.LabelArchStable, corev1.NodeSelectorOpIn, v1.ArchitectureAmd64)
	arm := withSelector(corev1.LabelArchStable, v1.ArchitectureArm64)
	tests := []struct {
		name      string
		pods      []*corev1.Pod
		want      []string // claims
		wantLabel map[string]string
	}{{
		name: "the issue's example: zone b, and amd64 in zone b or c, share one amd64 node in zone b",
		pods: []*corev1.Pod{
			pod("a-0", "200m", "128Mi", withLabels("app", "a"), withSelector(corev1.LabelTopologyZone, zoneB)),
			pod("a-1", "200m", "128Mi", withLabels("app", "a"), withSelector(corev1.LabelTopologyZone, zoneB)),
			pod("b-0", "200m", "128Mi", withLabels("app", "b"), amd, zoneInBC),
			pod("b-1", "200m", "128Mi", withLabels("app", "b"), amd, zoneInBC),
		},
		want:      []string{"default:a-0,a-1,b-0,b-1"},
		wantLabel: map[string]string{corev1.LabelTopologyZone: zoneB, corev1.LabelArchStable: v1.ArchitectureAmd64},
	}, {
		name: "an unconstrained pod joins a node narrowed to amd64 rather than open an arm64 one",
		pods: []*corev1.Pod{
			pod("a-0", "300m", "128Mi", withLabels("app", "a"), amd),
			pod("free-0", "200m", "128Mi", withLabels("app", "free")),
		},
		want:      []string{"default:a-0,free-0"},
		wantLabel: map[string]string{corev1.LabelArchStable: v1.ArchitectureAmd64},
	}, {
		name: "arm64 and amd64 never share",
		pods: []*corev1.Pod{
			pod("a-0", "200m", "128Mi", withLabels("app", "a"), arm),
			pod("b-0", "200m", "128Mi", withLabels("app", "b"), amd),
		},
		want: []string{"default:a-0", "default:b-0"},
	}, {
		name: "disjoint zones never share",
		pods: []*corev1.Pod{
			pod("a-0", "200m", "128Mi", withLabels("app", "a"), withSelector(corev1.LabelTopologyZone, testZones[0])),
			pod("b-0", "200m", "128Mi", withLabels("app", "b"), withSelector(corev1.LabelTopologyZone, zoneB)),
		},
		want: []string{"default:a-0", "default:b-0"},
	}, {
		// Eight 1-vCPU pods fill an arm64 node; turning it amd64 for one small pod costs a
		// quarter more of a large node, more than a small amd64 node of its own.
		name: "merging that makes a large node dearer than a small node apart is not done",
		pods: append(podsN("big", 7, "1", "1Gi", withLabels("app", "big"), arm),
			pod("b-0", "100m", "128Mi", withLabels("app", "b"), amd)),
		want: []string{"default:b-0", "default:big-0,big-1,big-2,big-3,big-4,big-5,big-6"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, pods := range shuffled(tt.pods, 6) {
				in := &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: generatedTypes(120)}
				plan := solveChecked(t, in)
				if diff := cmp.Diff(summary{Claims: tt.want}, summarize(plan)); diff != "" {
					t.Fatalf("order %d: plan (-want +got):\n%s", i, diff)
				}
				for k, v := range tt.wantLabel {
					if got := plan.NodeClaims[0].Labels[k]; got != v {
						t.Errorf("order %d: claim label %s = %q, want %q (requirements %v)", i, k, got, v, plan.NodeClaims[0].Requirements)
					}
				}
			}
		})
	}
}

func podsN(prefix string, n int, cpu, mem string, opts ...podOpt) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, pod(fmt.Sprintf("%s-%d", prefix, i), cpu, mem, opts...))
	}
	return out
}

// TestPodAffinityWithinBatchPlacesTargetsFirst: pods whose required affinity names pods pending
// in the same batch are placed with them, whatever the input order, and a chain of such pods
// longer than a fixed number of passes still lands.
func TestPodAffinityWithinBatchPlacesTargetsFirst(t *testing.T) {
	web := func(i int, cpu, mem string, key string) *corev1.Pod {
		return pod(fmt.Sprintf("web-%d", i), cpu, mem, withLabels("app", "web"), affinityTo(key, "db"))
	}
	db := pod("db-0", "100m", "128Mi", withLabels("app", "db"))
	// A chain: each link needs the next one's node, and the biggest (tried first) needs the
	// smallest, so each pass places one more link.
	var chain []*corev1.Pod
	for i := range 5 {
		opts := []podOpt{withLabels("app", fmt.Sprintf("link-%d", i))}
		if i > 0 {
			opts = append(opts, affinityTo(corev1.LabelHostname, fmt.Sprintf("link-%d", i-1)))
		}
		chain = append(chain, pod(fmt.Sprintf("link-%d", i), fmt.Sprintf("%dm", 100*(i+1)), "128Mi", opts...))
	}
	busy := func() []*scheduling.Node {
		return []*scheduling.Node{existingNode("existing-1", "1", "2Gi", map[string]string{corev1.LabelHostname: "existing-1", corev1.LabelTopologyZone: testZones[0]},
			pod("filler", "600m", "128Mi"))}
	}
	tests := []struct {
		name     string
		pods     []*corev1.Pod
		nodes    func() []*scheduling.Node
		want     []string
		sameZone bool
		together []string // pods that must share a claim
		limited  bool     // the pool has a (generous) cpu limit
	}{{
		name:  "the target skips a node with room for it alone: its followers must fit there too",
		pods:  []*corev1.Pod{db, web(0, "250m", "256Mi", corev1.LabelHostname), web(1, "250m", "256Mi", corev1.LabelHostname), web(2, "250m", "256Mi", corev1.LabelHostname)},
		nodes: busy,
		want:  []string{"default:db-0,web-0,web-1,web-2"},
	}, {
		name: "pods of other classes do not take the room on the target's node that its followers need",
		pods: append([]*corev1.Pod{pod("db-0", "250m", "512Mi", withLabels("app", "db")),
			web(0, "250m", "256Mi", corev1.LabelHostname), web(1, "250m", "256Mi", corev1.LabelHostname), web(2, "250m", "256Mi", corev1.LabelHostname)},
			podsN("filler", 40, "250m", "256Mi", withLabels("app", "a-filler"))...),
		together: []string{"db-0", "web-0", "web-1", "web-2"},
		// In a pool with limits a NodeClaim keeps only its cheapest options, so a node the
		// fillers fill cannot grow for the followers afterwards.
		limited: true,
	}, {
		name: "the issue's example: one db and three web pods with hostname affinity to it share one node",
		pods: []*corev1.Pod{db, web(0, "500m", "512Mi", corev1.LabelHostname), web(1, "500m", "512Mi", corev1.LabelHostname), web(2, "500m", "512Mi", corev1.LabelHostname)},
		want: []string{"default:db-0,web-0,web-1,web-2"},
	}, {
		name: "followers of another shape grow the target's node",
		pods: []*corev1.Pod{db, web(0, "250m", "6Gi", corev1.LabelHostname), web(1, "250m", "6Gi", corev1.LabelHostname), web(2, "250m", "6Gi", corev1.LabelHostname)},
		want: []string{"default:db-0,web-0,web-1,web-2"},
	}, {
		name:     "zone affinity: followers go to the target's zone",
		pods:     []*corev1.Pod{db, web(0, "4", "4Gi", corev1.LabelTopologyZone), web(1, "4", "4Gi", corev1.LabelTopologyZone)},
		sameZone: true,
	}, {
		name: "a chain of five hostname affinities lands on one node",
		pods: chain,
		want: []string{"default:link-0,link-1,link-2,link-3,link-4"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, pods := range shuffled(tt.pods, 12) {
				np := nodePool("default")
				if tt.limited {
					np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("1000")}
				}
				in := &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{np}, InstanceTypes: generatedTypes(120)}
				if tt.nodes != nil {
					in.Nodes = tt.nodes()
				}
				plan := solveChecked(t, in)
				if len(plan.Unschedulable) > 0 {
					t.Fatalf("order %d: %s unschedulable: %+v", i, plan.Unschedulable[0].Pod.Name, plan.Unschedulable[0].Reasons)
				}
				if tt.want != nil {
					if diff := cmp.Diff(summary{Claims: tt.want}, summarize(plan)); diff != "" {
						t.Fatalf("order %d: plan (-want +got):\n%s", i, diff)
					}
				}
				if tt.together != nil {
					claimOf := map[string]string{}
					for _, nc := range plan.NodeClaims {
						for _, p := range nc.Pods {
							claimOf[p.Name] = nc.Name
						}
					}
					for _, name := range tt.together[1:] {
						if claimOf[name] != claimOf[tt.together[0]] {
							t.Fatalf("order %d: %s on %q, %s on %q", i, name, claimOf[name], tt.together[0], claimOf[tt.together[0]])
						}
					}
				}
				if tt.sameZone {
					zones := map[string]bool{}
					for _, nc := range plan.NodeClaims {
						zones[nc.Labels[corev1.LabelTopologyZone]] = true
					}
					if len(zones) != 1 {
						t.Fatalf("order %d: claims in zones %v, want one zone\n%s", i, zones, planText(plan))
					}
				}
			}
		})
	}
}

// TestTopologyNodeAffinityPolicyIgnoreCountsEveryPoolsZones and the nodeTaintsPolicy cases: the
// domains of a zone spread are those of every NodePool (and existing node) the policies let
// count, reachable by the pod or not, and an empty one caps how many pods each other domain takes.
func TestTopologyNodeAffinityPolicyIgnoreCountsEveryPoolsZones(t *testing.T) {
	ignore, honor := corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor
	zonesPool := func(name string, zones ...string) func(*v1.NodePool) {
		return func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: zones})
			np.Spec.Template.Labels = map[string]string{"pool": name}
		}
	}
	tainted := func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	}
	spreadPods := func(n int, affinity, taints *corev1.NodeInclusionPolicy, opts ...podOpt) []*corev1.Pod {
		var out []*corev1.Pod
		for i := range n {
			p := pod(fmt.Sprintf("s-%d", i), "100m", "128Mi", append([]podOpt{withLabels("app", "s"), withSpread(corev1.LabelTopologyZone, 1, corev1.DoNotSchedule)}, opts...)...)
			p.Spec.TopologySpreadConstraints[0].NodeAffinityPolicy = affinity
			p.Spec.TopologySpreadConstraints[0].NodeTaintsPolicy = taints
			out = append(out, p)
		}
		return out
	}
	inAB := withSelector("pool", "ab")
	tests := []struct {
		name       string
		pools      []*v1.NodePool
		pods       []*corev1.Pod
		wantPlaced int
	}{{
		name:       "nodeAffinityPolicy Honor: only the zones the pod can reach count, 4 pods over a and b",
		pools:      []*v1.NodePool{nodePool("ab", zonesPool("ab", testZones[0], testZones[1])), nodePool("c", zonesPool("c", testZones[2]))},
		pods:       spreadPods(4, &honor, nil, inAB),
		wantPlaced: 4,
	}, {
		name:       "nodeAffinityPolicy default is Honor",
		pools:      []*v1.NodePool{nodePool("ab", zonesPool("ab", testZones[0], testZones[1])), nodePool("c", zonesPool("c", testZones[2]))},
		pods:       spreadPods(4, nil, nil, inAB),
		wantPlaced: 4,
	}, {
		name:       "nodeAffinityPolicy Ignore: zone c of the other pool counts and stays empty, one pod each in a and b",
		pools:      []*v1.NodePool{nodePool("ab", zonesPool("ab", testZones[0], testZones[1])), nodePool("c", zonesPool("c", testZones[2]))},
		pods:       spreadPods(4, &ignore, nil, inAB),
		wantPlaced: 2,
	}, {
		name:       "nodeTaintsPolicy default Ignore: the zone of a pool the pod does not tolerate counts",
		pools:      []*v1.NodePool{nodePool("ab", zonesPool("ab", testZones[0], testZones[1])), nodePool("c", zonesPool("c", testZones[2]), tainted)},
		pods:       spreadPods(4, nil, nil),
		wantPlaced: 2,
	}, {
		name:       "nodeTaintsPolicy Honor: the zone of a pool the pod does not tolerate does not count",
		pools:      []*v1.NodePool{nodePool("ab", zonesPool("ab", testZones[0], testZones[1])), nodePool("c", zonesPool("c", testZones[2]), tainted)},
		pods:       spreadPods(4, nil, &honor),
		wantPlaced: 4,
	}, {
		name:  "nodeTaintsPolicy Honor with a toleration: the tainted pool's zone counts and is reachable",
		pools: []*v1.NodePool{nodePool("ab", zonesPool("ab", testZones[0], testZones[1])), nodePool("c", zonesPool("c", testZones[2]), tainted)},
		pods: spreadPods(6, nil, &honor, func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}),
		wantPlaced: 6,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := solveChecked(t, &scheduling.Input{Pods: tt.pods, NodePools: tt.pools, InstanceTypes: generatedTypes(60)})
			placed := len(tt.pods) - len(plan.Unschedulable)
			if placed != tt.wantPlaced {
				t.Fatalf("placed %d pods, want %d\n%s", placed, tt.wantPlaced, planText(plan))
			}
			perZone := map[string]int{}
			for _, nc := range plan.NodeClaims {
				perZone[nc.Labels[corev1.LabelTopologyZone]] += len(nc.Pods)
			}
			for z, n := range perZone {
				if n > (tt.wantPlaced+2)/3+1 {
					t.Errorf("zone %s holds %d pods: %v", z, n, perZone)
				}
			}
		})
	}
}
