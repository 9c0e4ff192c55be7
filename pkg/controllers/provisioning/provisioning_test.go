package provisioning_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
)

const (
	idle = time.Second
	max  = 10 * time.Second
)

type harness struct {
	c        *provisioning.Controller
	clock    *clocktesting.FakeClock
	events   *recorder
	registry *prometheus.Registry
	cloud    *fake.CloudProvider
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{
		clock:    clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		events:   &recorder{},
		registry: prometheus.NewRegistry(),
		cloud:    &fake.CloudProvider{InstanceTypes: instanceTypes()},
	}
	var err error
	h.c, err = provisioning.NewController(env.Client, cluster.New(env.Client, false), h.cloud, h.clock, h.events, h.registry, idle, max)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// runBatch triggers the controller, lets the idle window pass and reconciles.
func (h *harness) runBatch(t *testing.T) {
	t.Helper()
	h.c.Trigger()
	h.clock.Step(idle)
	res, err := h.c.Reconcile(t.Context(), reconcile.Request{})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if res.RequeueAfter != 0 {
		t.Fatalf("Reconcile asked to wait %s after the idle window passed", res.RequeueAfter)
	}
}

func nodeClaims(t *testing.T) []v1.NodeClaim {
	t.Helper()
	var list v1.NodeClaimList
	if err := env.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func requirement(nc *v1.NodeClaim, key string) *v1.NodeSelectorRequirementWithMinValues {
	for i := range nc.Spec.Requirements {
		if nc.Spec.Requirements[i].Key == key {
			return &nc.Spec.Requirements[i]
		}
	}
	return nil
}

func TestPendingPodsBecomeNodeClaims(t *testing.T) {
	reset(t)
	h := newHarness(t)
	np := nodePool("default", func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "example.com/dedicated", Effect: corev1.TaintEffectNoSchedule}}
	})
	tolerate := func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/dedicated", Operator: corev1.TolerationOpExists}}
	}
	create(t, np, pendingPod("a", "500m", "1Gi", tolerate), pendingPod("b", "500m", "1Gi", tolerate), pendingPod("c", "500m", "1Gi", tolerate))
	h.runBatch(t)

	claims := nodeClaims(t)
	if len(claims) != 1 {
		t.Fatalf("got %d NodeClaims, want 1 holding the three pods", len(claims))
	}
	nc := &claims[0]
	checkNodeClaim(t, nc, np)
	var nominated []string
	for _, e := range h.events.byReason(provisioning.ReasonNominated) {
		if e.Related != nc.Name {
			t.Errorf("event %+v names another NodeClaim than %s", e, nc.Name)
		}
		nominated = append(nominated, e.Regarding)
	}
	slices.Sort(nominated)
	if diff := cmp.Diff([]string{"a", "b", "c"}, nominated); diff != "" {
		t.Errorf("Nominated pods (-want +got):\n%s", diff)
	}
	created, err := h.registryValue("karpenter_nodeclaims_created_total", map[string]string{"nodepool": "default", "reason": "provisioned", "min_values_relaxed": "false"})
	if err != nil || created != 1 {
		t.Errorf("karpenter_nodeclaims_created_total = %v (%v), want 1", created, err)
	}
}

