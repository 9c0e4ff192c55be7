package apilimits

import (
	"fmt"
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// TokenBucket is one bucket's state: it starts full, refills continuously at the bucket's rate up
// to its capacity, and is safe for concurrent use. Its clock is injected so that tests step time.
type TokenBucket struct {
	clock           clock.PassiveClock
	capacity        float64
	refillPerSecond float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewTokenBucket returns a full bucket of b, with capacity and refill rate multiplied by scale
// (1 is AWS's numbers; 0.5 halves both, 10 gives ten times the room). The capacity stays at one
// token at least, so that a small scale slows a bucket (RunInstances holds 5) rather than closing
// it. scale must be positive and finite: it panics otherwise, since no caller should build a
// bucket that never refills.
func NewTokenBucket(b Bucket, clk clock.PassiveClock, scale float64) *TokenBucket {
	if !(scale > 0) || math.IsInf(scale, 0) {
		panic(fmt.Sprintf("apilimits: scale of bucket %s must be a positive finite number, got %v", b.Name, scale))
	}
	capacity := math.Max(b.Capacity*scale, 1)
	return &TokenBucket{clock: clk, capacity: capacity, refillPerSecond: b.RefillPerSecond * scale, tokens: capacity, last: clk.Now()}
}

// refill adds the tokens earned since the last look. The clock going backwards adds none.
func (t *TokenBucket) refill() {
	now := t.clock.Now()
	if elapsed := now.Sub(t.last).Seconds(); elapsed > 0 && t.tokens < t.capacity {
		t.tokens = math.Min(t.capacity, t.tokens+elapsed*t.refillPerSecond)
	}
	t.last = now
}

// Take takes n tokens when the bucket holds them, and reports whether it did; otherwise it takes
// none (a refused request costs nothing, as AWS's throttled requests do). n above the capacity
// is never granted.
func (t *TokenBucket) Take(n float64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refill()
	if t.tokens < n {
		return false
	}
	t.tokens -= n
	return true
}

// Reserve takes n tokens now, letting the bucket go negative, and returns how long the caller
// must wait before acting so that, counted from now, it stays within the bucket's rate: zero when
// the tokens were there. Callers that pace themselves (client-side) reserve, wait, then send.
func (t *TokenBucket) Reserve(n float64) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refill()
	t.tokens -= n
	if t.tokens >= 0 {
		return 0
	}
	return time.Duration(math.Ceil(-t.tokens / t.refillPerSecond * float64(time.Second)))
}

// Tokens returns the tokens in the bucket now; negative while reservations are outstanding.
func (t *TokenBucket) Tokens() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refill()
	return t.tokens
}

// Capacity and RefillPerSecond return the bucket's numbers after scaling.
func (t *TokenBucket) Capacity() float64        { return t.capacity }
func (t *TokenBucket) RefillPerSecond() float64 { return t.refillPerSecond }
