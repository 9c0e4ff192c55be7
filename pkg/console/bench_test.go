package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/console"
)

// BenchmarkPages serves each page of a cluster of 1,000 nodes (and NodeClaims) and 10,000 pods,
// 100 of them pending, read through the console's informer cache (StartCache, as `joiner
// console` and the controller read) from the test API server: the server time of one page is
// ns/op, and cpu-ns/op is the CPU time this process spent per page (getrusage; the API server is
// another process and idle meanwhile), a figure that other work on the machine distorts less.
// Creating the objects takes a minute or so before the first page.
//
//	go test -run '^$' -bench BenchmarkPages -benchtime 5x -count 5 ./pkg/console/
func BenchmarkPages(b *testing.B) {
	ctrllog.SetLogger(logr.Discard()) // the cache's informers log through controller-runtime
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	createBenchObjects(ctx, b)
	reader, err := console.StartCache(ctx, env.Config, env.Scheme)
	if err != nil {
		b.Fatal(err)
	}
	benchPages(b, reader)
}

// createBenchObjects creates a NodePool, 1,000 launched and registered NodeClaims and their
// Nodes, and 10,000 pods: 9,900 bound, ten per node (or eleven), and 100 pending that no NodePool
// can hold. It deletes them when the benchmark ends.
func createBenchObjects(ctx context.Context, b *testing.B) {
	b.Helper()
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	labels := map[string]string{v1.NodePoolLabelKey: "bench", corev1.LabelInstanceTypeStable: "t3.small", corev1.LabelTopologyZone: "us-west-2a", v1.CapacityTypeLabelKey: "on-demand", corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"}
	work := make(chan func() error)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for w := range work {
				if err := w(); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	b.Cleanup(func() {
		c := context.Background()
		for _, o := range []client.Object{&corev1.Pod{}, &corev1.Node{}, &v1.NodeClaim{}} {
			_ = env.Client.DeleteAllOf(c, o, client.InNamespace(namespaceOf(o)), client.MatchingLabels{"bench": "true"})
		}
		_ = env.Client.Delete(c, np)
	})
	if err := env.Client.Create(ctx, np); err != nil {
		b.Fatal(err)
	}
	now := metav1.Now()
	for i := range 1000 {
		work <- func() error {
			id := fmt.Sprintf("aws:///us-west-2a/i-bench%05d", i)
			ncLabels := map[string]string{"bench": "true"}
			for k, v := range labels {
				ncLabels[k] = v
			}
			nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%04d", i), Labels: ncLabels}, Spec: v1.NodeClaimSpec{
				Requirements: np.Spec.Template.Spec.Requirements, NodeClassRef: np.Spec.Template.Spec.NodeClassRef}}
			if err := env.Client.Create(ctx, nc); err != nil {
				return err
			}
			nc.Status = v1.NodeClaimStatus{ProviderID: id, NodeName: fmt.Sprintf("bench-node-%04d", i), Conditions: []metav1.Condition{
				{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: now},
				{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: "Registered", LastTransitionTime: now}}}
			if err := env.Client.Status().Update(ctx, nc); err != nil {
				return err
			}
			// Nodes are created with their status (the API server keeps a node's status on create).
			return env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nc.Status.NodeName, Labels: ncLabels}, Spec: corev1.NodeSpec{ProviderID: id},
				Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("29")},
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
		}
	}
	for i := range 10000 {
		work <- func() error {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%05d", i), Namespace: "default", Labels: map[string]string{"bench": "true"}}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}}}
			if i < 100 {
				p.Spec.NodeSelector = map[string]string{"pod-type": "gpu"}
			} else {
				p.Spec.NodeName = fmt.Sprintf("bench-node-%04d", i%1000)
			}
			return env.Client.Create(ctx, p)
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatalf("creating the benchmark's objects, %v", err)
	default:
	}
}

func namespaceOf(o client.Object) string {
	if _, ok := o.(*corev1.Pod); ok {
		return "default"
	}
	return ""
}

func benchPages(b *testing.B, kube client.Reader) {
	cloud := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{testkit.InstanceType("t3.small", "amd64", 0.0208), testkit.InstanceType("m7i.large", "amd64", 0.1008)}}
	c, err := console.New(kube, cloud, clock.RealClock{}, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	h := c.Handler()
	for _, path := range []string{"/", "/nodes", "/pending", "/nodeclaims", "/nodeclasses", "/api/nodes"} {
		b.Run(path, func(b *testing.B) {
			before := cpuTime(b)
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String()[:min(500, rec.Body.Len())])
				}
			}
			b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
