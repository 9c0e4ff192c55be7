package awsemu_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/testenv"
)

// The API server is started by the first test that needs one and stopped after all tests.
var (
	kubeOnce sync.Once
	kubeEnv  *testenv.Environment
	errKube  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if kubeEnv != nil {
		if err := kubeEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// kube returns the shared API server's client, starting it on first use.
func kube(t *testing.T) client.Client {
	t.Helper()
	kubeOnce.Do(func() { kubeEnv, errKube = testenv.Start() })
	if errKube != nil {
		t.Fatal(errKube)
	}
	return kubeEnv.Client
}

// newKubeEnv is an emulator whose kubelets register in the shared API server. Worlds count ids
// alike, so each test leaves the API server without Nodes, Leases, pods or aws-auth.
func newKubeEnv(t *testing.T) *env {
	t.Helper()
	c := kube(t)
	e := newEnv(t)
	e.api = nil
	e.kubelets = kubelets.New(e.state, e.clock, kubelets.Options{Client: c})
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(metav1.NamespaceDefault), client.GracePeriodSeconds(0))
		_ = c.DeleteAllOf(ctx, &corev1.Node{})
		_ = c.DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(boot.NodeLeaseNamespace))
		_ = c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "aws-auth"}})
	})
	return e
}

// sync runs one pass of the kubelets.
func (e *env) sync(t *testing.T) {
	t.Helper()
	if err := e.kubelets.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// unmapNodeRole makes S1: no access entry for the node role, and aws-auth in the API server maps
// the controller's role instead.
func (e *env) unmapNodeRole(t *testing.T) {
	t.Helper()
	_ = e.state.Update(func(w *state.World) error {
		w.Regions[e.region].Clusters["demo"].AccessEntries = map[string]*state.AccessEntry{}
		return nil
	})
	awsAuth := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "aws-auth"}, Data: map[string]string{
		"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/JoinerControllerRole\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n",
	}}
	if err := kube(t).Create(t.Context(), awsAuth); err != nil {
		t.Fatal(err)
	}
}

