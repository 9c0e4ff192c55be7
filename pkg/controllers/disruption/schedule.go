package disruption

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// schedule is a budget's cron schedule, read by github.com/robfig/cron/v3's standard parser
// exactly as upstream Karpenter reads it (cron.ParseStandard with a "TZ=UTC " prefix): five
// fields (minute hour day-of-month month day-of-week) in UTC, with *, ?, lists, ranges, steps,
// month and day names, and the macros @yearly, @annually, @monthly, @weekly, @daily, @midnight
// and @hourly; when day-of-month and day-of-week are both restricted, a day matching either
// matches.
type schedule struct {
	cron cron.Schedule
}

// budgetMacros are the descriptors the NodePool API admits (its validation rule lists them);
// robfig's @every is not one of them.
var budgetMacros = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// parseSchedule parses a five-field cron expression or a macro, in UTC. A schedule that names
// its own time zone (TZ=... or CRON_TZ=...) is refused: budget schedules are UTC, and upstream
// Karpenter refuses them too (its "TZ=UTC " prefix then leaves six fields).
func parseSchedule(expr string) (*schedule, error) {
	trimmed := strings.TrimSpace(expr)
	if strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=") {
		zone, _, _ := strings.Cut(trimmed, " ")
		return nil, fmt.Errorf("schedule %q names a time zone (%s), but budget schedules are always in UTC: remove %s and write the times in UTC", expr, zone, zone)
	}
	if strings.HasPrefix(trimmed, "@") && !slices.Contains(budgetMacros, trimmed) {
		return nil, fmt.Errorf("schedule %q is not a macro budgets accept: use one of %s, or five fields (minute hour day-of-month month day-of-week)", expr, strings.Join(budgetMacros, ", "))
	}
	s, err := cron.ParseStandard("TZ=UTC " + trimmed)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: want five fields (minute hour day-of-month month day-of-week, for example \"0 9 * * 1-5\") or a macro such as @daily, %w", expr, err)
	}
	return &schedule{cron: s}, nil
}

// firedWithin reports whether the schedule fired at some time in (now-d, now], in UTC: whether
// a window of length d that starts at each firing is open at now. It is upstream Karpenter's
// Budget.IsActive: the next firing after now-d is not after now. That includes robfig's limit:
// Next gives up after five years and returns the zero time, so a schedule that never fires
// (0 0 30 2 *) counts as active, as it does upstream.
func (s *schedule) firedWithin(now time.Time, d time.Duration) bool {
	now = now.UTC()
	return !s.cron.Next(now.Add(-d)).After(now)
}
