package housekeeping

import (
	"context"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/internal/testkit"
)

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

type fakePrices struct{ counter }

func (f *fakePrices) Refresh(context.Context) error { f.inc(); return nil }

type fakeTemplates struct{ counter }

func (f *fakeTemplates) GarbageCollect(context.Context) ([]string, error) { f.inc(); return nil, nil }

func TestTicksOnTheClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	prices, templates := &fakePrices{}, &fakeTemplates{}
	c := NewController(prices, templates, clk)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = c.Start(ctx); close(done) }()
	testkit.Poll(t, time.Second, "the first refresh", func() bool { return prices.get() == 1 })
	testkit.Poll(t, time.Second, "the tickers", func() bool { return clk.HasWaiters() })

	clk.Step(PricesInterval)
	testkit.Poll(t, time.Second, "a refresh after PricesInterval", func() bool { return prices.get() == 2 })
	if templates.get() != 0 {
		t.Errorf("launch templates collected after %v", PricesInterval)
	}
	clk.Step(LaunchTemplateGCInterval - PricesInterval)
	testkit.Poll(t, time.Second, "a collection after LaunchTemplateGCInterval", func() bool { return templates.get() == 1 })

	cancel()
	<-done
	if !c.NeedLeaderElection() {
		t.Error("runs on every replica")
	}
}
