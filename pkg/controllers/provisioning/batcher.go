package provisioning

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Batcher holds the window in which triggers are gathered into one provisioning run. It is safe
// for concurrent use: watch handlers call Trigger while Reconcile reads it.
type Batcher struct {
	clock     clock.PassiveClock
	idle, max time.Duration

	mu          sync.Mutex
	open        bool
	first, last time.Time
	// seen are the keys TriggerFor was given since the window opened.
	seen map[types.UID]struct{}
}

// NewBatcher returns a Batcher whose windows close idle after the last trigger or max after the
// first.
func NewBatcher(clk clock.PassiveClock, idle, max time.Duration) *Batcher {
	return &Batcher{clock: clk, idle: idle, max: max}
}

// Trigger opens a window, or extends the open one.
func (b *Batcher) Trigger() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trigger()
}

func (b *Batcher) trigger() {
	now := b.clock.Now()
	if !b.open {
		b.open, b.first = true, now
	}
	b.last = now
}

// TriggerFor is Trigger for an event of the object key (a pod's UID), except that a key already
// seen in the open window neither opens nor extends it, as Karpenter's batcher does: while
// kube-scheduler marks a thousand pending pods unschedulable one by one, each pod's status update
// is an event, and windows extended by them ran to their longest (10 s) after the last new pod.
func (b *Batcher) TriggerFor(key types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.seen[key]; seen && b.open {
		return
	}
	if !b.open || b.seen == nil {
		b.seen = map[types.UID]struct{}{}
	}
	b.seen[key] = struct{}{}
	b.trigger()
}

// Wait returns how long until the open window closes; ok is false when no window is open.
// A result of zero means the window has closed and the batch is due.
func (b *Batcher) Wait() (wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return 0, false
	}
	now := b.clock.Now()
	closes := b.last.Add(b.idle)
	if latest := b.first.Add(b.max); latest.Before(closes) {
		closes = latest
	}
	return max(closes.Sub(now), 0), true
}

// Take closes the window for the run about to start; triggers from now on open the next one.
func (b *Batcher) Take() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open, b.seen = false, nil
}

// Retry reopens the window as already due, for a run that failed: the requeue that follows runs
// at once instead of waiting for another trigger.
func (b *Batcher) Retry() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.open, b.first, b.last = true, now.Add(-b.max), now
}
