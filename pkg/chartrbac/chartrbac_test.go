package chartrbac_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/chartrbac"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers"
	"github.com/joinerhq/joiner/pkg/operator"
)

var env *testenv.Environment

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// asChart renders the chart, applies its RBAC and returns a client and config acting as its
// ServiceAccount, read back from the kubeconfig Kubeconfig wrote.
func asChart(t *testing.T, admin client.Client, adminConfig *rest.Config) (client.Client, string) {
	t.Helper()
	docs := renderChart(t)
	ns, name, err := chartrbac.Apply(t.Context(), admin, docs)
	if err != nil {
		t.Fatal(err)
	}
	if ns != "kube-system" || name != "joiner" {
		t.Fatalf("ServiceAccount %s/%s, want kube-system/joiner", ns, name)
	}
	cfg, err := chartrbac.Config(t.Context(), adminConfig, ns, name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := chartrbac.WriteKubeconfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	loaded, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(loaded, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, path
}

// renderChart renders charts/joiner with the pinned helm.
func renderChart(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	helm := os.Getenv("HELM")
	if helm == "" {
		helm = filepath.Join(root, "bin", "helm")
	}
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("no helm at %s: build it with `make helm` or set $HELM", helm)
	}
	docs, err := chartrbac.Render(t.Context(), helm, filepath.Join(root, "charts", "joiner"), "joiner", "kube-system", "settings.clusterName=test", "settings.region=us-west-2")
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestServiceAccountIsLimited: the ServiceAccount can do what the chart grants and nothing
// next to it.
func TestServiceAccountIsLimited(t *testing.T) {
	c, _ := asChart(t, env.Client, env.Config)
	ctx := t.Context()
	tests := []struct {
		name    string
		call    func() error
		allowed bool
	}{
		{name: "list NodeClaims", call: func() error { return c.List(ctx, &v1.NodeClaimList{}) }, allowed: true},
		{name: "list pods", call: func() error { return c.List(ctx, &corev1.PodList{}) }, allowed: true},
		{name: "list secrets", call: func() error { return c.List(ctx, &corev1.SecretList{}) }},
		{name: "get a pod past the cache", call: func() error {
			return client.IgnoreNotFound(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.Pod{}))
		}},
		{name: "delete a NodePool", call: func() error {
			return client.IgnoreNotFound(c.Delete(ctx, &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "x"}}))
		}},
		{name: "read another Lease", call: func() error {
			return client.IgnoreNotFound(c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kube-scheduler"}, &coordinationv1.Lease{}))
		}},
		{name: "get kube-system/aws-auth past the cache", call: func() error {
			return client.IgnoreNotFound(c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "aws-auth"}, &corev1.ConfigMap{}))
		}},
		{name: "list and watch kube-system/aws-auth by name", call: func() error {
			return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("kube-system"), client.MatchingFields{"metadata.name": "aws-auth"})
		}, allowed: true},
		{name: "list ConfigMaps", call: func() error { return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("kube-system")) }},
		{name: "get another ConfigMap", call: func() error {
			return client.IgnoreNotFound(c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kube-proxy"}, &corev1.ConfigMap{}))
		}},
		{name: "create core events outside its namespace", call: func() error {
			return c.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}, InvolvedObject: corev1.ObjectReference{Name: "x"}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if tt.allowed && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !tt.allowed && !apierrors.IsForbidden(err) {
				t.Errorf("err = %v, want Forbidden", err)
			}
		})
	}
}

// runOperator runs the whole operator with the fake cloud provider from kubeconfig (the chart's
// ServiceAccount) through the pending-pod scenario; admin creates the objects and checks the
// results: the caches sync (list and watch on every type it reads), it takes the Lease, creates
// a NodeClaim for a pending pod, patches the NodePool's status and records events. A permission
// the chart lacks stops one of these. controller-runtime allows one run per test binary
// (controller names are global).
func runOperator(t *testing.T, admin client.Client, kubeconfig string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	opts := operator.Options{
		ClusterName: "test", BatchIdleDuration: 20 * time.Millisecond, BatchMaxDuration: 200 * time.Millisecond, LogLevel: "info",
		MetricsBindAddress: "0", HealthProbeBindAddress: freeAddr(t),
		LeaderElection: true, LeaderElectionNamespace: "kube-system", LeaderElectionID: "joiner-leader-election",
		KubeClientQPS: operator.DefaultKubeClientQPS, KubeClientBurst: operator.DefaultKubeClientBurst,
	}
	op, err := operator.New(cfg, env.Scheme, opts, prometheus.NewRegistry(), logr.Discard())
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

	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !op.Manager.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatal("the caches did not sync as the chart's ServiceAccount: a list or watch is missing from the ClusterRole")
	}
	for _, o := range []client.Object{
		&awsv1.EC2NodeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: awsv1.EC2NodeClassSpec{
				AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}, Role: "NodeRole",
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
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}}},
	}
	if err := admin.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if err := admin.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}

	testkit.Poll(t, 30*time.Second, "the leader Lease kube-system/joiner-leader-election", func() bool {
		return admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "joiner-leader-election"}, &coordinationv1.Lease{}) == nil
	})
	testkit.Poll(t, 30*time.Second, "a NodeClaim created by the ServiceAccount", func() bool {
		var claims v1.NodeClaimList
		return admin.List(ctx, &claims) == nil && len(claims.Items) == 1
	})
	testkit.Poll(t, 30*time.Second, "NodePool status.nodes = 1 (status patch)", func() bool {
		np := &v1.NodePool{}
		return admin.Get(ctx, client.ObjectKey{Name: "default"}, np) == nil && np.Status.Nodes != nil && *np.Status.Nodes == 1
	})
	testkit.Poll(t, 30*time.Second, "an event about the pod (events.k8s.io create)", func() bool {
		var events eventsv1.EventList
		if admin.List(ctx, &events, client.InNamespace("default")) != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Regarding.Name == "pending" && e.Reason == "Nominated" {
				return true
			}
		}
		return false
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// TestExceptionsAreDocumented: every grant UnusedExceptions excuses is one the chart grants, and
// the chart's README lists it.
func TestExceptionsAreDocumented(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "charts", "joiner", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	grants, err := chartrbac.Grants(renderChart(t))
	if err != nil {
		t.Fatal(err)
	}
	for g, reason := range chartrbac.UnusedExceptions {
		if reason == "" {
			t.Errorf("exception %q has no reason", g)
		}
		if !strings.Contains(string(readme), "`"+g+"`") {
			t.Errorf("charts/joiner/README.md does not list the exception `%s`", g)
		}
		if !slices.ContainsFunc(grants, func(x chartrbac.Grant) bool { return x.String() == g }) {
			t.Errorf("exception %q is not a grant of the chart", g)
		}
	}
}
