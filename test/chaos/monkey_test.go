package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/joinerhq/joiner/pkg/localstack"
)

// size is how hard a run is. The controller's up times spread up to 30-40s: disruption
// validates a decision for disruption.ValidationPeriod (15s) before acting; a new leader resumes
// the validation and the replacements an earlier one recorded on the NodeClaims, so commands
// finish across kills, and the spread makes most kills land mid-command.
type size struct {
	name string
	// minKills is how many SIGKILLs the run waits for before its final checks.
	minKills int
	// up is the range of time the controller runs between kills; down how long it stays dead.
	upMin, upMax, downMax time.Duration
	// web is the on-demand Deployment's replicas at the start.
	web int32
}

// sizeOf is the CI size, or the full size with JOINER_CHAOS=full.
func sizeOf(t *testing.T) size {
	switch v := os.Getenv("JOINER_CHAOS"); v {
	case "":
		return size{name: "ci", minKills: 10, upMin: 2 * time.Second, upMax: 40 * time.Second, downMax: 800 * time.Millisecond, web: 4}
	case "full":
		return size{name: "full", minKills: 50, upMin: time.Second, upMax: 30 * time.Second, downMax: time.Second, web: 16}
	default:
		t.Fatalf("JOINER_CHAOS=%q: set it to full, or leave it empty for the CI size", v)
		return size{}
	}
}

// seed is JOINER_CHAOS_SEED, else the clock's; it is logged so that a run can be replayed.
func seed(t *testing.T) uint64 {
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("JOINER_CHAOS_SEED"); v != "" {
		var err error
		if s, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("JOINER_CHAOS_SEED=%q: give an unsigned integer, as a run logs it (%v)", v, err)
		}
	}
	t.Logf("chaos seed %d (replay with JOINER_CHAOS_SEED=%d)", s, s)
	return s
}

// monkey SIGKILLs the controller at seeded random moments and starts it again, until stopped.
type monkey struct {
	stack *localstack.Stack
	size  size
	rng   *rand.Rand

	mu    sync.Mutex
	kills int
	err   error
}

// run kills and restarts the controller until ctx ends; it leaves the controller running.
func (m *monkey) run(ctx context.Context) {
	for {
		up := m.size.upMin + time.Duration(m.rng.Int64N(int64(m.size.upMax-m.size.upMin)))
		down := time.Duration(m.rng.Int64N(int64(m.size.downMax)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(up):
		}
		if err := m.stack.Controller.Kill(); err != nil {
			m.fail(fmt.Errorf("killing the controller, %w", err))
			return
		}
		m.mu.Lock()
		m.kills++
		m.mu.Unlock()
		// Dead for down, even when stopped meanwhile: the controller is always started again.
		<-time.After(down)
		if err := m.stack.Controller.Start(); err != nil {
			m.fail(fmt.Errorf("restarting the controller, %w", err))
			return
		}
	}
}

func (m *monkey) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
}

// count returns the kills so far and the monkey's error.
func (m *monkey) count() (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kills, m.err
}