// checkNodeClaim checks what a NodeClaim made from np for the three pods of
// TestPendingPodsBecomeNodeClaims must carry.
func checkNodeClaim(t *testing.T, nc *v1.NodeClaim, np *v1.NodePool) {
	t.Helper()
	if !strings.HasPrefix(nc.Name, "default-") {
		t.Errorf("name %q does not start with the NodePool's", nc.Name)
	}
	if diff := cmp.Diff(map[string]string{v1.NodePoolLabelKey: "default", "example.com/team": "default"}, pick(nc.Labels, v1.NodePoolLabelKey, "example.com/team")); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got := requirement(nc, corev1.LabelInstanceTypeStable); got == nil || got.Operator != v1.NodeSelectorOpIn || !slices.Equal(got.Values, []string{"small.2x", "large.8x"}) {
		t.Errorf("instance-type requirement = %+v, want In [small.2x large.8x] (cheapest first)", got)
	}
	if got := requirement(nc, v1.CapacityTypeLabelKey); got == nil || !slices.Equal(got.Values, []string{v1.CapacityTypeOnDemand}) {
		t.Errorf("capacity-type requirement = %+v, want the NodePool's on-demand", got)
	}
	if cpu := nc.Spec.Resources.Requests[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("1500m")) != 0 {
		t.Errorf("requests cpu = %s, want 1500m", cpu.String())
	}
	if mem := nc.Spec.Resources.Requests[corev1.ResourceMemory]; mem.Cmp(resource.MustParse("3Gi")) != 0 {
		t.Errorf("requests memory = %s, want 3Gi", mem.String())
	}
	if nc.Spec.NodeClassRef == nil || nc.Spec.NodeClassRef.Name != "default" {
		t.Errorf("nodeClassRef = %+v, want the template's", nc.Spec.NodeClassRef)
	}
	if !slices.Equal(nc.Finalizers, []string{v1.TerminationFinalizer}) {
		t.Errorf("finalizers = %v", nc.Finalizers)
	}
	if len(nc.OwnerReferences) != 1 || nc.OwnerReferences[0].Kind != "NodePool" || nc.OwnerReferences[0].UID != np.UID {
		t.Errorf("owner references = %+v, want the NodePool", nc.OwnerReferences)
	}
	if nc.Annotations[v1.NodePoolHashAnnotationKey] != np.Hash() || nc.Annotations[v1.NodePoolHashVersionAnnotationKey] != v1.NodePoolHashVersion {
		t.Errorf("annotations = %v, want the NodePool hash", nc.Annotations)
	}
	if len(nc.Spec.Taints) != 1 || nc.Spec.Taints[0].Key != "example.com/dedicated" {
		t.Errorf("taints = %v, want the template's", nc.Spec.Taints)
	}
}

func pick(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// registryValue reads one sample of a metric from the harness's registry.
func (h *harness) registryValue(metric string, labels map[string]string) (float64, error) {
	families, err := h.registry.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue samples
				}
			}
			if m.Counter != nil {
				return m.Counter.GetValue(), nil
			}
			return m.Gauge.GetValue(), nil
		}
	}
	return 0, nil
}

func TestBatchWindow(t *testing.T) {
	reset(t)
	h := newHarness(t)
	create(t, nodePool("default"), pendingPod("a", "1", "1Gi"))
	ctx := t.Context()
	reconcileWants := func(want time.Duration) {
		t.Helper()
		res, err := h.c.Reconcile(ctx, reconcile.Request{})
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != want {
			t.Fatalf("RequeueAfter = %s, want %s", res.RequeueAfter, want)
		}
	}

	if res, err := h.c.Reconcile(ctx, reconcile.Request{}); err != nil || res.RequeueAfter != 0 || len(nodeClaims(t)) != 0 {
		t.Fatalf("Reconcile without a trigger = %+v, %v and %d NodeClaims; want nothing done", res, err, len(nodeClaims(t)))
	}
	h.c.Trigger()
	reconcileWants(idle)
	// Pods keep arriving every 900ms: the idle window keeps moving until the max window closes.
	for elapsed := 900 * time.Millisecond; elapsed < max; elapsed += 900 * time.Millisecond {
		h.clock.Step(900 * time.Millisecond)
		h.c.Trigger()
		if want := min(idle, max-elapsed); want > 0 {
			reconcileWants(want)
		}
		if n := len(nodeClaims(t)); n != 0 {
			t.Fatalf("%d NodeClaims created %s into the batch, before it closed", n, elapsed)
		}
	}
	h.clock.SetTime(h.clock.Now().Add(max)) // well past the max window
	reconcileWants(0)
	if n := len(nodeClaims(t)); n != 1 {
		t.Fatalf("got %d NodeClaims once the max window closed, want 1", n)
	}
	// The batch is taken: nothing more happens until the next trigger.
	reconcileWants(0)
	if n := len(nodeClaims(t)); n != 1 {
		t.Fatalf("got %d NodeClaims after a reconcile without trigger, want 1", n)
	}
}

