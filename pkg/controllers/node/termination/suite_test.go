package termination_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/internal/testenv"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers/node/termination"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/lifecycle"
)

// The package's one control plane, with the lifecycle controller (which owns the NodeClaim side
// of deletion) and the termination controller running. Tests run one at a time with names of their
// own.
var (
	env      *testenv.Environment
	cloud    *fake.CloudProvider
	fakeTime *clocktesting.FakeClock
	events   *recorder
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, testenv.CreateDefaultServiceAccount, startControllers))
}

// startControllers runs the lifecycle and termination controllers on the fake cloud and clock.
func startControllers(ctx context.Context, e *testenv.Environment) error {
	cloud = &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{{
		Name:      "m7i.large",
		Capacity:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("29")},
		Offerings: []*cloudprovider.Offering{{Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand, Available: true}},
	}}}
	fakeTime = clocktesting.NewFakeClock(time.Now())
	events = &recorder{}
	return e.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error {
		if err := lifecycle.NewController(mgr.GetClient(), cloud, fakeTime, events).Register(ctx, mgr); err != nil {
			return err
		}
		return termination.NewController(mgr.GetClient(), cloud, fakeTime, events).Register(ctx, mgr)
	})
}

// recorder keeps the events the controllers record.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(regarding, _ runtime.Object, eventType, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := ""
	if o, ok := regarding.(client.Object); ok {
		name = o.GetName()
	}
	r.events = append(r.events, fmt.Sprintf("%s %s %s %s", name, eventType, reason, fmt.Sprintf(note, args...)))
}

// find returns the first event of the object with the type and reason, or "".
func (r *recorder) find(name, eventType, reason string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if strings.HasPrefix(e, name+" "+eventType+" "+reason+" ") {
			return e
		}
	}
	return ""
}

// eventually polls check until it returns "" or the deadline passes, then fails with its last
// complaint.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		complaint := check()
		if complaint == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(complaint)
		}
		<-tick.C
	}
}
