package workload

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

func TestInputDefaults(t *testing.T) {
	doc := `{"instanceTypes":[{"name":"m.large","cpu":2,"memoryMiB":8192,"pods":29,"arch":"arm64","zones":["z1","z2"],"capacityTypes":["on-demand","spot"],"price":0.1,"spotPrice":0.04,
	  "labels":{"karpenter.k8s.aws/instance-generation":"7"},"overhead":{"cpuMilli":100,"memoryMiB":512}}],
	  "pods":[{"name":"web","count":2,"cpuMilli":250,"memoryMiB":64,"labels":{"app":"web"},
	    "topologySpread":[{"topologyKey":"topology.kubernetes.io/zone"}],"podAntiAffinity":[{"topologyKey":"kubernetes.io/hostname","weight":5}]},
	    {"name":"solo","cpuMilli":100,"memoryMiB":64}]}`
	f, err := Read(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	in, err := f.Input()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"default"}, []string{in.NodePools[0].Name}); diff != "" {
		t.Errorf("default NodePool (-want +got):\n%s", diff)
	}
	it := in.InstanceTypes[0]
	wantOfferings := []scheduling.Offering{
		{Zone: "z1", CapacityType: v1.CapacityTypeOnDemand, Price: 0.1, Available: true}, {Zone: "z1", CapacityType: v1.CapacityTypeSpot, Price: 0.04, Available: true},
		{Zone: "z2", CapacityType: v1.CapacityTypeOnDemand, Price: 0.1, Available: true}, {Zone: "z2", CapacityType: v1.CapacityTypeSpot, Price: 0.04, Available: true},
	}
	if diff := cmp.Diff(wantOfferings, it.Offerings); diff != "" {
		t.Errorf("offerings (-want +got):\n%s", diff)
	}
	cpu, mem := it.Allocatable[corev1.ResourceCPU], it.Allocatable[corev1.ResourceMemory]
	if cpu.MilliValue() != 1900 || mem.Value() != (8192-512)<<20 || it.Labels[corev1.LabelOSStable] != "linux" || it.Labels[corev1.LabelArchStable] != "arm64" {
		t.Errorf("allocatable cpu=%s mem=%s labels=%v", cpu.String(), mem.String(), it.Labels)
	}
	var names []string
	for _, p := range in.Pods {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"web-0", "web-1", "solo"}, names); diff != "" {
		t.Errorf("pod names (-want +got):\n%s", diff)
	}
	web := in.Pods[0]
	wantSpread := []corev1.TopologySpreadConstraint{{TopologyKey: corev1.LabelTopologyZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if diff := cmp.Diff(wantSpread, web.Spec.TopologySpreadConstraints); diff != "" {
		t.Errorf("spread defaults (-want +got):\n%s", diff)
	}
	if got := web.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(got) != 1 || got[0].Weight != 5 {
		t.Errorf("weighted anti-affinity should be preferred, got %+v", web.Spec.Affinity.PodAntiAffinity)
	}
	if q := web.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("250m")) != 0 {
		t.Errorf("cpu request %s", q.String())
	}
}

// TestInputCapsPodCount: a document asking for more than MaxPods pods, in one group or across
// groups, is refused with an error naming the group's count and the fix, before any pod is
// built; one at the cap is accepted.
func TestInputCapsPodCount(t *testing.T) {
	for _, tc := range []struct {
		name, doc, wantErr string
	}{
		{"huge count", `{"pods":[{"name":"web","count":1099511627776}]}`, `pods[0].count 1099511627776 (group "web") brings the workload over 100000 pods: lower the count, or split the workload`},
		{"groups together", `{"pods":[{"name":"a","count":60000},{"name":"b","count":40001}]}`, `pods[1].count 40001 (group "b") brings the workload over 100000 pods`},
		{"groups of one count too", `{"pods":[{"name":"a","count":100000},{"name":"solo"}]}`, `pods[1].count 0 (group "solo") brings the workload over 100000 pods`},
		{"at the cap", `{"pods":[{"name":"a","count":99999},{"name":"solo"}]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(strings.NewReader(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			in, err := f.Input()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr == "" && len(in.Pods) != MaxPods:
				t.Fatalf("%d pods, want %d", len(in.Pods), MaxPods)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
