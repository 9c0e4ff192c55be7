package disruption

import (
	"strings"
	"testing"
	"time"
)

// TestScheduleUpstreamSemantics checks budget schedules against upstream Karpenter's
// Budget.IsActive: cron.ParseStandard("TZ=UTC " + schedule), and the budget is active at now when
// the schedule's next firing after now-duration is not after now.
func TestScheduleUpstreamSemantics(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name     string
		schedule string
		now      string
		duration time.Duration
		want     bool
	}{
		// 2026-03-02 is a Monday.
		{name: "weekday window open", schedule: "0 9 * * 1-5", now: "2026-03-02T10:00:00Z", duration: 8 * time.Hour, want: true},
		{name: "the firing minute itself is in the window", schedule: "0 9 * * 1-5", now: "2026-03-02T09:00:00Z", duration: 8 * time.Hour, want: true},
		{name: "the window is (now-d, now]: exactly d later it is closed", schedule: "0 9 * * 1-5", now: "2026-03-02T17:00:00Z", duration: 8 * time.Hour, want: false},
		{name: "one second before it closes", schedule: "0 9 * * 1-5", now: "2026-03-02T16:59:59Z", duration: 8 * time.Hour, want: true},
		{name: "before the firing", schedule: "0 9 * * 1-5", now: "2026-03-02T08:59:59Z", duration: 8 * time.Hour, want: false},
		{name: "Saturday", schedule: "0 9 * * 1-5", now: "2026-03-07T10:00:00Z", duration: 8 * time.Hour, want: false},
		{name: "day names, any case", schedule: "0 9 * * MON-fri", now: "2026-03-02T10:00:00Z", duration: 8 * time.Hour, want: true},
		{name: "month names", schedule: "0 0 * jan,mar *", now: "2026-03-02T00:30:00Z", duration: time.Hour, want: true},
		{name: "a window across midnight", schedule: "0 22 * * 0", now: "2026-03-02T01:00:00Z", duration: 4 * time.Hour, want: true},
		{name: "a window across a month end", schedule: "0 23 28 2 *", now: "2026-03-01T01:00:00Z", duration: 3 * time.Hour, want: true},
		{name: "@yearly", schedule: "@yearly", now: "2026-01-01T00:10:00Z", duration: time.Hour, want: true},
		{name: "@annually", schedule: "@annually", now: "2026-03-02T00:10:00Z", duration: time.Hour, want: false},
		{name: "@monthly", schedule: "@monthly", now: "2026-03-01T05:00:00Z", duration: 6 * time.Hour, want: true},
		{name: "@weekly fires on Sunday", schedule: "@weekly", now: "2026-03-01T00:30:00Z", duration: time.Hour, want: true},
		{name: "@weekly not on Monday", schedule: "@weekly", now: "2026-03-02T00:30:00Z", duration: time.Hour, want: false},
		{name: "@daily", schedule: "@daily", now: "2026-03-02T00:30:00Z", duration: time.Hour, want: true},
		{name: "@midnight", schedule: "@midnight", now: "2026-03-02T01:30:00Z", duration: time.Hour, want: false},
		{name: "@hourly", schedule: "@hourly", now: "2026-03-02T07:10:00Z", duration: 15 * time.Minute, want: true},
		{name: "steps: not yet", schedule: "*/15 * * * *", now: "2026-03-02T07:44:00Z", duration: 10 * time.Minute, want: false},
		{name: "steps: 7:45 fired", schedule: "*/15 * * * *", now: "2026-03-02T07:46:00Z", duration: 10 * time.Minute, want: true},
		{name: "a/n runs to the field's end", schedule: "50/5 * * * *", now: "2026-03-02T07:56:00Z", duration: time.Minute * 2, want: true},
		{name: "a/n does not wrap", schedule: "50/5 * * * *", now: "2026-03-02T08:01:00Z", duration: time.Minute * 5, want: false},
		{name: "ranges with steps and lists", schedule: "0,30 3-5/2 * * *", now: "2026-03-02T05:31:00Z", duration: 2 * time.Minute, want: true},
		{name: "? is *", schedule: "0 0 ? * ?", now: "2026-03-02T00:30:00Z", duration: time.Hour, want: true},
		{name: "day-of-month or day-of-week: the weekday matches", schedule: "0 0 13 * 5", now: "2026-03-06T00:30:00Z", duration: time.Hour, want: true},
		{name: "day-of-month or day-of-week: the date matches", schedule: "0 0 13 * 5", now: "2026-03-13T00:30:00Z", duration: time.Hour, want: true},
		{name: "day-of-month or day-of-week: neither", schedule: "0 0 13 * 5", now: "2026-03-02T00:30:00Z", duration: time.Hour, want: false},
		{name: "day-of-month with day-of-week *: both must match", schedule: "0 0 13 * *", now: "2026-03-06T00:30:00Z", duration: time.Hour, want: false},
		{name: "another month", schedule: "0 0 * 2 *", now: "2026-03-02T00:30:00Z", duration: time.Hour, want: false},
		{name: "a long window", schedule: "0 0 1 * *", now: "2026-03-02T00:30:00Z", duration: 40 * 24 * time.Hour, want: true},
		{name: "29 February in a year without one", schedule: "0 0 29 2 *", now: "2026-03-02T00:30:00Z", duration: 24 * time.Hour, want: false},
		{name: "29 February in a leap year", schedule: "0 0 29 2 *", now: "2028-02-29T10:00:00Z", duration: 24 * time.Hour, want: true},
		// robfig's Next gives up after five years and returns the zero time, which is not after
		// now: upstream then counts the budget active, and so does Joiner.
		{name: "a schedule that never fires is active, as upstream", schedule: "0 0 30 2 *", now: "2026-03-02T00:30:00Z", duration: time.Hour, want: true},
		{name: "a time in another zone is read in UTC", schedule: "0 9 * * *", now: "2026-03-02T10:00:00+01:00", duration: time.Minute, want: true},
		{name: "blanks around the expression", schedule: "  0 9 * * *  ", now: "2026-03-02T09:00:30Z", duration: time.Minute, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSchedule(tt.schedule)
			if err != nil {
				t.Fatalf("parseSchedule(%q): %v", tt.schedule, err)
			}
			if got := s.firedWithin(at(tt.now), tt.duration); got != tt.want {
				t.Errorf("%q active at %s for %s = %v, want %v", tt.schedule, tt.now, tt.duration, got, tt.want)
			}
		})
	}
}

