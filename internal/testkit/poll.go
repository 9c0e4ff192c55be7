package testkit

import (
	"testing"
	"time"
)

// interval is the wait between two checks: short enough that a test waits little beyond the
// moment its condition holds, long enough not to load an API server with reads.
const interval = 50 * time.Millisecond

// Eventually checks until check returns "" or timeout passes, then fails the test with check's
// last complaint. The first check is immediate.
func Eventually(t testing.TB, timeout time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		complaint := check()
		if complaint == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(complaint)
		}
		<-tick.C
	}
}

// Poll checks until cond holds or timeout passes, then fails the test naming what it waited for.
func Poll(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Eventually(t, timeout, func() string {
		if cond() {
			return ""
		}
		return "timed out after " + timeout.String() + " waiting for " + what
	})
}
