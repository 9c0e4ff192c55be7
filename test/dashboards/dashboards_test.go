package dashboards_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testkit"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers"
	"github.com/joinerhq/joiner/pkg/operator"
)

// scrape returns the metric families the URL serves in the Prometheus text format.
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(strings.NewReader(string(raw)))
}

// dashboardSeries is one series a Karpenter dashboard queries: its name, the labels the query
// selects, filters or groups by (which the series must carry), the values some of them must have
// to be this test's, and what its value must satisfy.
type dashboardSeries struct {
	name   string
	labels []string
	match  map[string]string
	sane   func(v float64) bool
}

// value is a sample's value: a gauge's, a counter's, an untyped's, or a summary's or histogram's
// sample count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Summary != nil:
		return float64(m.GetSummary().GetSampleCount())
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	default:
		return m.GetUntyped().GetValue()
	}
}

// check returns "" when families hold a series of s with all its labels, the matching values
// and a sane value, else what is wrong.
func (s dashboardSeries) check(families map[string]*dto.MetricFamily) string {
	f, ok := families[s.name]
	if !ok {
		return s.name + " is not served"
	}
	var seen []string
series:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for _, l := range s.labels {
			if _, ok := got[l]; !ok {
				return fmt.Sprintf("%s lacks the label %s the dashboard queries: %v", s.name, l, got)
			}
		}
		for k, v := range s.match {
			if got[k] != v {
				continue series
			}
		}
		if s.sane(value(m)) {
			return ""
		}
		seen = append(seen, fmt.Sprintf("%v=%v", got, value(m)))
	}
	return fmt.Sprintf("%s has no series %v with a sane value; has %v", s.name, s.match, seen)
}

func positive(v float64) bool { return v > 0 }

