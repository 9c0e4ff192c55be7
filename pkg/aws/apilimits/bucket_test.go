package apilimits

import (
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var mutating = Bucket{Name: "ec2/CreateFleet", Capacity: 50, RefillPerSecond: 5}

// step is one operation on a bucket after advancing the clock.
type step struct {
	advance    time.Duration
	take       float64 // Take(take) when reserve is 0
	reserve    float64
	wantOK     bool
	wantWait   time.Duration
	wantTokens float64
}

func TestTokenBucket(t *testing.T) {
	for _, tc := range []struct {
		name  string
		b     Bucket
		scale float64
		steps []step
	}{
		{name: "starts full and refuses past empty", b: mutating, scale: 1, steps: []step{
			{take: 50, wantOK: true, wantTokens: 0},
			{take: 1, wantOK: false, wantTokens: 0},
		}},
		{name: "refills at its rate", b: mutating, scale: 1, steps: []step{
			{take: 50, wantOK: true, wantTokens: 0},
			{advance: 100 * time.Millisecond, take: 1, wantOK: false, wantTokens: 0.5},
			{advance: 100 * time.Millisecond, take: 1, wantOK: true, wantTokens: 0},
			{advance: time.Second, take: 6, wantOK: false, wantTokens: 5},
		}},
		{name: "refill stops at capacity", b: mutating, scale: 1, steps: []step{
			{take: 10, wantOK: true, wantTokens: 40},
			{advance: time.Hour, take: 51, wantOK: false, wantTokens: 50},
			{take: 50, wantOK: true, wantTokens: 0},
		}},
		{name: "a refused take costs nothing", b: Bucket{Name: "ec2/RunInstances/instances", Capacity: 1000, RefillPerSecond: 2}, scale: 1, steps: []step{
			{take: 600, wantOK: true, wantTokens: 400},
			{take: 430, wantOK: false, wantTokens: 400},
			{advance: 15 * time.Second, take: 430, wantOK: true, wantTokens: 0},
		}},
		{name: "scale multiplies capacity and refill", b: mutating, scale: 0.5, steps: []step{
			{take: 25, wantOK: true, wantTokens: 0},
			{advance: time.Second, take: 3, wantOK: false, wantTokens: 2.5},
		}},
		{name: "scale ten", b: mutating, scale: 10, steps: []step{
			{take: 500, wantOK: true, wantTokens: 0},
			{advance: time.Second, take: 50, wantOK: true, wantTokens: 0},
		}},
		{name: "a small scale keeps one token", b: Bucket{Name: "ec2/RunInstances", Capacity: 5, RefillPerSecond: 2}, scale: 0.1, steps: []step{
			{take: 1, wantOK: true, wantTokens: 0},
			{advance: 4 * time.Second, take: 1, wantOK: false, wantTokens: 0.8},
			{advance: 10 * time.Second, take: 1, wantOK: true, wantTokens: 0},
		}},
		{name: "reserve waits for the debt", b: mutating, scale: 1, steps: []step{
			{reserve: 50, wantWait: 0, wantTokens: 0},
			{reserve: 1, wantWait: 200 * time.Millisecond, wantTokens: -1},
			{reserve: 4, wantWait: time.Second, wantTokens: -5},
			{advance: time.Second, take: 1, wantOK: false, wantTokens: 0},
			{advance: 200 * time.Millisecond, reserve: 1, wantWait: 0, wantTokens: 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
			tb := NewTokenBucket(tc.b, clk, tc.scale)
			if got, want := tb.Capacity(), max(tc.b.Capacity*tc.scale, 1); got != want {
				t.Errorf("Capacity() = %v, want %v", got, want)
			}
			for i, s := range tc.steps {
				clk.SetTime(clk.Now().Add(s.advance))
				if s.reserve > 0 {
					if got := tb.Reserve(s.reserve); got != s.wantWait {
						t.Errorf("step %d: Reserve(%v) = %v, want %v", i, s.reserve, got, s.wantWait)
					}
				} else if got := tb.Take(s.take); got != s.wantOK {
					t.Errorf("step %d: Take(%v) = %v, want %v", i, s.take, got, s.wantOK)
				}
				if got := tb.Tokens(); !near(got, s.wantTokens) {
					t.Errorf("step %d: Tokens() = %v, want %v", i, got, s.wantTokens)
				}
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestTokenBucketConcurrent: of many concurrent takes, exactly the capacity succeed.
func TestTokenBucketConcurrent(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	tb := NewTokenBucket(mutating, clk, 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 430 {
		wg.Go(func() {
			if tb.Take(1) {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != 50 {
		t.Errorf("%d of 430 takes granted, want 50", granted)
	}
}

func TestNewTokenBucketRejectsBadScale(t *testing.T) {
	for _, scale := range []float64{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewTokenBucket with scale %v did not panic", scale)
				}
			}()
			NewTokenBucket(mutating, clocktesting.NewFakePassiveClock(time.Now()), scale)
		}()
	}
}