func TestLimitsCountInFlightNodeClaims(t *testing.T) {
	reset(t)
	h := newHarness(t)
	np := nodePool("limited", func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("4")}
	})
	create(t, np)
	// An in-flight NodeClaim of the pool that may launch as small.2x: 2 of the 4 cpus.
	inFlight := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "limited-inflight", Labels: map[string]string{v1.NodePoolLabelKey: "limited"}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"small.2x"}}},
			Resources:    v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			NodeClassRef: np.Spec.Template.Spec.NodeClassRef,
		},
	}
	create(t, inFlight)
	// Four pods of 900m: two fit a small.2x, the other two would need a third small.2x (or a
	// large.8x), beyond the limit.
	create(t, pendingPod("a", "900m", "1Gi"), pendingPod("b", "900m", "1Gi"), pendingPod("c", "900m", "1Gi"), pendingPod("d", "900m", "1Gi"))
	h.runBatch(t)

	var created []v1.NodeClaim
	for _, nc := range nodeClaims(t) {
		if nc.Name != inFlight.Name {
			created = append(created, nc)
		}
	}
	if len(created) != 1 {
		t.Fatalf("created %d NodeClaims, want 1 (the limit leaves room for one small.2x)", len(created))
	}
	if got := requirement(&created[0], corev1.LabelInstanceTypeStable); got == nil || !slices.Equal(got.Values, []string{"small.2x"}) {
		t.Errorf("instance types = %+v, want only small.2x (large.8x would exceed the limit)", got)
	}
	failed := h.events.byReason(provisioning.ReasonFailedScheduling)
	if len(failed) != 2 {
		t.Fatalf("FailedScheduling events = %+v, want 2", failed)
	}
	for _, e := range failed {
		if !strings.Contains(e.Note, `nodepool "limited": LimitsExceeded`) {
			t.Errorf("FailedScheduling note %q does not give the limit as the reason", e.Note)
		}
	}
}

func TestNoDuplicateNodeClaimsAcrossRestarts(t *testing.T) {
	reset(t)
	h := newHarness(t)
	create(t, nodePool("default"))
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		create(t, pendingPod(n, "1500m", "2Gi"))
	}
	h.runBatch(t)
	first := nodeClaims(t)
	if len(first) == 0 {
		t.Fatal("no NodeClaim created")
	}
	// Again with the same controller, and with a new one as after a restart: the pods are still
	// pending (no node launched them), and the in-flight NodeClaims already cover them.
	h.runBatch(t)
	restarted := newHarness(t)
	restarted.runBatch(t)
	if got := nodeClaims(t); len(got) != len(first) {
		t.Fatalf("got %d NodeClaims after two more batches, want the first batch's %d", len(got), len(first))
	}
	if n := len(restarted.events.byReason(provisioning.ReasonNominated)); n != 5 {
		t.Errorf("the restarted controller nominated %d pods to in-flight NodeClaims, want 5", n)
	}
	if n := len(restarted.events.byReason(provisioning.ReasonFailedScheduling)); n != 0 {
		t.Errorf("the restarted controller reported %d pods unschedulable, want 0", n)
	}
}

