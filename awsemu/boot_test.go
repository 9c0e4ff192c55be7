package awsemu_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/state"
)

// console returns the instance's console output through the SDK.
func (e *env) console(t *testing.T, id string) string {
	t.Helper()
	out, err := e.ec2.GetConsoleOutput(t.Context(), &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	console, err := base64.StdEncoding.DecodeString(aws.ToString(out.Output))
	if err != nil {
		t.Fatal(err)
	}
	return string(console)
}

// instance returns a copy of the instance's state.
func (e *env) instance(id string) state.Instance {
	var i state.Instance
	e.state.View(func(w *state.World) { i = *w.Regions[e.region].Instances[id] })
	return i
}

// registered returns the Node registered with the in-memory API server for the instance.
func (e *env) registered(id string) *corev1.Node {
	for _, n := range e.api.Registered {
		if strings.HasSuffix(n.Spec.ProviderID, "/"+id) {
			return n
		}
	}
	return nil
}

// runAL2 launches one AL2 instance of the node role whose userData is script.
func (e *env) runAL2(t *testing.T, subnet string, instanceType ec2types.InstanceType, script string) string {
	t.Helper()
	al2, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-1.31-v20251101"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: al2.Images[0].ImageId, InstanceType: instanceType,
		IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String("KarpenterNodeRole-demo")},
		SubnetId:           aws.String(subnet), UserData: aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\n" + script + "\n"))),
	})
	if err != nil {
		t.Fatal(err)
	}
	return *run.Instances[0].InstanceId
}

func TestInstancesBootTheirUserData(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	tests := []struct {
		name     string
		userData string
		phase    string
		reason   string
		console  string
		taints   int
	}{
		{"S2 one-word form boots without the taint",
			`/etc/eks/bootstrap.sh demo --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`,
			state.BootJoined, "", `Successfully registered node`, 0},
		{"two-word form boots with the taint",
			`/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'`,
			state.BootJoined, "", "Successfully registered node", 1},
		{"malformed kubelet arguments never start the kubelet",
			`/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=oops'`,
			state.BootNotJoined, boot.ReasonKubeletFailed, "invalid taint spec", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeT3Medium, tt.userData)
			if got := e.console(t, id); strings.Contains(got, "cloud-init") {
				t.Errorf("the console shows a boot before the boot delay:\n%s", got)
			}
			e.boot(t)
			if console := e.console(t, id); !strings.Contains(console, tt.console) {
				t.Errorf("console does not contain %q:\n%s", tt.console, console)
			}
			i := e.instance(id)
			if i.BootPhase != tt.phase || i.BootReason != tt.reason || i.BootRetryAt != nil {
				t.Errorf("boot phase %q reason %q retry at %v, want %q %q and no retry", i.BootPhase, i.BootReason, i.BootRetryAt, tt.phase, tt.reason)
			}
			n := e.registered(id)
			if (n != nil) != (tt.phase == state.BootJoined) || (n != nil && len(n.Spec.Taints) != tt.taints) {
				t.Errorf("registered node %v, want one (%v) with %d taints", n, tt.phase == state.BootJoined, tt.taints)
			}
			if n != nil && (n.Name != i.PrivateDNSName || i.NodeName != n.Name || n.Labels[corev1.LabelArchStable] != "amd64") {
				t.Errorf("node %s (labels %v) of instance %s (%s, node %q)", n.Name, n.Labels, id, i.PrivateDNSName, i.NodeName)
			}
		})
	}
}