// TestKarpenterDashboards runs the operator with the fake cloud provider, scales a NodePool up by
// one node (its Node registered as a kubelet would) and down again by consolidation, and checks,
// over HTTP /metrics, every series and label that Karpenter's capacity and performance
// dashboards (its getting-started Grafana dashboards) query.
func TestKarpenterDashboards(t *testing.T) {
	ctx := t.Context()
	metricsURL := startOperator(t)
	const pool = "dashboard"
	testkit.Create(t, env.Client,
		&awsv1.EC2NodeClass{
			ObjectMeta: metav1.ObjectMeta{Name: pool},
			Spec: awsv1.EC2NodeClassSpec{
				AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
				Role:                       "NodeRole",
				SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"k": "v"}}},
				SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"k": "v"}}},
			},
		},
		&v1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: pool},
			Spec: v1.NodePoolSpec{
				Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
					Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
					NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: pool},
				}},
				Disruption: v1.Disruption{ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized, ConsolidateAfter: v1.MustParseNillableDuration("0s")},
				Limits:     v1.Limits{corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourceMemory: resource.MustParse("400Gi")},
			},
		},
	)
	app := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard-app", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{v1.NodePoolLabelKey: pool},
			Containers: []corev1.Container{{Name: "app", Image: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			}}},
		},
	}
	testkit.Create(t, env.Client, app)
	app.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if err := env.Client.Status().Update(ctx, app); err != nil {
		t.Fatal(err)
	}

	// Scale-up: the NodeClaim launches, its Node joins, the pods run there.
	node := joinNode(ctx, t, pool)
	daemon := runPods(ctx, t, node, app)

	nodeDims := []string{"arch", "capacity_type", "instance_type", "nodepool", "zone"}
	ours := map[string]string{"nodepool": pool}
	cpu := func(extra map[string]string) map[string]string {
		out := map[string]string{"resource_type": "cpu", "nodepool": pool}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	expect := func(what string, series []dashboardSeries) {
		t.Helper()
		expectSeries(ctx, t, metricsURL, what, series)
	}
	// The capacity dashboard, after the scale-up.
	expect("after the scale-up", []dashboardSeries{
		{"karpenter_nodes_allocatable", append(nodeDims, "resource_type"), cpu(map[string]string{"arch": "amd64", "zone": "us-west-2a", "instance_type": "m7i.large", "capacity_type": "on-demand"}), between(1.93, 1.93)},
		{"karpenter_nodes_allocatable", append(nodeDims, "resource_type"), map[string]string{"resource_type": "memory", "nodepool": pool}, between(7<<30, 7<<30)},
		{"karpenter_nodes_total_pod_requests", append(nodeDims, "resource_type"), cpu(nil), between(1.1, 1.1)},
		{"karpenter_nodes_total_pod_requests", append(nodeDims, "resource_type"), map[string]string{"resource_type": "pods", "nodepool": pool}, between(2, 2)},
		{"karpenter_nodes_total_daemon_requests", append(nodeDims, "resource_type"), cpu(nil), between(0.1, 0.1)},
		{"karpenter_nodepools_usage", []string{"nodepool", "resource_type"}, cpu(nil), between(2, 2)},
		{"karpenter_nodepools_limit", []string{"nodepool", "resource_type"}, cpu(nil), between(100, 100)},
		{"karpenter_nodepools_limit", []string{"nodepool", "resource_type"}, map[string]string{"resource_type": "memory", "nodepool": pool}, between(400<<30, 400<<30)},
		{"karpenter_nodepools_cost_total", []string{"nodepool"}, ours, between(0.1, 0.1)},
		{"karpenter_nodes_created_total", []string{"nodepool"}, ours, between(1, 1)},
		{"karpenter_pods_state", []string{"phase", "arch", "capacity_type", "instance_type", "nodepool", "namespace", "node", "zone"},
			map[string]string{"name": "dashboard-app", "phase": "Running", "nodepool": pool, "node": node.Name, "zone": "us-west-2a", "ready": "true"}, between(1, 1)},
		{"karpenter_voluntary_disruption_eligible_nodes", []string{"reason"}, map[string]string{"reason": "underutilized"}, between(0, 1)},
		// Not on the dashboards, but Karpenter's budget gauges an operator alerts on.
		{"karpenter_nodepools_allowed_disruptions", []string{"nodepool", "reason"}, map[string]string{"nodepool": pool, "reason": "Empty"}, between(1, 1)},
		{"karpenter_nodepools_nodes_consuming_budgets", []string{"nodepool", "reason"}, map[string]string{"nodepool": pool, "reason": "Empty"}, between(0, 0)},
		{"karpenter_cloudprovider_instance_type_offering_price_estimate", []string{"instance_type", "capacity_type", "zone"},
			map[string]string{"instance_type": "m7i.large", "capacity_type": "on-demand", "zone": "us-west-2a"}, between(0.1, 0.1)},
		{"karpenter_cloudprovider_instance_type_offering_available", []string{"instance_type", "capacity_type", "zone"},
			map[string]string{"instance_type": "m7i.large", "capacity_type": "on-demand", "zone": "us-west-2a"}, between(1, 1)},
		// The performance dashboard.
		{"karpenter_pods_startup_duration_seconds", nil, nil, func(float64) bool { return true }},
		{"controller_runtime_reconcile_time_seconds", []string{"controller"}, map[string]string{"controller": "nodeclaim.lifecycle"}, positive},
		{"controller_runtime_reconcile_total", []string{"controller"}, map[string]string{"controller": "nodeclaim.lifecycle"}, positive},
	})

	// Scale-down: the application goes, consolidation removes the empty node.
	if err := env.Client.Delete(ctx, app, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	// The kubelet's part: the drain evicts the DaemonSet pod, which goes at once.
	testkit.Eventually(t, 60*time.Second, func() string {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(daemon), daemon); apierrors.IsNotFound(err) {
			return ""
		} else if err != nil {
			return err.Error()
		}
		if daemon.DeletionTimestamp == nil {
			return "the drain has not evicted the DaemonSet pod yet"
		}
		if err := env.Client.Delete(ctx, daemon, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			return err.Error()
		}
		return ""
	})
	expect("after consolidation", []dashboardSeries{
		{"karpenter_nodeclaims_disrupted_total", []string{"nodepool", "reason", "capacity_type", "consolidation_policy", "termination_mode"},
			map[string]string{"nodepool": pool, "reason": "empty", "consolidation_policy": "when_empty_or_underutilized", "termination_mode": "graceful"}, between(1, 1)},
		{"karpenter_voluntary_disruption_decisions_total", []string{"consolidation_type", "decision", "reason"},
			map[string]string{"consolidation_type": "empty", "decision": "delete", "reason": "empty"}, between(1, 1)},
		{"karpenter_voluntary_disruption_decisions_by_nodepool_total", []string{"nodepool", "consolidation_type", "decision", "reason"},
			map[string]string{"nodepool": pool, "consolidation_type": "empty", "decision": "delete"}, between(1, 1)},
		{"karpenter_nodes_terminated_total", []string{"nodepool", "zone"}, map[string]string{"nodepool": pool, "zone": "us-west-2a"}, between(1, 1)},
		{"karpenter_nodeclaims_terminated_total", []string{"nodepool", "capacity_type", "zone"}, ours, between(1, 1)},
		{"karpenter_nodes_termination_duration_seconds", []string{"nodepool"}, ours, between(1, 1)},
		{"karpenter_nodepools_cost_total", []string{"nodepool"}, ours, between(0, 0)},
	})
	families, err := scrape(ctx, metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"0", "0.5", "0.9", "0.99", "1"} {
		if !hasQuantile(families["karpenter_nodes_termination_duration_seconds"], q) || !hasQuantile(families["karpenter_pods_startup_duration_seconds"], q) {
			t.Errorf("a summary the performance dashboard reads lacks quantile %s", q)
		}
	}
	gone := dashboardSeries{"karpenter_nodes_allocatable", nil, map[string]string{"node_name": node.Name}, func(float64) bool { return true }}
	testkit.Poll(t, 30*time.Second, "the removed node's series gone", func() bool {
		families, err := scrape(ctx, metricsURL)
		return err == nil && gone.check(families) != ""
	})
}