func TestFailedSchedulingNamesEachNodePool(t *testing.T) {
	reset(t)
	h := newHarness(t)
	notReady := nodePool("not-ready")
	create(t, nodePool("default"), notReady)
	meta.SetStatusCondition(&notReady.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeNodeClassReady, Status: metav1.ConditionFalse, Reason: "NotReady", Message: "subnets not found"})
	if err := env.Client.Status().Update(t.Context(), notReady); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("arm", "1", "1Gi", func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"}
	}))
	h.runBatch(t)

	if n := len(nodeClaims(t)); n != 0 {
		t.Fatalf("created %d NodeClaims for a pod no NodePool fits", n)
	}
	failed := h.events.byReason(provisioning.ReasonFailedScheduling)
	if len(failed) != 1 || failed[0].Regarding != "arm" {
		t.Fatalf("FailedScheduling events = %+v, want one on pod arm", failed)
	}
	for _, want := range []string{`nodepool "default": IncompatibleRequirements`, `nodepool "not-ready": NodeClassNotReady: its node class is not ready: subnets not found`} {
		if !strings.Contains(failed[0].Note, want) {
			t.Errorf("FailedScheduling note %q lacks %q", failed[0].Note, want)
		}
	}
	if got := h.cloud.CallsTo(fake.MethodGetInstanceTypes); got != 1 {
		t.Errorf("GetInstanceTypes called %d times, want once (not for the NodePool whose node class is not ready)", got)
	}
	if got, err := h.registryValue("karpenter_scheduler_unschedulable_pods_count", map[string]string{"controller": "provisioner"}); err != nil || got != 1 {
		t.Errorf("karpenter_scheduler_unschedulable_pods_count = %v (%v), want 1", got, err)
	}
}

// TestPodsWaitingOnANodePoolWhoseNodesDoNotJoin: pods nominated to a NodePool whose
// NodeRegistrationHealthy is False are told which cause holds them; pods of a healthy NodePool are
// not.
func TestPodsWaitingOnANodePoolWhoseNodesDoNotJoin(t *testing.T) {
	reset(t)
	h := newHarness(t)
	broken := nodePool("broken")
	create(t, broken, nodePool("default"))
	meta.SetStatusCondition(&broken.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeNodeRegistrationHealthy, Status: metav1.ConditionFalse,
		Reason: "NodeRoleNotAuthorized", Message: "role KarpenterNodeRole-demo is not mapped in aws-auth"})
	if err := env.Client.Status().Update(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("held", "1", "1Gi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"example.com/team": "broken"} }),
		pendingPod("free", "1", "1Gi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"example.com/team": "default"} }))
	h.runBatch(t)

	warned := h.events.byReason(provisioning.ReasonNodePoolNotJoining)
	if len(warned) != 1 || warned[0].Regarding != "held" || warned[0].Related != "broken" {
		t.Fatalf("%s events = %+v, want one on pod held, related to nodepool broken", provisioning.ReasonNodePoolNotJoining, warned)
	}
	if want := "Pod waits on nodepool broken, whose nodes fail to join: NodeRoleNotAuthorized: role KarpenterNodeRole-demo is not mapped in aws-auth"; warned[0].Note != want {
		t.Errorf("note = %q, want %q", warned[0].Note, want)
	}

	// The NodeClaim launched for held has a certain cause of its own: the next batch names it.
	var held v1.NodeClaim
	for _, nc := range nodeClaims(t) {
		if nc.Labels[v1.NodePoolLabelKey] == "broken" {
			held = nc
		}
	}
	held.Status.ProviderID = "fake:///test-zone-a/i-held"
	held.Status.Conditions = []metav1.Condition{
		{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: metav1.Now()},
		{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionFalse, Reason: "UnregisteredTaintMissing", Message: "fix the userData", LastTransitionTime: metav1.Now()},
	}
	if err := env.Client.Status().Update(t.Context(), &held); err != nil {
		t.Fatal(err)
	}
	before := len(warned)
	h.runBatch(t)
	warned = h.events.byReason(provisioning.ReasonNodePoolNotJoining)[before:]
	want := "Pod waits on nodeclaim " + held.Name + ", whose node fails to join: UnregisteredTaintMissing: fix the userData"
	if len(warned) != 1 || warned[0].Regarding != "held" || warned[0].Note != want {
		t.Errorf("%s events = %+v, want one on pod held: %q", provisioning.ReasonNodePoolNotJoining, warned, want)
	}
}

func TestDaemonSetOverhead(t *testing.T) {
	reset(t)
	h := newHarness(t)
	create(t, nodePool("default"), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				}}}},
			},
		},
	})
	// 2 x 800m fit a small.2x alone (1600m of 2), but not with the agent's 500m.
	create(t, pendingPod("a", "800m", "1Gi"), pendingPod("b", "800m", "1Gi"))
	h.runBatch(t)
	claims := nodeClaims(t)
	if len(claims) != 1 {
		t.Fatalf("got %d NodeClaims, want 1", len(claims))
	}
	if cpu := claims[0].Spec.Resources.Requests[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("2100m")) != 0 {
		t.Errorf("requests cpu = %s, want 2100m (the pods and the agent)", cpu.String())
	}
	if got := requirement(&claims[0], corev1.LabelInstanceTypeStable); got == nil || !slices.Equal(got.Values, []string{"large.8x"}) {
		t.Errorf("instance types = %+v, want only large.8x", got)
	}

	// The NodeClaim launches as a small.2x (2 cpu) and has not registered yet: the agent will
	// take 500m of it, so a new 800m pod does not fit beside pods a and b... and none of them
	// may be moved. A restarted controller must count the agent and launch a second node.
	launched := &claims[0]
	launched.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	launched.Status.Capacity = launched.Status.Allocatable
	launched.Status.ProviderID = "fake:///test-zone-a/i-1"
	if err := env.Client.Status().Update(t.Context(), launched); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("c", "800m", "1Gi"))
	restarted := newHarness(t)
	restarted.runBatch(t)
	if n := len(nodeClaims(t)); n != 2 {
		t.Errorf("got %d NodeClaims, want 2: pod a and the agent leave no room for pod c on the first", n)
	}
}

