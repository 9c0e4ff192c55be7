package batcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// calls records the batches an executor was called with.
type calls struct {
	mu      sync.Mutex
	batches [][]int
}

// exec answers each input with itself times ten, and an error for a negative input: one
// input's error must not fail the others.
func (c *calls) exec(_ context.Context, key string, ins []int) []Result[string] {
	c.mu.Lock()
	c.batches = append(c.batches, slices.Clone(ins))
	c.mu.Unlock()
	out := make([]Result[string], len(ins))
	for i, in := range ins {
		if in < 0 {
			out[i].Err = fmt.Errorf("input %d refused", in)
			continue
		}
		out[i].Out = fmt.Sprintf("%s:%d", key, in*10)
	}
	return out
}

func (c *calls) sizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, b := range c.batches {
		out = append(out, len(b))
	}
	slices.Sort(out)
	return out
}

// waiting is how many requests the open batch of key holds.
func waiting(b *Batcher[string, int, string], key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bt := b.open[key]; bt != nil {
		return len(bt.reqs)
	}
	return 0
}

// joined reports whether the input is in the open batch of key or was in a call.
func joined(b *Batcher[string, int, string], c *calls, key string, in int) bool {
	b.mu.Lock()
	if bt := b.open[key]; bt != nil && slices.ContainsFunc(bt.reqs, func(r *request[int, string]) bool { return r.in == in }) {
		b.mu.Unlock()
		return true
	}
	b.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(c.batches, func(ins []int) bool { return slices.Contains(ins, in) })
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type step struct {
	key string
	in  int
	// advance is how long the fake clock moves after the request joined.
	advance time.Duration
}

func TestBatcher(t *testing.T) {
	opts := Options{Idle: 10 * time.Millisecond, Max: 100 * time.Millisecond, MaxItems: 3}
	tests := []struct {
		name  string
		steps []step
		// final is how long the clock moves after the last step, to close what is open.
		final time.Duration
		sizes []int
		// errs are the inputs whose callers get an error.
		errs []int
	}{
		{name: "requests within the idle window merge", steps: []step{{"a", 1, 5 * time.Millisecond}, {"a", 2, 5 * time.Millisecond}}, final: opts.Idle, sizes: []int{2}},
		{name: "keys split", steps: []step{{"a", 1, 0}, {"b", 2, 0}}, final: opts.Idle, sizes: []int{1, 1}},
		{name: "the idle window closes a batch", steps: []step{{"a", 1, opts.Idle}, {"a", 2, 0}}, final: opts.Idle, sizes: []int{1, 1}},
		{name: "the max window closes a busy batch", steps: []step{
			{"a", 1, 9 * time.Millisecond}, {"a", 2, 9 * time.Millisecond}, {"a", 3, 9 * time.Millisecond}, // full at 3
			{"a", 4, 9 * time.Millisecond}, {"a", 5, 9 * time.Millisecond},
		}, final: opts.Max, sizes: []int{2, 3}},
		{name: "max items closes a batch at once", steps: []step{{"a", 1, 0}, {"a", 2, 0}, {"a", 3, 0}, {"a", 4, 0}}, final: opts.Idle, sizes: []int{1, 3}},
		{name: "one input's error does not fail the others", steps: []step{{"a", 1, 0}, {"a", -1, 0}, {"a", 2, 0}}, final: opts.Idle, sizes: []int{3}, errs: []int{-1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(0, 0))
			var c calls
			b, err := New(opts, clk, c.exec)
			if err != nil {
				t.Fatal(err)
			}
			type got struct {
				key  string
				in   int
				out  string
				err  error
				done bool
			}
			results := make([]got, len(tt.steps))
			var wg sync.WaitGroup
			for i, s := range tt.steps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := b.Do(t.Context(), s.key, s.in)
					results[i] = got{key: s.key, in: s.in, out: out, err: err, done: true}
				}()
				// The request joined the open batch, or closed a full one and was called.
				eventually(t, fmt.Sprintf("request %d to join", s.in), func() bool { return joined(b, &c, s.key, s.in) })
				clk.Step(s.advance)
			}
			clk.Step(tt.final)
			wg.Wait()
			if got := c.sizes(); !slices.Equal(got, tt.sizes) {
				t.Errorf("batch sizes %v, want %v", got, tt.sizes)
			}
			for _, r := range results {
				wantErr := slices.Contains(tt.errs, r.in)
				if (r.err != nil) != wantErr {
					t.Errorf("input %d: error %v, want error %t", r.in, r.err, wantErr)
				}
				if want := fmt.Sprintf("%s:%d", r.key, r.in*10); !wantErr && r.out != want {
					t.Errorf("input %d: got %q, want %q (its own share)", r.in, r.out, want)
				}
			}
		})
	}
}

func TestBatcherAbandoned(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	var c calls
	b, err := New(Options{Idle: time.Millisecond, Max: time.Second}, clk, c.exec)
	if err != nil {
		t.Fatal(err)
	}
	abandoned := make(chan Result[string], 1)
	b.OnAbandoned(func(_ int, r Result[string]) { abandoned <- r })
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Do(ctx, "a", 7)
		errc <- err
	}()
	eventually(t, "the request to join", func() bool { return waiting(b, "a") == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Do after cancel: %v, want context.Canceled", err)
	}
	clk.Step(time.Millisecond)
	select {
	case r := <-abandoned:
		if r.Out != "a:70" {
			t.Errorf("abandoned result %q, want a:70", r.Out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned result was not handed to OnAbandoned")
	}
}

func TestNewRefusesBadWindows(t *testing.T) {
	for _, o := range []Options{{Idle: 0, Max: time.Second}, {Idle: 2 * time.Second, Max: time.Second}, {Idle: 1, Max: 1, MaxItems: -1}} {
		if _, err := New(o, clock.RealClock{}, (&calls{}).exec); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// BenchmarkBatcher sends b.N requests from 64 concurrent callers over a handful of keys, with
// a merged call that takes a millisecond, and reports the calls made per request and the
// latency each request paid over the call itself.
func BenchmarkBatcher(b *testing.B) {
	for _, keys := range []int{1, 8} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			const callTime = time.Millisecond
			var mu sync.Mutex
			calls := 0
			bt, err := New(Options{Idle: 35 * time.Millisecond, Max: time.Second, MaxItems: 1000}, clock.RealClock{},
				func(_ context.Context, _ int, ins []int) []Result[int] {
					mu.Lock()
					calls++
					mu.Unlock()
					time.Sleep(callTime)
					return make([]Result[int], len(ins))
				})
			if err != nil {
				b.Fatal(err)
			}
			var (
				wg      sync.WaitGroup
				waited  time.Duration
				waitsMu sync.Mutex
				next    = make(chan int)
			)
			for range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						start := time.Now()
						if _, err := bt.Do(context.Background(), i%keys, i); err != nil {
							b.Error(err)
						}
						d := time.Since(start)
						waitsMu.Lock()
						waited += d
						waitsMu.Unlock()
					}
				}()
			}
			b.ResetTimer()
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			b.ReportMetric(float64(calls)/float64(b.N), "calls/req")
			b.ReportMetric(float64(b.N)/float64(max(calls, 1)), "reqs/call")
			b.ReportMetric(float64((waited-time.Duration(b.N)*callTime).Milliseconds())/float64(b.N), "ms-added/req")
		})
	}
}
