package termination_test

import (
	"context"
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
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
	events   *testenv.Recorder
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, testenv.CreateDefaultServiceAccount, startControllers))
}

// startControllers runs the lifecycle and termination controllers on the fake cloud and clock.
func startControllers(ctx context.Context, e *testenv.Environment) error {
	cloud = &fake.CloudProvider{InstanceTypes: testkit.DefaultInstanceTypes()}
	fakeTime = clocktesting.NewFakeClock(time.Now())
	events = &testenv.Recorder{}
	return e.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error {
		if err := lifecycle.NewController(mgr.GetClient(), cloud, fakeTime, events).Register(ctx, mgr); err != nil {
			return err
		}
		return termination.NewController(mgr.GetClient(), cloud, fakeTime, events).Register(ctx, mgr)
	})
}

// eventually polls check until it returns "" or 30s pass, then fails with its last complaint.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, check)
}
