package disruption

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// schedule is a parsed cron expression: five fields (minute hour day-of-month month day-of-week)
// read in UTC, with the semantics of github.com/robfig/cron's standard parser, which Karpenter
// uses for budgets: *, ?, lists, ranges, steps (a/n means a to the field's end), month names
// (jan-dec) and day names (sun-sat, 0-6), the macros @yearly, @annually, @monthly, @weekly,
// @daily, @midnight and @hourly; when day-of-month and day-of-week are both restricted, a day
// matching either matches. Joiner has no cron dependency, hence this small parser.
type schedule struct {
	minute, hour, dom, month, dow uint64
	// domStar and dowStar are true when the field was * or ?.
	domStar, dowStar bool
}

var macros = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

type bounds struct {
	min, max int
	names    map[string]int
}

var (
	minuteBounds = bounds{0, 59, nil}
	hourBounds   = bounds{0, 23, nil}
	domBounds    = bounds{1, 31, nil}
	monthBounds  = bounds{1, 12, map[string]int{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}}
	dowBounds = bounds{0, 6, map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}}
)

// parseSchedule parses a five-field cron expression or a macro.
func parseSchedule(expr string) (*schedule, error) {
	expr = strings.TrimSpace(expr)
	if m, ok := macros[expr]; ok {
		expr = m
	}
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return nil, fmt.Errorf("schedule %q: want five fields (minute hour day-of-month month day-of-week) or a macro", expr)
	}
	s := &schedule{}
	var err error
	for i, f := range []struct {
		out  *uint64
		star *bool
		b    bounds
	}{{&s.minute, nil, minuteBounds}, {&s.hour, nil, hourBounds}, {&s.dom, &s.domStar, domBounds}, {&s.month, nil, monthBounds}, {&s.dow, &s.dowStar, dowBounds}} {
		var star bool
		if *f.out, star, err = parseField(fields[i], f.b); err != nil {
			return nil, fmt.Errorf("schedule %q, %w", expr, err)
		}
		if f.star != nil {
			*f.star = star
		}
	}
	return s, nil
}

// parseField returns the bits of the values a comma-separated field allows, and whether it
// started with * or ?.
func parseField(field string, b bounds) (uint64, bool, error) {
	var bits uint64
	star := false
	for part := range strings.SplitSeq(field, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return 0, false, fmt.Errorf("bad step in %q", part)
			}
			step = n
		}
		var lo, hi int
		switch rng {
		case "*", "?":
			lo, hi, star = b.min, b.max, true
		default:
			first, last, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = value(first, b); err != nil {
				return 0, false, err
			}
			hi = lo
			if isRange {
				if hi, err = value(last, b); err != nil {
					return 0, false, err
				}
			} else if hasStep {
				hi = b.max
			}
		}
		if lo > hi {
			return 0, false, fmt.Errorf("range %q runs backwards", part)
		}
		for v := lo; v <= hi; v += step {
			bits |= 1 << uint(v)
		}
	}
	return bits, star, nil
}

func value(text string, b bounds) (int, error) {
	if v, ok := b.names[strings.ToLower(text)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(text)
	if err != nil || v < b.min || v > b.max {
		return 0, fmt.Errorf("value %q is not in %d-%d", text, b.min, b.max)
	}
	return v, nil
}

// dayMatches reports whether the schedule fires on t's day.
func (s *schedule) dayMatches(t time.Time) bool {
	dom := s.dom&(1<<uint(t.Day())) != 0
	dow := s.dow&(1<<uint(t.Weekday())) != 0
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}

// firedWithin reports whether the schedule fired at some minute in (now-d, now], in UTC: whether
// a window of length d that starts at each firing is open at now.
func (s *schedule) firedWithin(now time.Time, d time.Duration) bool {
	now = now.UTC()
	earliest := now.Add(-d)
	for t := now.Truncate(time.Minute); t.After(earliest); {
		switch {
		case s.month&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case s.hour&(1<<uint(t.Hour())) == 0:
			t = t.Truncate(time.Hour).Add(-time.Minute)
		case s.minute&(1<<uint(t.Minute())) == 0:
			t = t.Add(-time.Minute)
		default:
			return true
		}
	}
	return false
}
