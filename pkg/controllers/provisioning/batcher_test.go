package provisioning_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
)

func TestBatcher(t *testing.T) {
	type step struct {
		advance  time.Duration
		trigger  bool
		key      types.UID
		take     bool
		retry    bool
		wantOpen bool
		wantWait time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "closed until triggered", steps: []step{{advance: time.Hour}}},
		{name: "idle window", steps: []step{
			{trigger: true, wantOpen: true, wantWait: time.Second},
			{advance: 400 * time.Millisecond, wantOpen: true, wantWait: 600 * time.Millisecond},
			{advance: 600 * time.Millisecond, wantOpen: true},
		}},
		{name: "a trigger extends the idle window", steps: []step{
			{trigger: true, wantOpen: true, wantWait: time.Second},
			{advance: 900 * time.Millisecond, trigger: true, wantOpen: true, wantWait: time.Second},
		}},
		{name: "max window caps extensions", steps: []step{
			{trigger: true, wantOpen: true, wantWait: time.Second},
			{advance: 9500 * time.Millisecond, trigger: true, wantOpen: true, wantWait: 500 * time.Millisecond},
			{advance: 500 * time.Millisecond, trigger: true, wantOpen: true},
		}},
		{name: "take closes, the next trigger opens afresh", steps: []step{
			{trigger: true, advance: 0, wantOpen: true, wantWait: time.Second},
			{advance: time.Second, take: true},
			{advance: time.Minute, trigger: true, wantOpen: true, wantWait: time.Second},
		}},
		{name: "a key seen in the window does not extend it", steps: []step{
			{key: "a", wantOpen: true, wantWait: time.Second},
			{advance: 900 * time.Millisecond, key: "a", wantOpen: true, wantWait: 100 * time.Millisecond},
			{advance: 50 * time.Millisecond, key: "b", wantOpen: true, wantWait: time.Second},
			{advance: 950 * time.Millisecond, key: "a", wantOpen: true, wantWait: 50 * time.Millisecond},
			{advance: 50 * time.Millisecond, trigger: true, wantOpen: true, wantWait: time.Second},
		}},
		{name: "a key seen in an earlier window opens the next", steps: []step{
			{key: "a", wantOpen: true, wantWait: time.Second},
			{advance: time.Second, take: true},
			{advance: time.Minute, key: "a", wantOpen: true, wantWait: time.Second},
		}},
		{name: "retry is due at once", steps: []step{
			{trigger: true, advance: 0, wantOpen: true, wantWait: time.Second},
			{advance: time.Second, take: true},
			{retry: true, wantOpen: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			b := provisioning.NewBatcher(clk, time.Second, 10*time.Second)
			for i, s := range tt.steps {
				clk.SetTime(clk.Now().Add(s.advance))
				if s.trigger {
					b.Trigger()
				}
				if s.key != "" {
					b.TriggerFor(s.key)
				}
				if s.take {
					b.Take()
				}
				if s.retry {
					b.Retry()
				}
				wait, open := b.Wait()
				if open != s.wantOpen || wait != s.wantWait {
					t.Errorf("step %d: Wait() = %s, %t; want %s, %t", i, wait, open, s.wantWait, s.wantOpen)
				}
			}
		})
	}
}
