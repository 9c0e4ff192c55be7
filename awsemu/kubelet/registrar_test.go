package kubelet_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/kubelet"
	boot "github.com/joinerhq/joiner/awsemu/legacyboot"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	e, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// launch puts a running instance of the AL2 image with userData straight into the world.
func launch(t *testing.T, st *state.State, userData string) string {
	t.Helper()
	var id string
	_ = st.Update(func(w *state.World) error {
		r := w.Regions["us-west-2"]
		var image *state.Image
		for _, k := range state.SortedKeys(r.Images) {
			if img := r.Images[k]; img.Family == state.FamilyAL2 && img.Architecture == "x86_64" && img.Variant == "standard" {
				image = img
			}
		}
		var subnet *state.Subnet
		for _, k := range state.SortedKeys(r.Subnets) {
			subnet = r.Subnets[k]
			break
		}
		id = w.NewID("i")
		ip := subnet.NextPrivateIP([2]byte{10, 16})
		r.Instances[id] = &state.Instance{
			ID: id, Region: r.Name, Zone: subnet.Zone, ZoneID: subnet.ZoneID, SubnetID: subnet.ID, InstanceType: "m5.large",
			Architecture: "x86_64", ImageID: image.ID, PrivateIP: ip, PrivateDNSName: "ip-" + id + ".us-west-2.compute.internal",
			InstanceProfileARN: w.IAM.InstanceProfiles["KarpenterNodeRole-demo"].ARN, Tags: state.Tags{},
			UserData: base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\n" + userData + "\n")),
			State:    state.InstancePending, StateChangedAt: w.Now, LaunchTime: w.Now,
		}
		return nil
	})
	return id
}

// world is one emulated world whose kubelets register in the shared API server.
type world struct {
	clock *clocktesting.FakeClock
	state *state.State
	reg   *kubelet.Registrar
}

func newWorld(t *testing.T) world {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	booter := boot.NewBooter()
	st, err := awsemu.NewState(clk, state.DefaultSeed(), booter)
	if err != nil {
		t.Fatal(err)
	}
	// Worlds count ids alike, so each test leaves the API server without Nodes.
	t.Cleanup(func() { _ = env.Client.DeleteAllOf(context.Background(), &corev1.Node{}) })
	return world{clock: clk, state: st, reg: kubelet.NewRegistrar(env.Client, st, booter, clk)}
}

// bootAndSync lets every pending instance boot and syncs Nodes.
func (w world) bootAndSync(t *testing.T) {
	t.Helper()
	w.clock.Step(state.PendingFor + boot.Delay)
	if err := w.reg.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// nodes returns the Nodes by providerID, without the not-ready taint admission adds.
func nodes(t *testing.T) map[string]corev1.Node {
	t.Helper()
	list := &corev1.NodeList{}
	if err := env.Client.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Node{}
	for _, n := range list.Items {
		n.Spec.Taints = withoutNotReady(n.Spec.Taints)
		out[n.Spec.ProviderID] = n
	}
	return out
}

func pid(id string) string { return "aws:///us-west-2a/" + id }

func TestRegistrarRegistersWhatTheKubeletWasGiven(t *testing.T) {
	w := newWorld(t)
	joins := launch(t, w.state, `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute --node-labels=nodegroup=karpenter'`)
	dropsTaint := launch(t, w.state, `/etc/eks/bootstrap.sh demo --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`)
	malformed := launch(t, w.state, `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered'`)
	w.bootAndSync(t)
	got := nodes(t)
	if len(got) != 2 {
		t.Fatalf("got %d nodes, want those of %s and %s", len(got), joins, dropsTaint)
	}
	n := got[pid(joins)]
	if diff := cmp.Diff([]corev1.Taint{{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}}, n.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if n.Labels["nodegroup"] != "karpenter" || n.Labels[corev1.LabelInstanceTypeStable] != "m5.large" || n.Labels[corev1.LabelArchStable] != "amd64" {
		t.Errorf("labels: %v", n.Labels)
	}
	if pods := n.Status.Capacity[corev1.ResourcePods]; pods.Value() != 29 || len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("status: %+v", n.Status)
	}
	if cpu := n.Status.Allocatable[corev1.ResourceCPU]; cpu.MilliValue() != 1930 {
		t.Errorf("allocatable cpu %dm, want 1930m", cpu.MilliValue())
	}
	if taints := got[pid(dropsTaint)].Spec.Taints; len(taints) != 0 {
		t.Errorf("the one-word form registered taints %v", taints)
	}
	if _, ok := got[pid(malformed)]; ok {
		t.Error("malformed kubelet arguments registered a node")
	}
}

func TestRegistrarUnmappedRoleNeverJoins(t *testing.T) {
	w := newWorld(t)
	// S1: aws-auth is the only way in and maps the controller's role, not the node's.
	_ = w.state.Update(func(world *state.World) error {
		world.Regions["us-west-2"].Clusters["demo"].AccessEntries = map[string]*state.AccessEntry{}
		return nil
	})
	awsAuth := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aws-auth"}, Data: map[string]string{
		"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/JoinerControllerRole\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n",
	}}
	if err := env.Client.Create(t.Context(), awsAuth); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), awsAuth) })
	if err := w.reg.Sync(t.Context()); err != nil { // reads aws-auth
		t.Fatal(err)
	}
	unmapped := launch(t, w.state, `/etc/eks/bootstrap.sh demo`)
	w.bootAndSync(t)
	var phase string
	w.state.View(func(world *state.World) { phase = world.Regions["us-west-2"].Instances[unmapped].BootPhase })
	if phase != state.BootUnauthorized {
		t.Errorf("boot phase %q, want %q", phase, state.BootUnauthorized)
	}
	if got := nodes(t); len(got) != 0 {
		t.Errorf("an unmapped role registered %d nodes", len(got))
	}
}

func TestRegistrarDeletesNodesOfTerminatedInstances(t *testing.T) {
	w := newWorld(t)
	id := launch(t, w.state, `/etc/eks/bootstrap.sh demo`)
	w.bootAndSync(t)
	if _, ok := nodes(t)[pid(id)]; !ok {
		t.Fatal("the instance did not register")
	}
	_ = w.state.Update(func(world *state.World) error {
		world.Regions["us-west-2"].Instances[id].Terminate(world.Now, "test")
		return nil
	})
	if err := w.reg.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, ok := nodes(t)[pid(id)]; ok && n.DeletionTimestamp == nil {
		t.Errorf("node %s of a terminated instance remains", n.Name)
	}
}

// withoutNotReady drops the taint the API server's TaintNodesByCondition admission adds to every
// new Node; the node lifecycle controller (not running here) removes it once the Node is Ready.
func withoutNotReady(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Key != corev1.TaintNodeNotReady {
			out = append(out, t)
		}
	}
	return out
}

func TestRegistrarRunsBoundPods(t *testing.T) {
	w := newWorld(t)
	id := launch(t, w.state, `/etc/eks/bootstrap.sh demo`)
	w.bootAndSync(t)
	n, ok := nodes(t)[pid(id)]
	if !ok {
		t.Fatal("the instance did not register")
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "inflate"},
		Spec:       corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if err := env.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pod) })
	if err := w.reg.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != 1 || !pod.Status.ContainerStatuses[0].Ready {
		t.Errorf("pod status: %+v", pod.Status)
	}
}
