package console

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

const (
	// CostSampleInterval is how often `joiner console` and the controller's console sample the
	// cluster's cost per hour for the Overview's history.
	CostSampleInterval = time.Minute
	// CostHistory is how far back the Overview's cost history reaches; older samples are dropped.
	CostHistory = 6 * time.Hour
	// maxCostSamples bounds the history whatever the interval RecordCost is given.
	maxCostSamples = 2000
)

// costSample is the cluster's cost per hour at one time.
type costSample struct {
	At      time.Time
	PerHour float64
}

// costHistory is the samples RecordCost took, oldest first, at most CostHistory old and at most
// maxCostSamples of them. It is the console's only state; the mutex guards it between RecordCost
// and the requests.
type costHistory struct {
	mu      sync.Mutex
	samples []costSample
}

func (h *costHistory) add(s costSample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
	drop := 0
	for drop < len(h.samples) && s.At.Sub(h.samples[drop].At) > CostHistory {
		drop++
	}
	drop = max(drop, len(h.samples)-maxCostSamples)
	h.samples = append(h.samples[:0], h.samples[drop:]...)
}

func (h *costHistory) list() []costSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]costSample(nil), h.samples...)
}

// RecordCost samples the cluster's cost per hour (the Overview's "cost per hour now") at once and
// then every interval after the last sample until ctx is done, for the Overview's history; it
// returns nil when ctx is done. A sample that cannot be read is logged and skipped. The history lives in this process: it
// starts empty when the console starts.
func (c *Console) RecordCost(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return fmt.Errorf("recording the console's cost history: the interval must be positive, not %s", every)
	}
	for {
		if s, err := c.read(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			c.log.Error(err, "Reading the cluster for the cost history")
		} else {
			c.history.add(costSample{At: s.now, PerHour: s.overview().CostPerHour})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.clock.After(every):
		}
	}
}

// CostTrend is the Overview's cost history.
type CostTrend struct {
	// Samples are the cost per hour over time, oldest first, the last being now's.
	Samples []CostPoint `json:"samples"`
	// Spent is what the cluster cost from the first sample to the last (each sample's cost per
	// hour held until the next), over Over.
	Spent float64 `json:"spent"`
	Over  string  `json:"over"`
	// Since is the first sample's time (RFC 3339, UTC).
	Since string `json:"since"`
	// Min and Max are the lowest and highest cost per hour sampled.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Points is the samples as an SVG polyline's points in a 600x100 box (time left to right,
	// cost bottom to top, Max at the top), a step line.
	Points string `json:"-"`
}

// CostPoint is one sample of the cost history.
type CostPoint struct {
	At      time.Time `json:"at"`
	PerHour float64   `json:"perHour"`
}

// Chart size of CostTrend.Points.
const (
	chartWidth  = 600
	chartHeight = 100
)

// trend is the samples and, when later than the last, the cost per hour now: the chart and what
// was spent reach the present, not only the last sample.
func (h *costHistory) trend(now time.Time, perHour float64) *CostTrend {
	samples := h.list()
	if len(samples) == 0 {
		return nil
	}
	if now.After(samples[len(samples)-1].At) {
		samples = append(samples, costSample{At: now, PerHour: perHour})
	}
	t := &CostTrend{Min: samples[0].PerHour, Max: samples[0].PerHour}
	for i, s := range samples {
		t.Samples = append(t.Samples, CostPoint(s))
		t.Min, t.Max = min(t.Min, s.PerHour), max(t.Max, s.PerHour)
		if i > 0 {
			prev := samples[i-1]
			t.Spent += prev.PerHour * s.At.Sub(prev.At).Hours()
		}
	}
	first, last := samples[0].At, samples[len(samples)-1].At
	t.Over, t.Since = last.Sub(first).Round(time.Second).String(), first.UTC().Format(time.RFC3339)
	span := last.Sub(first)
	// A step line: each sample's cost holds until the next sample, as Spent counts it.
	var pts []string
	for i, s := range samples {
		x := 0.0
		if span > 0 {
			x = float64(s.At.Sub(first)) / float64(span) * chartWidth
		}
		y := float64(chartHeight)
		if t.Max > 0 {
			y = chartHeight - s.PerHour/t.Max*(chartHeight-4)
		}
		if i > 0 && s.PerHour != samples[i-1].PerHour {
			pts = append(pts, fmt.Sprintf("%.1f,%s", x, strings.Split(pts[len(pts)-1], ",")[1]))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	if len(pts) == 1 { // one sample: a flat line across the chart
		pts = append(pts, strings.Replace(pts[0], "0.0,", fmt.Sprintf("%d.0,", chartWidth), 1))
	}
	t.Points = strings.Join(pts, " ")
	return t
}
