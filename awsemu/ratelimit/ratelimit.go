package ratelimit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/utils/clock"

	"github.com/joinerhq/joiner/pkg/aws/apilimits"
)

// Mode is how the emulator meters: off (Scale 0), or AWS's published buckets with their capacity
// and refill rate multiplied by Scale (1: as AWS).
type Mode struct {
	Scale float64
}

// Off meters nothing; AWS meters with AWS's numbers.
var (
	Off = Mode{}
	AWS = Mode{Scale: 1}
)

// On reports whether requests are metered.
func (m Mode) On() bool { return m.Scale > 0 }

// String is the mode as ParseMode reads it: "off", "aws" or the factor ("0.5").
func (m Mode) String() string {
	switch {
	case !m.On():
		return "off"
	case m.Scale == 1:
		return "aws"
	}
	return strconv.FormatFloat(m.Scale, 'g', -1, 64)
}

// ParseMode reads "off", "aws", or a factor (a positive number: "0.5", "10") that multiplies
// AWS's capacities and refill rates.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off":
		return Off, nil
	case "aws":
		return AWS, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return Off, fmt.Errorf("rate limits %q: give off, aws, or a positive factor of AWS's limits (0.5, 10)", s)
	}
	return Mode{Scale: f}, nil
}

// Request is one API request as the limiter charges it.
type Request struct {
	// Account and Region are where AWS meters: the credentials' account, the SigV4 scope's Region.
	Account, Region string
	// Service is the SigV4 service ("ec2", "ssm", ...) and Action the API action.
	Service, Action string
	// Unfiltered is an EC2 action of the "unfiltered and unpaginated" list called with neither a
	// filter nor pagination: it draws from that smaller bucket.
	Unfiltered bool
	// Instances is how many instances the request launches, terminates, starts or stops: what a
	// resource bucket is charged.
	Instances int
}

// Refusal is a request the limiter refused, and the bucket that refused it.
type Refusal struct {
	Bucket string
}

// key is one bucket of one account and Region.
type key struct{ account, region, name string }

// meter is one bucket's state and counts.
type meter struct {
	bucket              apilimits.Bucket
	tokens              *apilimits.TokenBucket
	requests, throttled uint64
	taken               float64
}

// Limiter meters requests; its zero value is not usable: New.
type Limiter struct {
	clock clock.PassiveClock

	mu     sync.Mutex
	mode   Mode
	meters map[key]*meter
}

// New returns a limiter in mode m on clk.
func New(clk clock.PassiveClock, m Mode) *Limiter {
	return &Limiter{clock: clk, mode: m, meters: map[key]*meter{}}
}

// Mode returns the limiter's mode.
func (l *Limiter) Mode() Mode {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mode
}

// SetMode changes the mode. A change starts every bucket afresh, full and with its counts at
// zero; setting the mode it already has changes nothing.
func (l *Limiter) SetMode(m Mode) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m == l.mode {
		return
	}
	l.mode, l.meters = m, map[key]*meter{}
}

// get returns the meter of bucket b for r, made full on first use. Called with l.mu held.
func (l *Limiter) get(r Request, b apilimits.Bucket) *meter {
	k := key{r.Account, r.Region, b.Name}
	m := l.meters[k]
	if m == nil {
		m = &meter{bucket: b, tokens: apilimits.NewTokenBucket(b, l.clock, l.mode.Scale)}
		l.meters[k] = m
	}
	return m
}

// Admit charges r to its buckets: one token of its request bucket and, for an action with a
// resource bucket, one token per instance. Both are taken or neither: a refused request costs
// nothing. It returns nil when r may be served, else the bucket that refused it. With the mode
// off, or for an action AWS publishes no limit for, every request is admitted.
func (l *Limiter) Admit(r Request) *Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mode.On() {
		return nil
	}
	var charges []*meter
	var amounts []float64
	b, ok := apilimits.RequestBucket(r.Service, r.Action)
	if u, unfiltered := apilimits.UnfilteredBucket(r.Service, r.Action); unfiltered && r.Unfiltered {
		b, ok = u, true
	}
	if ok {
		charges, amounts = append(charges, l.get(r, b)), append(amounts, 1)
	}
	if rb, ok := apilimits.ResourceBucket(r.Service, r.Action); ok && r.Instances > 0 {
		charges, amounts = append(charges, l.get(r, rb)), append(amounts, float64(r.Instances))
	}
	var refused *meter
	for i, m := range charges {
		m.requests++
		if refused == nil && m.tokens.Tokens() < amounts[i] {
			refused = m
		}
	}
	if refused != nil {
		refused.throttled++
		return &Refusal{Bucket: refused.bucket.Name}
	}
	for i, m := range charges {
		// Tokens were checked above under the same lock; only refill can have added since.
		m.tokens.Take(amounts[i])
		m.taken += amounts[i]
	}
	return nil
}

// BucketState is one bucket of one account and Region as the inspection endpoint reports it.
type BucketState struct {
	Account string `json:"account"`
	Region  string `json:"region"`
	// Name is the bucket (apilimits.Bucket.Name: "ec2/CreateFleet", "ec2/RunInstances/instances").
	Name string `json:"name"`
	// Capacity and RefillPerSecond are the bucket's numbers after the mode's scale.
	Capacity        float64 `json:"capacity"`
	RefillPerSecond float64 `json:"refillPerSecond"`
	// Tokens is what the bucket holds now.
	Tokens float64 `json:"tokens"`
	// Requests counts the requests charged to the bucket, Throttled those it refused, and Taken
	// the tokens it gave (for a resource bucket, instances).
	Requests  uint64  `json:"requests"`
	Throttled uint64  `json:"throttled"`
	Taken     float64 `json:"taken"`
	// Source is the AWS page the numbers come from.
	Source string `json:"source"`
}

// Buckets returns every bucket used since the mode was set, sorted by account, Region and name.
func (l *Limiter) Buckets() []BucketState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]BucketState, 0, len(l.meters))
	for k, m := range l.meters {
		out = append(out, BucketState{Account: k.account, Region: k.region, Name: k.name,
			Capacity: m.tokens.Capacity(), RefillPerSecond: m.tokens.RefillPerSecond(), Tokens: m.tokens.Tokens(),
			Requests: m.requests, Throttled: m.throttled, Taken: m.taken, Source: m.bucket.Source})
	}
	slices.SortFunc(out, func(a, b BucketState) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Region, b.Region), cmp.Compare(a.Name, b.Name))
	})
	return out
}
