// Package chaos tortures Joiner's whole lifecycle on the local stack (internal/e2estack): scale
// up, consolidation after a scale-down, a drift roll and a spot interruption, while the
// controller is SIGKILLed at seeded random moments and the emulator throttles, refuses capacity,
// lags, fails and slows its AWS calls; and once with kube-apiserver and etcd restarted mid-run.
// A sampler checks the invariants throughout (sampler.go): instances pair one to one with
// NodeClaims within the garbage-collection grace, no NodeClaim is launched twice or bought for
// pods another serves, and no PodDisruptionBudget is exceeded.
//
// `make test` runs the CI size; JOINER_CHAOS=full runs the full size (at least 50 kills);
// JOINER_CHAOS_SEED replays a run's kill points.
package chaos

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/internal/e2estack"
)

// bins are the programs built once for the package.
var bins *e2estack.Programs

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	log.SetLogger(logr.Discard()) // envtest logs through controller-runtime; the programs log to files
	dir, err := os.MkdirTemp("", "joiner-chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if bins, err = e2estack.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
