package disruption

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func TestScheduleFiredWithin(t *testing.T) {
	monday := func(hour, minute int) time.Time { return time.Date(2026, 3, 2, hour, minute, 0, 0, time.UTC) } // a Monday
	tests := []struct {
		schedule string
		now      time.Time
		duration time.Duration
		want     bool
	}{
		{"0 9 * * 1-5", monday(10, 0), 8 * time.Hour, true},
		{"0 9 * * 1-5", monday(9, 0), 8 * time.Hour, true},
		{"0 9 * * 1-5", monday(17, 0), 8 * time.Hour, false}, // the window is (now-8h, now]: 9:00 is out
		{"0 9 * * 1-5", monday(8, 59), 8 * time.Hour, false},
		{"0 9 * * 1-5", monday(10, 0).AddDate(0, 0, 5), 8 * time.Hour, false}, // Saturday
		{"0 9 * * mon-fri", monday(10, 0), 8 * time.Hour, true},
		{"0 22 * * 0", monday(1, 0), 4 * time.Hour, true}, // Sunday 22:00 into Monday
		{"@daily", monday(0, 30), time.Hour, true},
		{"@daily", monday(1, 30), time.Hour, false},
		{"@hourly", monday(7, 10), 15 * time.Minute, true},
		{"*/15 * * * *", monday(7, 44), 10 * time.Minute, false},
		{"*/15 * * * *", monday(7, 46), 10 * time.Minute, true},
		{"0 0 13 * 5", time.Date(2026, 3, 6, 0, 30, 0, 0, time.UTC), time.Hour, true},  // Friday 6th: day-of-week matches
		{"0 0 13 * 5", time.Date(2026, 3, 13, 0, 30, 0, 0, time.UTC), time.Hour, true}, // 13th: day-of-month matches
		{"0 0 13 * 5", monday(0, 30), time.Hour, false},
		{"0 0 * 2 *", monday(0, 30), time.Hour, false},          // March
		{"0 0 1 * *", monday(0, 30), 40 * 24 * time.Hour, true}, // the 1st of March, a day ago
		{"0 0 29 2 *", monday(0, 30), 24 * time.Hour, false},    // 2026 has no 29 February
		{"0,30 3-5/2 * * *", time.Date(2026, 3, 2, 5, 31, 0, 0, time.UTC), time.Minute * 2, true},
	}
	for _, tt := range tests {
		s, err := parseSchedule(tt.schedule)
		if err != nil {
			t.Errorf("parseSchedule(%q): %v", tt.schedule, err)
			continue
		}
		if got := s.firedWithin(tt.now, tt.duration); got != tt.want {
			t.Errorf("%q fired within %s before %s = %v, want %v", tt.schedule, tt.duration, tt.now.Format(time.RFC3339), got, tt.want)
		}
	}
	for _, bad := range []string{"61 * * * *", "* * * *", "* * 0 * *", "5-1 * * * *", "*/0 * * * *", "@sometimes", "* * * * 7"} {
		if _, err := parseSchedule(bad); err == nil {
			t.Errorf("parseSchedule(%q) succeeded, want an error", bad)
		}
	}
}

func TestAllowedDisruptions(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) // Monday 10:00
	pool := func(budgets ...v1.Budget) *v1.NodePool {
		return &v1.NodePool{Spec: v1.NodePoolSpec{Disruption: v1.Disruption{Budgets: budgets}}}
	}
	window := func(b v1.Budget, schedule string, d time.Duration) v1.Budget {
		b.Schedule, b.Duration = ptr.To(schedule), &metav1.Duration{Duration: d}
		return b
	}
	tests := []struct {
		name     string
		nodePool *v1.NodePool
		nodes    int
		want     int
		wantErr  bool
	}{
		{name: "an empty list limits nothing, as upstream's API", nodePool: pool(), nodes: 3, want: int(^uint(0) >> 1)},
		{name: "10% of 25 rounds up to 3", nodePool: pool(v1.Budget{Nodes: "10%"}), nodes: 25, want: 3},
		{name: "0% of 25", nodePool: pool(v1.Budget{Nodes: "0%"}), nodes: 25, want: 0},
		{name: "10% of none", nodePool: pool(v1.Budget{Nodes: "10%"}), nodes: 0, want: 0},
		{name: "a number", nodePool: pool(v1.Budget{Nodes: "3"}), nodes: 100, want: 3},
		{name: "the smallest applies", nodePool: pool(v1.Budget{Nodes: "50%"}, v1.Budget{Nodes: "2"}), nodes: 10, want: 2},
		{name: "other reasons do not apply", nodePool: pool(v1.Budget{Nodes: "5"}, v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}), nodes: 10, want: 5},
		{name: "Empty among the reasons applies", nodePool: pool(v1.Budget{Nodes: "5"}, v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted, v1.DisruptionReasonEmpty}}), nodes: 10, want: 0},
		{name: "only budgets for other reasons: unlimited", nodePool: pool(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonUnderutilized}}), nodes: 10, want: int(^uint(0) >> 1)},
		{name: "open window applies", nodePool: pool(v1.Budget{Nodes: "5"}, window(v1.Budget{Nodes: "0"}, "0 9 * * 1-5", 8*time.Hour)), nodes: 10, want: 0},
		{name: "closed window does not", nodePool: pool(v1.Budget{Nodes: "5"}, window(v1.Budget{Nodes: "0"}, "0 18 * * 1-5", 8*time.Hour)), nodes: 10, want: 5},
		{name: "unreadable schedule blocks", nodePool: pool(v1.Budget{Nodes: "5"}, window(v1.Budget{Nodes: "3"}, "0 25 * * *", time.Hour)), nodes: 10, want: 0, wantErr: true},
	}
	for _, tt := range tests {
		got, err := allowedDisruptions(tt.nodePool, v1.DisruptionReasonEmpty, tt.nodes, now)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: allowedDisruptions = %d, %v; want %d, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
