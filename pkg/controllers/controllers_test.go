package controllers_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers"
	"github.com/joinerhq/joiner/pkg/operator"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// TestOperator runs the whole operator (manager, leader election, probes, metrics and every
// controller) against the API server with the fake cloud provider: a pending pod becomes a
// NodeClaim through the real watches, and the NodePool's status counts it.
func TestOperator(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	opts := operator.Options{
		ClusterName: "test", BatchIdleDuration: 20 * time.Millisecond, BatchMaxDuration: 200 * time.Millisecond, LogLevel: "info",
		MetricsBindAddress: freeAddr(t), HealthProbeBindAddress: freeAddr(t),
		LeaderElection: true, LeaderElectionNamespace: "default", LeaderElectionID: "joiner-test",
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

	testkit.Create(t, env.Client,
		&awsv1.EC2NodeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: awsv1.EC2NodeClassSpec{
				AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
				Role:                       "NodeRole",
				SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"k": "v"}}},
				SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"k": "v"}}},
			},
		},
		&v1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
				NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			}}},
		},
	)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}}},
	}
	testkit.Create(t, env.Client, pod)
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}

	var claims v1.NodeClaimList
	testkit.Poll(t, 30*time.Second, "a NodeClaim for the pending pod", func() bool {
		return env.Client.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: "default"}) == nil && len(claims.Items) == 1
	})
	testkit.Poll(t, 30*time.Second, "NodePool status.nodes = 1", func() bool {
		np := &v1.NodePool{}
		return env.Client.Get(ctx, client.ObjectKey{Name: "default"}, np) == nil && np.Status.Nodes != nil && *np.Status.Nodes == 1
	})
	testkit.Poll(t, 30*time.Second, "a Nominated event on the pod", func() bool {
		var events eventsv1.EventList
		if env.Client.List(ctx, &events, client.InNamespace("default")) != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Reason == "Nominated" && e.Regarding.Name == "pending" && e.Related != nil && e.Related.Name == claims.Items[0].Name {
				return true
			}
		}
		return false
	})
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "joiner-test"}, lease); err != nil {
		t.Errorf("leader election Lease: %v", err)
	}
	if body := get(t, "http://"+opts.HealthProbeBindAddress+"/readyz"); body == "" {
		t.Error("/readyz answered nothing")
	}
	if body := get(t, "http://"+opts.MetricsBindAddress+"/metrics"); !strings.Contains(body, `karpenter_nodeclaims_created_total{min_values_relaxed="false",nodepool="default",reason="provisioned"} 1`) {
		t.Errorf("/metrics lacks the NodeClaim created:\n%s", body)
	}
	testkit.Poll(t, 30*time.Second, "the pending pod's unbound time in /metrics", func() bool {
		return strings.Contains(get(t, "http://"+opts.MetricsBindAddress+"/metrics"),
			`karpenter_pods_current_unbound_time_seconds{name="pending",namespace="default"}`)
	})
}

// get returns the body of a 200 answer from url, polling until the server answers.
func get(t *testing.T, url string) string {
	t.Helper()
	var body string
	testkit.Poll(t, 30*time.Second, url, func() bool {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		raw, err := io.ReadAll(resp.Body)
		body = string(raw)
		return err == nil && resp.StatusCode == http.StatusOK
	})
	return body
}

// TestAWSControllers: with the AWS provider, New adds the controllers that call it directly, and
// with an interruption queue too the interruption controller (sharing
// karpenter_nodeclaims_disrupted_total with disruption in one registry); without it, none of them.
func TestAWSControllers(t *testing.T) {
	opts := operator.Options{ClusterName: "test", LogLevel: "info", MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		BatchIdleDuration: time.Second, BatchMaxDuration: 10 * time.Second,
		KubeClientQPS: operator.DefaultKubeClientQPS, KubeClientBurst: operator.DefaultKubeClientBurst}
	awsNames := []string{"ec2nodeclass.status", "aws.housekeeping", "aws.instancegc"}
	for _, tc := range []struct {
		withAWS bool
		queue   string
	}{{false, ""}, {true, ""}, {true, "demo"}} {
		op, err := operator.New(env.Config, env.Scheme, opts, prometheus.NewRegistry(), logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		deps := controllers.Dependencies{Clock: clock.RealClock{}, CloudProvider: &fake.CloudProvider{}, Registry: op.Registry,
			BatchIdleDuration: opts.BatchIdleDuration, BatchMaxDuration: opts.BatchMaxDuration, InterruptionQueue: tc.queue}
		if tc.withAWS {
			deps.AWS = provider.Build(op.Manager.GetClient(), sdk.NewClients(awssdk.Config{Region: "us-west-2"}),
				provider.Options{Region: "us-west-2", KubernetesVersion: "1.33"}, clock.RealClock{})
		}
		cs, err := controllers.New(t.Context(), op.Manager, deps)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range cs {
			names = append(names, c.Name())
		}
		for _, name := range awsNames {
			if slices.Contains(names, name) != tc.withAWS {
				t.Errorf("with AWS %v: controllers %v", tc.withAWS, names)
			}
		}
		if slices.Contains(names, "interruption") != (tc.queue != "") {
			t.Errorf("with interruption queue %q: controllers %v", tc.queue, names)
		}
	}
}