func TestTransientCloudErrorRetriesTheBatch(t *testing.T) {
	reset(t)
	h := newHarness(t)
	h.cloud.ErrorsFor = map[string][]error{fake.MethodGetInstanceTypes: {errors.New("throttled")}}
	create(t, nodePool("default"), pendingPod("a", "1", "1Gi"))
	h.c.Trigger()
	h.clock.Step(idle)
	if _, err := h.c.Reconcile(t.Context(), reconcile.Request{}); err == nil || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("Reconcile error = %v, want the cloud's throttled", err)
	}
	if n := len(nodeClaims(t)); n != 0 {
		t.Fatalf("got %d NodeClaims without instance types", n)
	}
	// The failed batch is due again at once: the requeue that follows the error runs it.
	res, err := h.c.Reconcile(t.Context(), reconcile.Request{})
	if err != nil || res.RequeueAfter != 0 {
		t.Fatalf("retry Reconcile = %+v, %v", res, err)
	}
	if n := len(nodeClaims(t)); n != 1 {
		t.Fatalf("got %d NodeClaims after the retry, want 1", n)
	}
}

func TestRegisteredNodeNotInitializedTakesPods(t *testing.T) {
	reset(t)
	h := newHarness(t)
	np := nodePool("default")
	create(t, np)
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "default-registered", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements:  []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"large.8x"}}},
			StartupTaints: []corev1.Taint{{Key: "example.com/cni-not-ready", Effect: corev1.TaintEffectNoSchedule}},
			NodeClassRef:  np.Spec.Template.Spec.NodeClassRef,
		},
	}
	create(t, nc)
	nc.Status.ProviderID = "fake:///test-zone-a/i-2"
	if err := env.Client.Status().Update(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	// The Node registered with the unregistered and startup taints and is not Ready yet.
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-2", Labels: map[string]string{v1.NodePoolLabelKey: "default", corev1.LabelInstanceTypeStable: "large.8x"}},
		Spec: corev1.NodeSpec{ProviderID: "fake:///test-zone-a/i-2", Taints: []corev1.Taint{
			v1.UnregisteredNoExecuteTaint(),
			{Key: "example.com/cni-not-ready", Effect: corev1.TaintEffectNoSchedule},
			{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		}},
	}
	create(t, node)
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node.Status.Capacity = node.Status.Allocatable
	if err := env.Client.Status().Update(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("a", "1", "1Gi"))
	h.runBatch(t)

	if n := len(nodeClaims(t)); n != 1 {
		t.Errorf("got %d NodeClaims, want only the registered one: its taints are those of a starting node", n)
	}
	nominated := h.events.byReason(provisioning.ReasonNominated)
	if len(nominated) != 1 || nominated[0].Regarding != "a" || nominated[0].Related != nc.Name {
		t.Errorf("Nominated events = %+v, want pod a on %s", nominated, nc.Name)
	}
}