// startOperator runs the operator with the fake cloud provider until the test ends and returns
// its /metrics URL.
func startOperator(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	opts := operator.Options{
		ClusterName: "test", BatchIdleDuration: 20 * time.Millisecond, BatchMaxDuration: 200 * time.Millisecond, LogLevel: "info",
		MetricsBindAddress: freeAddr(t), HealthProbeBindAddress: freeAddr(t),
		LeaderElection: true, LeaderElectionNamespace: "default", LeaderElectionID: "joiner-dashboard",
		KubeClientQPS: operator.DefaultKubeClientQPS, KubeClientBurst: operator.DefaultKubeClientBurst,
	}
	op, err := operator.New(env.Config, env.Scheme, opts, prometheus.NewRegistry(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &fake.CloudProvider{InstanceTypes: testkit.DefaultInstanceTypes()}
	cs, err := controllers.New(ctx, op.Manager, controllers.Dependencies{
		Clock: clock.RealClock{}, CloudProvider: cloud, Registry: op.Registry,
		BatchIdleDuration: opts.BatchIdleDuration, BatchMaxDuration: opts.BatchMaxDuration,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.Register(ctx, op.Manager, cs); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator stopped with %v", err)
		}
	})

	return "http://" + opts.MetricsBindAddress + "/metrics"
}

// joinNode waits for the NodePool's NodeClaim to launch and makes its Node join as a kubelet and
// kube-controller-manager would, until the NodeClaim is initialized.
func joinNode(ctx context.Context, t *testing.T, pool string) *corev1.Node {
	t.Helper()
	claim := &v1.NodeClaim{}
	testkit.Poll(t, 30*time.Second, "a launched NodeClaim for the pending pod", func() bool {
		var claims v1.NodeClaimList
		if env.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}) != nil || len(claims.Items) != 1 {
			return false
		}
		*claim = claims.Items[0]
		return claim.Status.ProviderID != ""
	})
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-9-1.us-west-2.compute.internal", Labels: map[string]string{
			corev1.LabelHostname: "ip-10-0-9-1", corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux",
			corev1.LabelTopologyZone: claim.Labels[corev1.LabelTopologyZone], corev1.LabelInstanceTypeStable: claim.Labels[corev1.LabelInstanceTypeStable],
		}},
		Spec: corev1.NodeSpec{ProviderID: claim.Status.ProviderID, Taints: []corev1.Taint{v1.UnregisteredNoExecuteTaint()}},
	}
	testkit.Create(t, env.Client, node)
	stored := node.DeepCopy()
	node.Status = corev1.NodeStatus{
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"), corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("29")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	// A patch: the lifecycle controller may be syncing the Node's labels and taints meanwhile.
	if err := env.Client.Status().Patch(ctx, node, client.MergeFrom(stored)); err != nil {
		t.Fatal(err)
	}
	// Once Ready, kube-controller-manager's node lifecycle controller (not running here) would take
	// away the not-ready taint Joiner registers the Node with.
	testkit.Eventually(t, 30*time.Second, func() string {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return err.Error()
		}
		i := slices.IndexFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		if i < 0 {
			if node.Labels[v1.NodeRegisteredLabelKey] != "true" {
				return "the Node is not registered yet"
			}
			return ""
		}
		node.Spec.Taints = slices.Delete(node.Spec.Taints, i, i+1)
		if err := env.Client.Update(ctx, node); err != nil {
			return err.Error()
		}
		return "the not-ready taint was just removed"
	})
	testkit.Eventually(t, 30*time.Second, func() string {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			return err.Error()
		}
		if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1.ConditionTypeInitialized) {
			return fmt.Sprintf("NodeClaim not initialized: %+v", claim.Status.Conditions)
		}
		return ""
	})
	return node
}