// S1: the cluster has no access entry for the node role and aws-auth maps the controller's. The
// kubelet is refused and keeps retrying; once the node role is mapped, the next retry joins.
func TestUnmappedNodeRoleNeverJoins(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	_ = e.state.Update(func(w *state.World) error {
		w.Regions[e.region].Clusters["demo"].AccessEntries = map[string]*state.AccessEntry{}
		return nil
	})
	e.api.ConfigMapFound = true
	e.api.MapRoles = "- rolearn: arn:aws:iam::111122223333:role/JoinerControllerRole\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeT2Small, "/etc/eks/bootstrap.sh demo")
	e.boot(t)
	console := e.console(t, id)
	if !strings.Contains(console, "Unable to register node with API server") || !strings.Contains(console, "Unauthorized") {
		t.Errorf("console:\n%s", console)
	}
	i := e.instance(id)
	if i.BootPhase != state.BootNotJoined || i.BootReason != boot.ReasonUnauthorized || i.BootRetryAt == nil {
		t.Fatalf("boot phase %q reason %q retry at %v, want %q %q with a retry", i.BootPhase, i.BootReason, i.BootRetryAt, state.BootNotJoined, boot.ReasonUnauthorized)
	}
	// The kubelet retries on the clock and is refused again; the bootstrap does not run again.
	e.clock.Step(kubelets.RegisterRetryEvery)
	if err := e.kubelets.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := e.console(t, id)
	if strings.Count(again, "Unable to register node") != 2 || strings.Count(again, "Cloud-init") != 1 {
		t.Errorf("console after one retry:\n%s", again)
	}
	if len(e.api.Registered) != 0 {
		t.Errorf("an unmapped role registered %d nodes", len(e.api.Registered))
	}
	// Mapping the node role lets the next retry join.
	e.api.MapRoles += "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"
	e.clock.Step(kubelets.RegisterRetryEvery)
	if err := e.kubelets.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if i := e.instance(id); i.BootPhase != state.BootJoined || i.BootRetryAt != nil || e.registered(id) == nil {
		t.Errorf("after mapping the role: phase %q retry at %v, registered %v", i.BootPhase, i.BootRetryAt, e.registered(id))
	}
}

// A kubelet refused for hours fills the console; GetConsoleOutput returns the most recent 64 KiB.
func TestConsoleKeepsTheMostRecent64KiB(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	_ = e.state.Update(func(w *state.World) error {
		w.Regions[e.region].Clusters["demo"].AccessEntries = map[string]*state.AccessEntry{}
		return nil
	})
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeT3Medium, "/etc/eks/bootstrap.sh demo")
	e.boot(t)
	for range 500 {
		e.clock.Step(kubelets.RegisterRetryEvery)
		if err := e.kubelets.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	console := e.console(t, id)
	if len(console) > 64<<10 || len(console) < 60<<10 {
		t.Errorf("console is %d bytes, want just under 64 KiB", len(console))
	}
	if strings.Contains(console, "Cloud-init") || !strings.HasSuffix(strings.TrimSpace(console), `node="`+e.instance(id).PrivateDNSName+`"`) {
		t.Errorf("console does not end with the latest attempts:\n%s", console[len(console)-500:])
	}
}

// TestSeededTimingsDriveTheLifecycle runs one instance through a world seeded with the local
// stack's fast timings: each step takes exactly its timing, not the defaults.
func TestSeededTimingsDriveTheLifecycle(t *testing.T) {
	seed := state.DefaultSeed()
	seed.Timings = state.Timings{PendingFor: time.Second, BootDelay: 3 * time.Second, ShuttingDownFor: 2 * time.Second}
	e := newSeededEnv(t, seed)
	f := e.fixture(t)
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeT3Medium, "/etc/eks/bootstrap.sh demo")
	steps := []struct {
		after     time.Duration
		terminate bool
		state     string
		phase     string
	}{
		{after: 999 * time.Millisecond, state: state.InstancePending},
		{after: time.Millisecond, state: state.InstanceRunning},
		{after: 2999 * time.Millisecond, state: state.InstanceRunning},
		{after: time.Millisecond, state: state.InstanceRunning, phase: state.BootJoined},
		{terminate: true, state: state.InstanceShuttingDown, phase: state.BootJoined},
		{after: 1999 * time.Millisecond, state: state.InstanceShuttingDown, phase: state.BootJoined},
		{after: time.Millisecond, state: state.InstanceTerminated, phase: state.BootJoined},
	}
	var elapsed time.Duration
	for _, s := range steps {
		e.clock.Step(s.after)
		elapsed += s.after
		if s.terminate {
			if _, err := e.ec2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.kubelets.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if i := e.instance(id); i.State != s.state || i.BootPhase != s.phase {
			t.Errorf("after %s: state %q boot phase %q, want %q %q", elapsed, i.State, i.BootPhase, s.state, s.phase)
		}
	}
}
