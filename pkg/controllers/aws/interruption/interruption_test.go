package interruption_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/testkit"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/controllers/aws/interruption"
)

// world is the emulated AWS with the AWS provider wired over it as the operator wires it, and
// a Ready EC2NodeClass in the test API server.
type world struct {
	url   string
	clock *clocktesting.FakeClock
	state *state.State
	aws   *provider.AWS
	sqs   *sqs.Client
}

func newWorld(t *testing.T) *world {
	t.Helper()
	e := emutest.Start(t)
	clk, st, clients := e.Clock, e.State, e.Clients
	cluster, err := e.ClusterWithCA()
	if err != nil {
		t.Fatal(err)
	}
	a := provider.Build(env.Client, clients, provider.Options{Cluster: cluster, Region: "us-west-2", KubernetesVersion: "1.33"}, clk)
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: awsv1.EC2NodeClassSpec{
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		Role:                       "KarpenterNodeRole-demo",
	}}
	if err := a.NodeClasses.Resolve(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	status := nc.Status
	create(t, nc)
	nc.Status = status
	if err := env.Client.Status().Update(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	if err := a.Prices.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &world{url: e.URL, clock: clk, state: st, aws: a, sqs: clients.SQS}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
		t.Cleanup(func() {
			ctx := context.Background()
			if o.GetFinalizers() != nil {
				_ = env.Client.Patch(ctx, o, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
			}
			_ = env.Client.Delete(ctx, o)
		})
	}
}

// launch launches a spot m5.large in us-west-2a or us-west-2b for a NodeClaim and writes what
// lifecycle would (labels and providerID) to the API server, with a Node for its instance.
func (w *world) launch(t *testing.T, name string) *v1.NodeClaim {
	t.Helper()
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "spot"},
			Finalizers: []string{v1.TerminationFinalizer}},
		Spec: v1.NodeClaimSpec{
			NodeClassRef: &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "default"},
			Requirements: []v1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m5.large"}},
				{Key: v1.CapacityTypeLabelKey, Operator: v1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}},
				{Key: corev1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"us-west-2a", "us-west-2b"}},
			},
		},
	}
	launched, err := w.aws.CloudProvider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	create(t, claim)
	for k, v := range launched.Labels {
		claim.Labels[k] = v
	}
	if err := env.Client.Update(t.Context(), claim); err != nil {
		t.Fatal(err)
	}
	claim.Status.ProviderID = launched.Status.ProviderID
	if err := env.Client.Status().Update(t.Context(), claim); err != nil {
		t.Fatal(err)
	}
	create(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: launched.Status.ProviderID}})
	return claim
}

// pool is where a NodeClaim's instance came from.
func pool(claim *v1.NodeClaim) state.Pool {
	return state.Pool{InstanceType: claim.Labels[corev1.LabelInstanceTypeStable], Zone: claim.Labels[corev1.LabelTopologyZone],
		CapacityType: claim.Labels[v1.CapacityTypeLabelKey]}
}

func instanceID(claim *v1.NodeClaim) string {
	return claim.Status.ProviderID[strings.LastIndex(claim.Status.ProviderID, "/")+1:]
}

