// Package batcher merges concurrent requests with the same key into one call: requests gather
// in an open batch per key until no request came for the idle window, the batch has been open
// for the max window, or it holds the max number of requests; then one call serves them all and
// each caller gets its own result. It knows nothing of AWS: the caller's executor makes the
// merged call and splits its answer.
//
// It must not hold package-level state nor read the wall clock: windows are timed by the clock
// it is given.
package batcher

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Options are a batcher's windows and size.
type Options struct {
	// Idle closes a batch when no request joined it for this long.
	Idle time.Duration
	// Max closes a batch this long after its first request, however busy.
	Max time.Duration
	// MaxItems closes a batch when it holds this many requests; 0 is no limit.
	MaxItems int
}

// Result is one caller's share of a merged call.
type Result[Out any] struct {
	Out Out
	Err error
}

// Executor makes the merged call for the inputs of one batch, all with the same key, and
// returns one result per input, in their order. ctx is the first caller's context without its
// cancellation: a caller that gives up must not cancel the call the others wait for.
type Executor[K comparable, In, Out any] func(ctx context.Context, key K, ins []In) []Result[Out]

// Batcher merges requests by key. It is safe for concurrent use.
type Batcher[K comparable, In, Out any] struct {
	opts  Options
	clock clock.WithDelayedExecution
	exec  Executor[K, In, Out]
	// abandoned, when set, receives the results whose caller had given up (its context ended)
	// before they arrived: a launched instance nobody took, for example.
	abandoned func(in In, r Result[Out])

	mu   sync.Mutex
	open map[K]*batch[In, Out]
}

type batch[In, Out any] struct {
	ctx  context.Context
	reqs []*request[In, Out]
	idle clock.Timer
	max  clock.Timer
	// idleAt and maxAt are when its windows end.
	idleAt, maxAt time.Time
	closed        bool
}

type request[In, Out any] struct {
	in   In
	done chan Result[Out]
	mu   sync.Mutex
	gone bool
}

// New returns a batcher calling exec for each batch. Options with a non-positive Idle or Max
// are refused.
func New[K comparable, In, Out any](opts Options, clk clock.WithDelayedExecution, exec Executor[K, In, Out]) (*Batcher[K, In, Out], error) {
	if opts.Idle <= 0 || opts.Max <= 0 || opts.Idle > opts.Max {
		return nil, fmt.Errorf("batcher windows idle %s and max %s, want 0 < idle <= max", opts.Idle, opts.Max)
	}
	if opts.MaxItems < 0 {
		return nil, fmt.Errorf("batcher maxItems %d, want 0 (no limit) or more", opts.MaxItems)
	}
	return &Batcher[K, In, Out]{opts: opts, clock: clk, exec: exec, open: map[K]*batch[In, Out]{}}, nil
}

// OnAbandoned sets the function that receives the results of callers that gave up; it must be
// set before the first Do.
func (b *Batcher[K, In, Out]) OnAbandoned(f func(in In, r Result[Out])) { b.abandoned = f }

// Do adds the input to the open batch of its key (opening one if none) and returns its share of
// the merged call. When ctx ends first it returns ctx's error; the result, when it comes, goes
// to the OnAbandoned function.
func (b *Batcher[K, In, Out]) Do(ctx context.Context, key K, in In) (Out, error) {
	req := &request[In, Out]{in: in, done: make(chan Result[Out], 1)}
	now := b.clock.Now()
	b.mu.Lock()
	bt := b.open[key]
	if bt != nil && (!now.Before(bt.idleAt) || !now.Before(bt.maxAt)) {
		// Its window is over and its timer about to close it: it takes no more requests.
		b.closeLocked(key, bt)
		bt = nil
	}
	if bt == nil {
		bt = &batch[In, Out]{ctx: context.WithoutCancel(ctx), maxAt: now.Add(b.opts.Max)}
		b.open[key] = bt
		// The timers close the batch from a goroutine of their own: a fake clock runs them while
		// holding its lock, which Stop takes.
		bt.max = b.clock.AfterFunc(b.opts.Max, func() { go b.close(key, bt) })
	} else if bt.idle != nil {
		bt.idle.Stop()
	}
	bt.reqs = append(bt.reqs, req)
	if b.opts.MaxItems > 0 && len(bt.reqs) >= b.opts.MaxItems {
		b.closeLocked(key, bt)
	} else {
		bt.idleAt = now.Add(b.opts.Idle)
		bt.idle = b.clock.AfterFunc(b.opts.Idle, func() { go b.close(key, bt) })
	}
	b.mu.Unlock()
	select {
	case r := <-req.done:
		return r.Out, r.Err
	case <-ctx.Done():
	}
	req.mu.Lock()
	defer req.mu.Unlock()
	select {
	case r := <-req.done:
		// Delivered meanwhile: the caller takes it after all, so that nothing is lost.
		return r.Out, r.Err
	default:
	}
	req.gone = true
	var zero Out
	return zero, ctx.Err()
}

// close ends the batch, if still open, and runs its call.
func (b *Batcher[K, In, Out]) close(key K, bt *batch[In, Out]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closeLocked(key, bt)
}

// closeLocked ends the batch, if still open, and starts its call; b.mu is held.
func (b *Batcher[K, In, Out]) closeLocked(key K, bt *batch[In, Out]) {
	if bt.closed {
		return
	}
	bt.closed = true
	if b.open[key] == bt {
		delete(b.open, key)
	}
	bt.max.Stop()
	if bt.idle != nil {
		bt.idle.Stop()
	}
	go b.run(key, bt)
}

func (b *Batcher[K, In, Out]) run(key K, bt *batch[In, Out]) {
	ins := make([]In, len(bt.reqs))
	for i, r := range bt.reqs {
		ins[i] = r.in
	}
	results := b.exec(bt.ctx, key, ins)
	for i, r := range bt.reqs {
		res := Result[Out]{Err: fmt.Errorf("batched call returned %d results for %d requests", len(results), len(ins))}
		if i < len(results) {
			res = results[i]
		}
		r.mu.Lock()
		gone := r.gone
		if !gone {
			r.done <- res
		}
		r.mu.Unlock()
		if gone && b.abandoned != nil {
			b.abandoned(r.in, res)
		}
	}
}
