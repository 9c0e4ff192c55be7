package testkit

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatal instead of ending the test, so the tests can
// check that Poll and Eventually fail.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

// Fatal records the failure and ends the goroutine, as testing.T's Fatal does.
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	panic(r)
}

// run calls fn with a recorder and returns what it failed with, "" when it did not.
func run(fn func(t testing.TB)) (failed string) {
	r := &recorder{}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	fn(r)
	return ""
}

func TestPoll(t *testing.T) {
	tests := []struct {
		name     string
		holdsAt  int // the check that first holds; 0 never
		wantFail string
	}{
		{name: "holds at once", holdsAt: 1},
		{name: "holds later", holdsAt: 3},
		{name: "never holds", wantFail: "timed out after 100ms waiting for the thing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := 0
			failed := run(func(r testing.TB) {
				Poll(r, 100*time.Millisecond, "the thing", func() bool {
					checks++
					return checks == tt.holdsAt
				})
			})
			if failed != tt.wantFail {
				t.Errorf("failed with %q, want %q", failed, tt.wantFail)
			}
			if tt.holdsAt != 0 && checks != tt.holdsAt {
				t.Errorf("%d checks, want %d", checks, tt.holdsAt)
			}
		})
	}
}

// TestEventuallyFailsWithLastComplaint: the failure is the last check's complaint, not the first.
func TestEventuallyFailsWithLastComplaint(t *testing.T) {
	checks := 0
	failed := run(func(r testing.TB) {
		Eventually(r, 60*time.Millisecond, func() string {
			checks++
			return fmt.Sprintf("check %d", checks)
		})
	})
	if failed != fmt.Sprintf("check %d", checks) || checks < 2 {
		t.Errorf("failed with %q after %d checks", failed, checks)
	}
	if !strings.HasPrefix(failed, "check ") {
		t.Errorf("failed with %q, want a complaint", failed)
	}
}