// event asks the emulator to send an EC2 event about the NodeClaim's instance.
func (w *world) event(t *testing.T, claim *v1.NodeClaim, kind string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, w.url+"/_awsemu/events",
		strings.NewReader(`{"instanceID": "`+instanceID(claim)+`", "kind": "`+kind+`"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST event: %s", resp.Status)
	}
}

// dump logs the registry's interruption metrics, for a failed test.
func dump(t *testing.T, reg *prometheus.Registry) {
	families, _ := reg.Gather()
	for _, f := range families {
		for _, m := range f.GetMetric() {
			t.Logf("%s %v %v", f.GetName(), m.GetLabel(), m.GetCounter().GetValue())
		}
	}
}

// counter is the value of a counter in reg, 0 when absent.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// histogramCount is the sample count of an unlabelled histogram in reg.
func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := labels[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

// hasEvent reports whether an event with the reason regards the named object.
func hasEvent(t *testing.T, kind, name, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
			return true
		}
	}
	return false
}

// TestSpotInterruption runs the controller in a manager against the emulator's queue: a
// malformed message and the instances' own state changes are deleted without effect; a
// rebalance recommendation only records an event; a spot interruption warning gets the
// NodeClaim deleted, and the next launch avoids that spot offering while the earlier one would
// have taken it; the emulator reclaiming the instance two minutes later changes nothing more; a
// scheduled change deletes the NodeClaim it names.
func TestSpotInterruption(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	reg := w.start(t)
	url, err := w.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String("not an event")}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, 30*time.Second, "the malformed message counted and deleted", func() bool {
		return counter(t, reg, "karpenter_interruption_received_messages_total", map[string]string{"message_type": "malformed"}) == 1 &&
			counter(t, reg, "karpenter_interruption_deleted_messages_total", nil) == 1
	})

	victim := w.launch(t, "victim")
	probe := w.launch(t, "probe")
	if pool(probe) != pool(victim) {
		t.Fatalf("two launches of one NodeClaim shape chose %+v and %+v: the test needs the choice to be the same", pool(victim), pool(probe))
	}
	w.clock.Step(state.PendingFor) // both instances run: two state-change notifications that ask for nothing
	testkit.Poll(t, 30*time.Second, "the running notifications deleted as no-ops", func() bool {
		return counter(t, reg, "karpenter_interruption_received_messages_total", map[string]string{"message_type": "no_op"}) == 2
	})

	w.event(t, probe, state.EventRebalance)
	testkit.Poll(t, 30*time.Second, "a rebalance event on the probe", func() bool {
		return hasEvent(t, "NodeClaim", "probe", "SpotRebalanceRecommendation") && hasEvent(t, "Node", "probe", "SpotRebalanceRecommendation")
	})

	w.event(t, victim, state.EventSpotInterruption)
	checkInterrupted(t, w, reg, victim, probe)

	next := w.launch(t, "next")
	if p := pool(victim); pool(next) == p {
		t.Errorf("the launch after the interruption chose the interrupted offering %+v again", p)
	}
	if next.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeSpot {
		t.Errorf("the launch after the interruption is %s, want spot in another zone", next.Labels[v1.CapacityTypeLabelKey])
	}
	checkReclaimed(t, w, reg, victim)

	// AWS Health schedules the retirement of the probe's instance: it goes too.
	w.event(t, probe, state.EventScheduledChange)
	testkit.Poll(t, 30*time.Second, "the probe NodeClaim deleted on a scheduled change", func() bool {
		got := &v1.NodeClaim{}
		return env.Client.Get(ctx, client.ObjectKeyFromObject(probe), got) == nil && got.DeletionTimestamp != nil &&
			hasEvent(t, "NodeClaim", "probe", "InstanceUnhealthy") && hasEvent(t, "Node", "probe", "InstanceUnhealthy")
	})
	if n := counter(t, reg, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "scheduled_change"}); n != 1 {
		t.Errorf("karpenter_nodeclaims_disrupted_total{reason=scheduled_change} = %v, want 1", n)
	}
}

// start runs the controller on the emulator's queue "demo" in a manager, and returns the
// registry of its metrics.
func (w *world) start(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	t.Cleanup(func() {
		if t.Failed() {
			dump(t, reg)
		}
	})
	err := env.StartManager(t.Context(), func(ctx context.Context, mgr manager.Manager) error {
		c, err := interruption.NewController(mgr.GetClient(), interruption.NewQueue(w.sqs, "demo"), w.aws.Unavailable, w.clock,
			mgr.GetEventRecorder("karpenter"), reg)
		if err != nil {
			return err
		}
		return c.Register(ctx, mgr)
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// checkInterrupted waits for the victim's spot interruption to be handled: the NodeClaim deleted
// with events on it and its Node, its offering unavailable, and the probe (only recommended to
// rebalance) kept.
func checkInterrupted(t *testing.T, w *world, reg *prometheus.Registry, victim, probe *v1.NodeClaim) {
	t.Helper()
	ctx := t.Context()
	testkit.Poll(t, 30*time.Second, "the victim NodeClaim deleted", func() bool {
		got := &v1.NodeClaim{}
		return env.Client.Get(ctx, client.ObjectKeyFromObject(victim), got) == nil && got.DeletionTimestamp != nil
	})
	for _, kind := range []string{"NodeClaim", "Node"} {
		for _, reason := range []string{"SpotInterrupted", "TerminatingOnInterruption"} {
			testkit.Poll(t, 30*time.Second, reason+" on the victim "+kind, func() bool { return hasEvent(t, kind, "victim", reason) })
		}
	}
	p := pool(victim)
	if !w.aws.Unavailable.IsUnavailable(p.InstanceType, p.Zone, v1.CapacityTypeSpot) {
		t.Errorf("the interrupted offering %+v is not marked unavailable", p)
	}
	got := &v1.NodeClaim{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(probe), got); err != nil || got.DeletionTimestamp != nil {
		t.Errorf("the rebalance recommendation deleted the probe NodeClaim (%v)", err)
	}
	if n := counter(t, reg, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "spot_interrupted", "nodepool": "spot", "capacity_type": "spot", "consolidation_policy": "", "termination_mode": "graceful"}); n != 1 {
		t.Errorf("karpenter_nodeclaims_disrupted_total{reason=spot_interrupted} = %v, want 1", n)
	}
}

// checkReclaimed lets the emulator reclaim the victim's instance two minutes after the warning:
// its state changes are handled and deleted, and the NodeClaim already being deleted is left as
// it is.
func checkReclaimed(t *testing.T, w *world, reg *prometheus.Registry, victim *v1.NodeClaim) {
	t.Helper()
	w.clock.Step(state.SpotInterruptionNotice)
	testkit.Poll(t, 30*time.Second, "the reclaimed instance's state changes handled", func() bool {
		return counter(t, reg, "karpenter_interruption_received_messages_total", map[string]string{"message_type": "instance_terminated"}) >= 1
	})
	testkit.Poll(t, 30*time.Second, "every message deleted", func() bool {
		received := 0.0
		for _, kind := range []string{"malformed", "no_op", "rebalance_recommendation", "spot_interrupted", "instance_terminated"} {
			received += counter(t, reg, "karpenter_interruption_received_messages_total", map[string]string{"message_type": kind})
		}
		return received == counter(t, reg, "karpenter_interruption_deleted_messages_total", nil)
	})
	if n, want := histogramCount(t, reg, "karpenter_interruption_message_queue_duration_seconds"), counter(t, reg, "karpenter_interruption_deleted_messages_total", nil); float64(n) != want {
		t.Errorf("karpenter_interruption_message_queue_duration_seconds has %d samples, want one per message deleted (%v)", n, want)
	}
	if n := counter(t, reg, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "instance_terminated"}); n != 0 {
		t.Errorf("the NodeClaim already being deleted was deleted again on the state change (%v)", n)
	}
	if hasEvent(t, "NodeClaim", "victim", "InstanceTerminating") {
		t.Error("the reclaim of an instance whose NodeClaim is being deleted was reported as an InstanceTerminating event")
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(victim), &v1.NodeClaim{}); apierrors.IsNotFound(err) {
		t.Error("the victim NodeClaim went without its finalizer being released")
	}
}

// TestMissingQueue: a queue that does not exist is an error naming the fix, and the loop waits
// ErrorBackoff on its clock before trying again, returning when its context ends.
func TestMissingQueue(t *testing.T) {
	w := newWorld(t)
	clk := clocktesting.NewFakeClock(time.Now())
	c, err := interruption.NewController(env.Client, interruption.NewQueue(w.sqs, "nope"), w.aws.Unavailable, clk, nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Poll(t.Context()); err == nil || !strings.Contains(err.Error(), "interruption queue nope does not exist") {
		t.Fatalf("Poll = %v, want an error saying the queue does not exist", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	testkit.Poll(t, 30*time.Second, "the loop waiting ErrorBackoff", clk.HasWaiters)
	clk.Step(interruption.ErrorBackoff)
	testkit.Poll(t, 30*time.Second, "the loop waiting again after another failure", clk.HasWaiters)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v, want nil once its context ends", err)
	}
}
