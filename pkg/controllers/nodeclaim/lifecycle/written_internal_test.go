package lifecycle

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestWrittenStatusShown: a reconcile arriving at the status last written, its transition times
// aside, within writtenStaleFor, is taken for one reading a stale cache; any other status, or
// the same one later, is not.
func TestWrittenStatusShown(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nodeClaim := func(registered metav1.ConditionStatus, transition time.Time) *v1.NodeClaim {
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{UID: "uid"}}
		nc.Status.ProviderID = "aws:///us-west-2a/i-1"
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeRegistered, Status: registered, Reason: "Registered", LastTransitionTime: metav1.NewTime(transition)}}
		return nc
	}
	var w writtenStatuses
	w.record(nodeClaim(metav1.ConditionTrue, at), at)
	for _, tc := range []struct {
		name string
		nc   *v1.NodeClaim
		now  time.Time
		want bool
	}{
		{name: "same status, later transition time", nc: nodeClaim(metav1.ConditionTrue, at.Add(time.Second)), now: at.Add(time.Second), want: true},
		{name: "another status", nc: nodeClaim(metav1.ConditionFalse, at), now: at.Add(time.Second), want: false},
		{name: "same status, long after", nc: nodeClaim(metav1.ConditionTrue, at), now: at.Add(writtenStaleFor), want: false},
		{name: "another NodeClaim", nc: func() *v1.NodeClaim { nc := nodeClaim(metav1.ConditionTrue, at); nc.UID = "other"; return nc }(), now: at, want: false},
	} {
		if got := w.shown(tc.nc, tc.now); got != tc.want {
			t.Errorf("%s: shown = %v, want %v", tc.name, got, tc.want)
		}
	}
	w.forget("uid")
	if w.shown(nodeClaim(metav1.ConditionTrue, at), at) {
		t.Error("shown after forget, want not")
	}
}