// TestInitializedNodeWithAgentTaintTakesPods: a node initialized while Cilium's agent taint, which
// the NodePool does not declare, is still on it must not cause another launch (each new node
// would join with the same taint: a loop).
func TestInitializedNodeWithAgentTaintTakesPods(t *testing.T) {
	reset(t)
	h := newHarness(t)
	np := nodePool("default")
	create(t, np)
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "default-cilium", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"large.8x"}}},
			NodeClassRef: np.Spec.Template.Spec.NodeClassRef,
		},
	}
	create(t, nc)
	nc.Status.ProviderID = "fake:///test-zone-a/i-3"
	if err := env.Client.Status().Update(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-3", Labels: map[string]string{v1.NodePoolLabelKey: "default", corev1.LabelInstanceTypeStable: "large.8x",
			v1.NodeRegisteredLabelKey: "true", v1.NodeInitializedLabelKey: "true"}},
		Spec: corev1.NodeSpec{ProviderID: "fake:///test-zone-a/i-3", Taints: []corev1.Taint{
			{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute},
		}},
	}
	create(t, node)
	// The API server adds the not-ready taint at creation; the node is Ready now and only
	// Cilium's taint is left.
	node.Spec.Taints = []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}}
	if err := env.Client.Update(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node.Status.Capacity = node.Status.Allocatable
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if err := env.Client.Status().Update(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("a", "1", "1Gi"))
	h.runBatch(t)

	if n := len(nodeClaims(t)); n != 1 {
		t.Errorf("got %d NodeClaims, want only the existing one: an agent taint goes when its agent starts", n)
	}
	if failed := h.events.byReason(provisioning.ReasonFailedScheduling); len(failed) != 0 {
		t.Errorf("FailedScheduling events = %+v, want none: the pod fits the node", failed)
	}
}

func TestLimitsCountNodeClaimsBeingDeleted(t *testing.T) {
	reset(t)
	h := newHarness(t)
	np := nodePool("limited", func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("2")}
	})
	create(t, np)
	// A NodeClaim of the pool being deleted (held by its finalizer), launched as small.2x: it
	// still holds the pool's 2 cpus until its instance is gone.
	leaving := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "limited-leaving", Labels: map[string]string{v1.NodePoolLabelKey: "limited"}, Finalizers: []string{v1.TerminationFinalizer}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"small.2x"}}},
			NodeClassRef: np.Spec.Template.Spec.NodeClassRef,
		},
	}
	create(t, leaving)
	leaving.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	leaving.Status.Allocatable = leaving.Status.Capacity
	leaving.Status.ProviderID = "fake:///test-zone-a/i-3"
	if err := env.Client.Status().Update(t.Context(), leaving); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), leaving); err != nil {
		t.Fatal(err)
	}
	create(t, pendingPod("a", "500m", "1Gi"))
	h.runBatch(t)

	if n := len(nodeClaims(t)); n != 1 {
		t.Errorf("got %d NodeClaims, want only the one being deleted: the limit is used up until it is gone", n)
	}
	if n := len(h.events.byReason(provisioning.ReasonNominated)); n != 0 {
		t.Errorf("%d pods nominated to a NodeClaim being deleted", n)
	}
	failed := h.events.byReason(provisioning.ReasonFailedScheduling)
	if len(failed) != 1 || !strings.Contains(failed[0].Note, `nodepool "limited": LimitsExceeded`) {
		t.Errorf("FailedScheduling events = %+v, want pod a with LimitsExceeded", failed)
	}
}