// runPods binds app and a new DaemonSet pod to node, Running and Ready, as kube-scheduler and the
// kubelet would; it returns the DaemonSet pod.
func runPods(ctx context.Context, t *testing.T, node *corev1.Node, app *corev1.Pod) *corev1.Pod {
	t.Helper()
	daemon := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard-daemon", Namespace: "default", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "5e1b6c2a-0000-4000-8000-000000000001", Controller: new(true)}}},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "agent", Image: "agent", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		}}}},
	}
	testkit.Create(t, env.Client, daemon)
	if err := env.Client.SubResource("binding").Create(ctx, app, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node.Name},
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{app, daemon} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		stored := p.DeepCopy()
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if err := env.Client.Status().Patch(ctx, p, client.MergeFrom(stored)); err != nil {
			t.Fatal(err)
		}
	}

	return daemon
}

// expectSeries waits until the URL serves every one of series.
func expectSeries(ctx context.Context, t *testing.T, metricsURL, what string, series []dashboardSeries) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, func() string {
		families, err := scrape(ctx, metricsURL)
		if err != nil {
			return fmt.Sprintf("scraping %s: %v", metricsURL, err)
		}
		var wrong []string
		for _, s := range series {
			if w := s.check(families); w != "" {
				wrong = append(wrong, w)
			}
		}
		if len(wrong) > 0 {
			return what + ":\n" + strings.Join(wrong, "\n")
		}
		return ""
	})
}

// between accepts values from lo to hi.
func between(lo, hi float64) func(float64) bool {
	return func(v float64) bool { return v >= lo && v <= hi }
}

// hasQuantile reports whether the summary family serves quantile q.
func hasQuantile(f *dto.MetricFamily, q string) bool {
	for _, m := range f.GetMetric() {
		for _, sq := range m.GetSummary().GetQuantile() {
			if fmt.Sprint(sq.GetQuantile()) == q {
				return true
			}
		}
	}
	return false
}
