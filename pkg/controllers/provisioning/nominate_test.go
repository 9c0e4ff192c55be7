package provisioning_test

import (
	"testing"
	"time"

	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
)

// TestNominationNotRepeated: a pod still pending on in-flight NodeClaims is placed on one again
// by every batch, but told so once in two minutes, not once a batch; the NodeClaims of a batch,
// created in parallel, are each created once and each has its pods.
func TestNominationNotRepeated(t *testing.T) {
	reset(t)
	h := newHarness(t)
	create(t, nodePool("default"))
	const pods = 30
	for i := range pods {
		create(t, pendingPod(string(rune('a'+i%26))+string(rune('a'+i/26)), "1500m", "2Gi"))
	}
	h.runBatch(t)
	claims := nodeClaims(t)
	if len(claims) < 2 {
		t.Fatalf("got %d NodeClaims for %d pods of 1.5 CPUs, want several (created in parallel)", len(claims), pods)
	}
	perClaim := map[string]int{}
	for _, e := range h.events.byReason(provisioning.ReasonNominated) {
		perClaim[e.Related]++
	}
	for _, nc := range claims {
		if perClaim[nc.Name] == 0 {
			t.Errorf("nodeclaim %s was created, but no pod was nominated to it", nc.Name)
		}
	}
	for _, tc := range []struct {
		name    string
		advance time.Duration
		want    int
	}{
		{name: "the next batch", want: pods},
		{name: "a minute later", advance: time.Minute, want: pods},
		{name: "two minutes after the first", advance: time.Minute, want: 2 * pods},
	} {
		h.clock.Step(tc.advance)
		h.runBatch(t)
		if got := len(nodeClaims(t)); got != len(claims) {
			t.Fatalf("%s: %d NodeClaims, want the first batch's %d", tc.name, got, len(claims))
		}
		if got := len(h.events.byReason(provisioning.ReasonNominated)); got != tc.want {
			t.Errorf("%s: %d Nominated events in all, want %d", tc.name, got, tc.want)
		}
	}
}