func TestParseScheduleErrors(t *testing.T) {
	tests := []struct {
		schedule string
		// wantInError is part of the error message.
		wantInError string
	}{
		{schedule: "TZ=Europe/Paris 0 9 * * *", wantInError: "budget schedules are always in UTC: remove TZ=Europe/Paris"},
		{schedule: "CRON_TZ=UTC 0 9 * * *", wantInError: "remove CRON_TZ=UTC"},
		{schedule: "@every 1h", wantInError: "not a macro budgets accept"},
		{schedule: "@sometimes", wantInError: "not a macro budgets accept"},
		{schedule: "", wantInError: "five fields"},
		{schedule: "* * * *", wantInError: "five fields"},
		{schedule: "0 * * * * *", wantInError: "five fields"}, // no seconds field in the standard parser
		{schedule: "61 * * * *", wantInError: "five fields"},
		{schedule: "0 24 * * *", wantInError: "five fields"},
		{schedule: "* * 0 * *", wantInError: "five fields"},
		{schedule: "* * * 13 *", wantInError: "five fields"},
		{schedule: "* * * * 7", wantInError: "five fields"}, // robfig's day-of-week is 0-6
		{schedule: "5-1 * * * *", wantInError: "five fields"},
		{schedule: "*/0 * * * *", wantInError: "five fields"},
		{schedule: "0 9 * * funday", wantInError: "five fields"},
	}
	for _, tt := range tests {
		_, err := parseSchedule(tt.schedule)
		if err == nil {
			t.Errorf("parseSchedule(%q) succeeded, want an error", tt.schedule)
			continue
		}
		if !strings.Contains(err.Error(), tt.wantInError) {
			t.Errorf("parseSchedule(%q) = %v, want it to say %q", tt.schedule, err, tt.wantInError)
		}
	}
}
