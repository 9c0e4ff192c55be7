package garbagecollection_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/garbagecollection"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

// recorder keeps the events the controller records.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(_, _ runtime.Object, eventType, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+" "+fmt.Sprintf(note, args...))
}

// launchedNodeClaim creates a NodeClaim whose status says it launched the instance at launchedAt.
func launchedNodeClaim(t *testing.T, name, providerID string, launchedAt time.Time) *v1.NodeClaim {
	t.Helper()
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"m7i.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		},
	}
	if err := env.Client.Create(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), nc) }) // t.Context() is done in cleanups
	nc.Status.ProviderID = providerID
	nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: metav1.NewTime(launchedAt)}}
	if err := env.Client.Status().Update(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

func TestGarbageCollection(t *testing.T) {
	cloud := &fake.CloudProvider{InstanceTypes: testkit.DefaultInstanceTypes()}
	running, err := cloud.Create(t.Context(), &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "running"}})
	if err != nil {
		t.Fatal(err)
	}
	const vanished = "fake:///us-west-2a/i-0000000000000dead"
	now := time.Now().Truncate(time.Second)
	tests := []struct {
		name         string
		providerID   string
		launchedAgo  time.Duration
		getErr       error
		wantDeleted  bool
		wantRequeue  time.Duration
		wantErr      bool
		wantEventSub string
	}{
		{name: "vanished", providerID: vanished, launchedAgo: time.Minute, wantDeleted: true, wantEventSub: "InstanceNotFound Deleting the NodeClaim: its instance " + vanished},
		{name: "vanished-in-grace", providerID: vanished, launchedAgo: 10 * time.Second, wantRequeue: 20 * time.Second},
		{name: "running", providerID: running.Status.ProviderID, launchedAgo: time.Minute, wantRequeue: garbagecollection.DefaultInterval},
		{name: "cloud-error", providerID: vanished, launchedAgo: time.Minute, getErr: errors.New("throttled"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := &recorder{}
			c := garbagecollection.NewController(env.Client, cloud, clocktesting.NewFakeClock(now), events)
			nc := launchedNodeClaim(t, "gc-"+tt.name, tt.providerID, now.Add(-tt.launchedAgo))
			if tt.getErr != nil {
				cloud.NextError = tt.getErr
			}
			result, err := c.Reconcile(t.Context(), nc)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Reconcile error = %v, want error %v", err, tt.wantErr)
			}
			if result.RequeueAfter != tt.wantRequeue {
				t.Errorf("RequeueAfter = %s, want %s", result.RequeueAfter, tt.wantRequeue)
			}
			err = env.Client.Get(t.Context(), client.ObjectKeyFromObject(nc), nc)
			if deleted := apierrors.IsNotFound(err); deleted != tt.wantDeleted {
				t.Errorf("deleted = %v (get error %v), want %v", deleted, err, tt.wantDeleted)
			}
			if tt.wantEventSub != "" && (len(events.events) != 1 || !strings.Contains(events.events[0], tt.wantEventSub)) {
				t.Errorf("events %q, want one containing %q", events.events, tt.wantEventSub)
			}
			if tt.wantEventSub == "" && len(events.events) > 0 {
				t.Errorf("events %q, want none", events.events)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	mgr, err := env.NewManager()
	if err != nil {
		t.Fatal(err)
	}
	c := garbagecollection.NewController(mgr.GetClient(), &fake.CloudProvider{}, clocktesting.NewFakeClock(time.Now()), &recorder{})
	if err := c.Register(t.Context(), mgr); err != nil {
		t.Fatalf("Register: %v", err)
	}
}