// nodes returns the Nodes by providerID, without the not-ready taint admission adds.
func nodes(t *testing.T) map[string]corev1.Node {
	t.Helper()
	list := &corev1.NodeList{}
	if err := kube(t).List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Node{}
	for _, n := range list.Items {
		n.Spec.Taints = withoutNotReady(n.Spec.Taints)
		out[n.Spec.ProviderID] = n
	}
	return out
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

func (e *env) pid(id string) string { return "aws:///" + e.zone("a") + "/" + id }

func ready(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestKubeletsRegisterWhatTheKubeletWasGiven(t *testing.T) {
	e := newKubeEnv(t)
	f := e.fixture(t)
	subnet := f.subnets[e.zone("a")]
	joins := e.runAL2(t, subnet, ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute --node-labels=nodegroup=karpenter'`)
	dropsTaint := e.runAL2(t, subnet, ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`)
	malformed := e.runAL2(t, subnet, ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered'`)
	e.boot(t)
	got := nodes(t)
	if len(got) != 2 {
		t.Fatalf("got %d nodes, want those of %s and %s", len(got), joins, dropsTaint)
	}
	n := got[e.pid(joins)]
	if diff := cmp.Diff([]corev1.Taint{{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}}, n.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if n.Labels["nodegroup"] != "karpenter" || n.Labels[corev1.LabelInstanceTypeStable] != "m5.large" || n.Labels[corev1.LabelArchStable] != "amd64" {
		t.Errorf("labels: %v", n.Labels)
	}
	if pods := n.Status.Capacity[corev1.ResourcePods]; pods.Value() != 29 || !ready(n) {
		t.Errorf("status: %+v", n.Status)
	}
	if cpu := n.Status.Allocatable[corev1.ResourceCPU]; cpu.MilliValue() != 1930 {
		t.Errorf("allocatable cpu %dm, want 1930m", cpu.MilliValue())
	}
	if taints := got[e.pid(dropsTaint)].Spec.Taints; len(taints) != 0 {
		t.Errorf("the one-word form registered taints %v", taints)
	}
	if _, ok := got[e.pid(malformed)]; ok {
		t.Error("malformed kubelet arguments registered a node")
	}
}

func TestKubeletsUnmappedRoleNeverJoins(t *testing.T) {
	e := newKubeEnv(t)
	f := e.fixture(t)
	e.unmapNodeRole(t)
	unmapped := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	e.boot(t)
	if i := e.instance(unmapped); i.BootPhase != state.BootNotJoined || i.BootReason != boot.ReasonUnauthorized {
		t.Errorf("boot phase %q reason %q, want %q %q", i.BootPhase, i.BootReason, state.BootNotJoined, boot.ReasonUnauthorized)
	}
	if got := nodes(t); len(got) != 0 {
		t.Errorf("an unmapped role registered %d nodes", len(got))
	}
}

func TestKubeletsDeleteNodesOfTerminatedInstances(t *testing.T) {
	e := newKubeEnv(t)
	f := e.fixture(t)
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	e.boot(t)
	if _, ok := nodes(t)[e.pid(id)]; !ok {
		t.Fatal("the instance did not register")
	}
	if _, err := e.ec2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	e.sync(t)
	if n, ok := nodes(t)[e.pid(id)]; ok && n.DeletionTimestamp == nil {
		t.Errorf("node %s of a terminated instance remains", n.Name)
	}
}

func TestKubeletsKeepNodesReady(t *testing.T) {
	e := newKubeEnv(t)
	f := e.fixture(t)
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	e.boot(t)
	n, ok := nodes(t)[e.pid(id)]
	if !ok {
		t.Fatal("the instance did not register")
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status = corev1.ConditionUnknown
		}
	}
	n.Spec.Taints = nil // nodes() dropped admission's taint; status updates ignore spec
	if err := kube(t).Status().Update(t.Context(), &n); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(kubelets.HeartbeatEvery)
	e.sync(t)
	if n := nodes(t)[e.pid(id)]; !ready(n) {
		t.Errorf("the heartbeat did not make the node Ready again: %+v", n.Status.Conditions)
	}
}

func TestKubeletsRunBoundPods(t *testing.T) {
	e := newKubeEnv(t)
	f := e.fixture(t)
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	e.boot(t)
	n, ok := nodes(t)[e.pid(id)]
	if !ok {
		t.Fatal("the instance did not register")
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "inflate"},
		Spec:       corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if err := kube(t).Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	e.sync(t)
	if err := kube(t).Get(t.Context(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != 1 || !pod.Status.ContainerStatuses[0].Ready {
		t.Errorf("pod status: %+v", pod.Status)
	}
}

// TestCreateFleetBootsThroughTheAPIServer is S2 and S1 end to end: CreateFleet through the EC2
// SDK client, the boot, the Node (or none) in a real kube-apiserver, GetConsoleOutput.
func TestCreateFleetBootsThroughTheAPIServer(t *testing.T) {
	// S2: Karpenter's taint written as one word is dropped by bootstrap.sh.
	const s2 = `#!/bin/bash
set -ex
/etc/eks/bootstrap.sh demo --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute" --node-labels="karpenter.sh/nodepool=default"'
`
	launch := func(t *testing.T, e *env, userData string) string {
		t.Helper()
		f := e.fixture(t)
		al2, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
			{Name: aws.String("name"), Values: []string{"amazon-eks-node-1.33-v20251101"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.ec2.CreateLaunchTemplate(t.Context(), &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String("karpenter.k8s.aws/s"),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
				ImageId:            al2.Images[0].ImageId,
				UserData:           aws.String(base64.StdEncoding.EncodeToString([]byte(userData))),
				IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("KarpenterNodeRole-demo")},
				SecurityGroupIds:   []string{f.group},
			},
		}); err != nil {
			t.Fatal(err)
		}
		out, err := e.ec2.CreateFleet(t.Context(), fleetInput("karpenter.k8s.aws/s", ec2types.DefaultTargetCapacityTypeOnDemand, ec2types.FleetLaunchTemplateOverridesRequest{
			InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")]),
		}))
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 1 {
			t.Fatalf("CreateFleet: instances %+v, errors %+v", out.Instances, out.Errors)
		}
		return out.Instances[0].InstanceIds[0]
	}
	t.Run("S2 registers without karpenter.sh/unregistered", func(t *testing.T) {
		e := newKubeEnv(t)
		id := launch(t, e, s2)
		e.boot(t)
		n, ok := nodes(t)[e.pid(id)]
		if !ok {
			t.Fatalf("no Node registered; console:\n%s", e.console(t, id))
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == "karpenter.sh/unregistered" {
				t.Errorf("the Node has %v", taint)
			}
		}
		if n.Labels["karpenter.sh/nodepool"] != "" {
			t.Errorf("the dropped --node-labels reached the Node: %v", n.Labels)
		}
		console := e.console(t, id)
		for _, want := range []string{"+ /etc/eks/bootstrap.sh demo", "Started kubelet.service", `"Successfully registered node" node="` + n.Name + `"`} {
			if !strings.Contains(console, want) {
				t.Errorf("console lacks %q:\n%s", want, console)
			}
		}
	})
	t.Run("S1 unmapped role never joins", func(t *testing.T) {
		e := newKubeEnv(t)
		e.unmapNodeRole(t)
		id := launch(t, e, s2)
		e.boot(t)
		for range 3 { // the kubelet keeps retrying
			e.clock.Step(kubelets.RegisterRetryEvery)
			e.sync(t)
		}
		if got := nodes(t); len(got) != 0 {
			t.Errorf("an unmapped role registered %d nodes", len(got))
		}
		console := e.console(t, id)
		if strings.Count(console, `"Unable to register node with API server" err="Unauthorized"`) != 4 {
			t.Errorf("console does not show four Unauthorized registrations:\n%s", console)
		}
		if i := e.instance(id); i.BootReason != boot.ReasonUnauthorized || i.BootRetryAt == nil {
			t.Errorf("boot reason %q retry at %v", i.BootReason, i.BootRetryAt)
		}
	})
}

// TestKubeletsJoinOnceTheRoleIsMapped: a kubelet refused by the API server retries, and its next
// retry joins once its role is mapped, by either fix an operator makes to the live cluster.
func TestKubeletsJoinOnceTheRoleIsMapped(t *testing.T) {
	fixes := []struct {
		name string
		fix  func(t *testing.T, e *env)
	}{
		{"aws-auth edited", func(t *testing.T, e *env) {
			cm := &corev1.ConfigMap{}
			if err := kube(t).Get(t.Context(), client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "aws-auth"}, cm); err != nil {
				t.Fatal(err)
			}
			cm.Data["mapRoles"] += "- rolearn: " + nodeRoleARN + "\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"
			if err := kube(t).Update(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
		}},
		{"eks:CreateAccessEntry", func(t *testing.T, e *env) {
			if _, err := e.admin(t, e.region).eks.CreateAccessEntry(t.Context(), &eks.CreateAccessEntryInput{ClusterName: aws.String("demo"),
				PrincipalArn: aws.String(nodeRoleARN), Type: aws.String("EC2_LINUX")}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range fixes {
		t.Run(tt.name, func(t *testing.T) {
			e := newKubeEnv(t)
			f := e.fixture(t)
			e.unmapNodeRole(t)
			id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
			e.boot(t)
			if i := e.instance(id); i.BootReason != boot.ReasonUnauthorized || i.BootRetryAt == nil {
				t.Fatalf("before the fix: reason %q retry at %v", i.BootReason, i.BootRetryAt)
			}
			tt.fix(t, e)
			e.clock.Step(kubelets.RegisterRetryEvery)
			e.sync(t)
			if i := e.instance(id); i.BootPhase != state.BootJoined {
				t.Errorf("one retry after the fix: phase %q reason %q\n%s", i.BootPhase, i.BootReason, e.console(t, id))
			}
			if _, ok := nodes(t)[e.pid(id)]; !ok {
				t.Error("no Node in the API server")
			}
		})
	}
}

// TestKubeletsAgentsRemoveTheirTaints: the node agents' stand-in deletes Cilium's not-ready taint
// AgentReadyAfter after the Node turns Ready, not before, and keeps the operator's own taints.
func TestKubeletsAgentsRemoveTheirTaints(t *testing.T) {
	e := newKubeEnv(t)
	f := e.fixture(t)
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large,
		`/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute,example.com/own=x:NoSchedule'`)
	e.boot(t)
	keys := func() []string {
		var out []string
		for _, taint := range nodes(t)[e.pid(id)].Spec.Taints {
			out = append(out, taint.Key+"="+taint.Value+":"+string(taint.Effect))
		}
		slices.Sort(out)
		return out
	}
	both := []string{"example.com/own=x:NoSchedule", "node.cilium.io/agent-not-ready=true:NoExecute"}
	if got := keys(); !slices.Equal(got, both) {
		t.Fatalf("registered with taints %v, want %v", got, both)
	}
	e.clock.Step(kubelets.AgentReadyAfter - time.Second)
	e.sync(t)
	if got := keys(); !slices.Equal(got, both) {
		t.Errorf("%s after Ready the taints are %v, want %v still", kubelets.AgentReadyAfter-time.Second, got, both)
	}
	e.clock.Step(time.Second)
	e.sync(t)
	if got, want := keys(), []string{"example.com/own=x:NoSchedule"}; !slices.Equal(got, want) {
		t.Errorf("%s after Ready the taints are %v, want %v", kubelets.AgentReadyAfter, got, want)
	}
}

// gate holds each call until want calls are inside it at once, then lets them all through. A
// call that waits past the deadline opens it for good and marks the gate expired, so code that
// calls one at a time fails the test in one deadline rather than hanging.
type gate struct {
	mu       sync.Mutex
	want     int
	inside   int
	peak     int
	expired  bool
	open     chan struct{}
	deadline time.Duration
}

func newGate(want int) *gate {
	return &gate{want: want, open: make(chan struct{}), deadline: 10 * time.Second}
}

// pass waits at the gate.
func (g *gate) pass() {
	g.mu.Lock()
	g.inside++
	g.peak = max(g.peak, g.inside)
	if g.inside >= g.want {
		g.release()
	}
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
	case <-time.After(g.deadline):
		g.mu.Lock()
		g.expired = true
		g.release()
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.inside--
	g.mu.Unlock()
}

// release opens the gate; g.mu is held.
func (g *gate) release() {
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// reset closes the gate again for the next phase; no call may be inside.
func (g *gate) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open, g.peak, g.expired = make(chan struct{}), 0, false
}

func (g *gate) result() (peak int, expired bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak, g.expired
}

// TestKubeletsWorkInParallel: each instance is its own kubelet, so a sync registers, heartbeats
// and reports pods for many instances at once. The API server's Node and pod status writes are
// held until 8 are in flight; a one-at-a-time loop never gets there. It also checks what a pass
// keeps per instance stays right: every Node registered, Ready again after a heartbeat, every
// pod Running.
func TestKubeletsWorkInParallel(t *testing.T) {
	const instances = 8
	g := newGate(instances)
	kube(t)
	direct, err := client.NewWithWatch(kubeEnv.Config, client.Options{Scheme: kubeEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(direct, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			g.pass()
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	e := newKubeEnv(t)
	e.kubelets = kubelets.New(e.state, e.clock, kubelets.Options{Client: c, Workers: instances})
	f := e.fixture(t)
	var ids []string
	for range instances {
		ids = append(ids, e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`))
	}

	// Registration: each boot writes its Node's status once; the same pass heartbeats each.
	e.clock.Step(state.PendingFor + state.BootDelay)
	if err := e.kubelets.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if peak, expired := g.result(); expired || peak < instances {
		t.Fatalf("registration: %d status writes at once at most (expired %v), want %d", peak, expired, instances)
	}
	got := nodes(t)
	for _, id := range ids {
		if n, ok := got[e.pid(id)]; !ok || !ready(n) {
			t.Fatalf("instance %s: node registered %v, ready %v", id, ok, ready(n))
		}
	}

	// Pods: one bound to each Node, all reported Running in one pass, together with the due
	// heartbeats.
	g.reset()
	for n, id := range ids {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: fmt.Sprintf("inflate-%d", n)},
			Spec:       corev1.PodSpec{NodeName: got[e.pid(id)].Name, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if err := kube(t).Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Step(kubelets.HeartbeatEvery)
	if err := e.kubelets.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if peak, expired := g.result(); expired || peak < instances {
		t.Fatalf("heartbeats and pods: %d status writes at once at most (expired %v), want %d", peak, expired, instances)
	}
	pods := &corev1.PodList{}
	if err := kube(t).List(t.Context(), pods, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s, want Running", p.Name, p.Status.Phase)
		}
	}
	if len(pods.Items) != instances {
		t.Errorf("%d pods, want %d", len(pods.Items), instances)
	}
}

// TestKubeletsHeartbeatWithLease: a joined kubelet renews its Node's Lease every HeartbeatEvery
// and posts the Node's status only when it changed or StatusReportEvery has passed, as kubelets
// do, so that a quiet Node is no update event for the watchers of Nodes.
func TestKubeletsHeartbeatWithLease(t *testing.T) {
	e := newKubeEnv(t)
	f := e.fixture(t)
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	e.boot(t)
	n, ok := nodes(t)[e.pid(id)]
	if !ok {
		t.Fatal("the instance did not register")
	}
	renewed := func() time.Time {
		t.Helper()
		lease := &coordinationv1.Lease{}
		if err := kube(t).Get(t.Context(), client.ObjectKey{Namespace: boot.NodeLeaseNamespace, Name: n.Name}, lease); err != nil {
			t.Fatal(err)
		}
		return lease.Spec.RenewTime.Time
	}
	version := nodes(t)[e.pid(id)].ResourceVersion
	for range 3 {
		e.clock.Step(kubelets.HeartbeatEvery)
		e.sync(t)
		if got := renewed(); !got.Equal(e.clock.Now().Truncate(time.Microsecond)) {
			t.Errorf("lease renewed at %v, want %v", got, e.clock.Now())
		}
	}
	if got := nodes(t)[e.pid(id)].ResourceVersion; got != version {
		t.Errorf("a quiet Node's status was posted between reports (resourceVersion %s, was %s)", got, version)
	}
	e.clock.Step(kubelets.StatusReportEvery)
	e.sync(t)
	if got := nodes(t)[e.pid(id)].ResourceVersion; got == version {
		t.Error("the status was not reported after StatusReportEvery")
	}
}

// TestKubeletsRunPodsWithoutWaitingForOthers: in Run, a pod bound to one Node is reported
// Running while another Node's pod status write is still held by the API server, as one kubelet
// does not wait on another's (a keep pass that did made pods wait seconds behind slow Nodes).
func TestKubeletsRunPodsWithoutWaitingForOthers(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c := intercepted(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if obj.GetName() == "held" {
				once.Do(func() { close(held) })
				<-release
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	e := newKubeEnv(t)
	e.kubelets = kubelets.New(e.state, e.clock, kubelets.Options{Client: c})
	f := e.fixture(t)
	a := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	b := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	e.boot(t)
	got := nodes(t)
	bind := func(name string, node string) *corev1.Pod {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if err := kube(t).Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	bind("held", got[e.pid(a)].Name)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() { e.kubelets.Run(ctx, time.Second); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })
	defer close(release)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the held pod's status write never came")
	}
	free := bind("free", got[e.pid(b)].Name)
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		e.clock.Step(time.Second) // the loops' ticker
		if err := kube(t).Get(ctx, client.ObjectKeyFromObject(free), free); err != nil {
			return false, err
		}
		return free.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("pod free is %q while another Node's pod is held (%v), want Running", free.Status.Phase, err)
	}
}

// TestKubeletsBootWithoutWaitingForOthers: in Run, an instance that comes due while another
// instance's boot is held by the API server registers its Node without waiting for that boot,
// as one kubelet does not wait on another's (a boot pass that waited for all of its boots made
// the instances launched meanwhile wait for the slowest).
func TestKubeletsBootWithoutWaitingForOthers(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c := intercepted(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, isNode := obj.(*corev1.Node); isNode {
				first := false
				once.Do(func() { first = true; close(held) })
				if first {
					<-release
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	e := newKubeEnv(t)
	e.kubelets = kubelets.New(e.state, e.clock, kubelets.Options{Client: c})
	f := e.fixture(t)
	a := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() { e.kubelets.Run(ctx, time.Second); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })
	defer close(release)
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		select {
		case <-held:
			return true, nil
		default:
			e.clock.Step(time.Second) // the loops' ticker, and the instance's pending and boot delay
			return false, nil
		}
	})
	if err != nil {
		t.Fatalf("instance %s never registered its Node (%v)", a, err)
	}
	b := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeM5Large, `/etc/eks/bootstrap.sh demo`)
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		e.clock.Step(time.Second)
		_, ok := nodes(t)[e.pid(b)]
		return ok, nil
	})
	if err != nil {
		t.Fatalf("instance %s did not register while instance %s's registration is held (%v)", b, a, err)
	}
	if _, ok := nodes(t)[e.pid(a)]; ok {
		t.Errorf("instance %s registered although its Node's creation is held", a)
	}
}

// intercepted is a direct client of the package's API server whose calls go through funcs.
func intercepted(t *testing.T, funcs interceptor.Funcs) client.WithWatch {
	t.Helper()
	kube(t)
	direct, err := client.NewWithWatch(kubeEnv.Config, client.Options{Scheme: kubeEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return interceptor.NewClient(direct, funcs)
}
