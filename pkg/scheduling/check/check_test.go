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

func testInput() *scheduling.Input {
	rl := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("20")}
	}
	it := func(name, cpu, mem string, price float64) *scheduling.InstanceType {
		return &scheduling.InstanceType{Name: name, Labels: map[string]string{corev1.LabelArchStable: "amd64"}, Capacity: rl(cpu, mem), Allocatable: rl(cpu, mem),
			Offerings: []scheduling.Offering{{Zone: "a", CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true}, {Zone: "b", CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true}}}
	}
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	var pods []*corev1.Pod
	for _, name := range []string{"x", "y"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "anti"}}}
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "anti"}}}}}}
		pods = append(pods, p)
	}
	return &scheduling.Input{Pods: pods, NodePools: []*v1.NodePool{np}, InstanceTypes: []*scheduling.InstanceType{it("small", "2", "4Gi", 0.1), it("large", "4", "8Gi", 0.2)}}
}

// TestCheckerCatchesBrokenPlans breaks a valid plan in one way per case and expects the checker
// to say so.
func TestCheckerCatchesBrokenPlans(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *scheduling.Plan)
		want   string
	}{
		{"valid", func(*scheduling.Plan) {}, ""},
		{"pod dropped", func(p *scheduling.Plan) { p.NodeClaims[1].Pods = nil }, "appears 0 times"},
		{"anti-affinity broken", func(p *scheduling.Plan) {
			p.NodeClaims[0].Pods = append(p.NodeClaims[0].Pods, p.NodeClaims[1].Pods...)
			p.NodeClaims[0].InstanceTypes = []string{"large"}
			p.NodeClaims[0].Launch.Price = 0.2
			p.NodeClaims = p.NodeClaims[:1]
		}, "anti-affinity"},
		{"overfull", func(p *scheduling.Plan) {
			p.NodeClaims[0].Pods = append(p.NodeClaims[0].Pods, p.NodeClaims[1].Pods...)
			p.NodeClaims = p.NodeClaims[:1]
		}, "needs"},
		{"mispriced", func(p *scheduling.Plan) { p.NodeClaims[0].Launch.Price = 0.05 }, "priced"},
		{"unknown type", func(p *scheduling.Plan) { p.NodeClaims[0].InstanceTypes = []string{"nope"} }, "unknown instance type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput()
			plan, err := scheduling.Solve(in)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.NodeClaims) != 2 {
				t.Fatalf("want 2 NodeClaims from the solver, got %d", len(plan.NodeClaims))
			}
			tt.mutate(plan)
			errs := check.Plan(in, plan)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			all := strings.Join(msgs, "\n")
			if tt.want == "" && len(errs) > 0 {
				t.Fatalf("valid plan rejected:\n%s", all)
			}
			if tt.want != "" && !strings.Contains(all, tt.want) {
				t.Fatalf("want a violation containing %q, got:\n%s", tt.want, all)
			}
		})
	}
}

// TestCheckerHostPorts puts two pods with host ports on one node: they conflict as
// kube-scheduler has it, on the same protocol and port when the host IPs are equal or either is
// a wildcard.
func TestCheckerHostPorts(t *testing.T) {
	tests := []struct {
		name           string
		protoA, protoB corev1.Protocol
		ipA, ipB       string
		portA, portB   int32
		wantConflict   bool
	}{
		{name: "same port, no IPs", portA: 80, portB: 80, wantConflict: true},
		{name: "same port, a wildcard and an address", ipA: "0.0.0.0", ipB: "10.0.0.1", portA: 80, portB: 80, wantConflict: true},
		{name: "same port, the same address", ipA: "10.0.0.1", ipB: "10.0.0.1", portA: 80, portB: 80, wantConflict: true},
		{name: "same port, different addresses", ipA: "10.0.0.1", ipB: "10.0.0.2", portA: 80, portB: 80},
		{name: "same port, different protocols", protoA: corev1.ProtocolTCP, protoB: corev1.ProtocolUDP, portA: 80, portB: 80},
		{name: "different ports", portA: 80, portB: 81},
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
			if len(plan.NodeClaims) != 1 || len(plan.NodeClaims[0].Pods) != 2 {
				t.Fatalf("want both pods on one NodeClaim, got %+v", plan.NodeClaims)
			}
			// The ports are added after solving: the checker alone judges them.
			in.Pods[0].Spec.Containers[0].Ports = []corev1.ContainerPort{{HostPort: tt.portA, ContainerPort: tt.portA, Protocol: tt.protoA, HostIP: tt.ipA}}
			in.Pods[1].Spec.Containers[0].Ports = []corev1.ContainerPort{{HostPort: tt.portB, ContainerPort: tt.portB, Protocol: tt.protoB, HostIP: tt.ipB}}
			errs := check.Plan(in, plan)
			found := false
			for _, e := range errs {
				found = found || strings.Contains(e.Error(), "host port")
			}
			if found != tt.wantConflict {
				t.Errorf("host port violation reported %v, want %v: %v", found, tt.wantConflict, errs)
			}
		})
	}
}
