package sdk

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/utils/clock"

	"github.com/joinerhq/joiner/pkg/aws/apilimits"
)

// DefaultRateLimitScale is the share of AWS's published bucket sizes and refill rates the
// controller's clients pace themselves to (its --aws-rate-limit-scale): slightly under AWS's, so
// that the account's other callers (the console, the CLI, other controllers) keep some room and
// the controller stays out of RequestLimitExceeded on its own.
const DefaultRateLimitScale = 0.9

// demand is what one call asks of AWS's buckets beyond its request token: the instances it
// launches or terminates (units), and whether it is an unfiltered and unpaginated read.
type demand struct {
	units      float64
	unfiltered bool
}

// pacer is the client-side rate limit of one client set: one token bucket per AWS bucket
// (pkg/aws/apilimits), shared by every client and worker of the set, scaled by scale. Before
// each attempt a call reserves its tokens and waits until its buckets allow it: when the
// controller is over the rate, its calls queue here rather than at AWS, and it slows as a whole
// instead of each worker being refused and retrying.
type pacer struct {
	clock   clock.Clock
	scale   float64
	metrics *Metrics

	mu      sync.Mutex
	buckets map[string]*apilimits.TokenBucket
}

func newPacer(clk clock.Clock, scale float64, m *Metrics) *pacer {
	return &pacer{clock: clk, scale: scale, metrics: m, buckets: map[string]*apilimits.TokenBucket{}}
}

// bucket returns the set's token bucket for b, created full on first use.
func (p *pacer) bucket(b apilimits.Bucket) *apilimits.TokenBucket {
	p.mu.Lock()
	defer p.mu.Unlock()
	tb, ok := p.buckets[b.Name]
	if !ok {
		tb = apilimits.NewTokenBucket(b, p.clock, p.scale)
		p.buckets[b.Name] = tb
	}
	return tb
}

// draw is one bucket a call takes tokens from.
type draw struct {
	bucket apilimits.Bucket
	tokens float64
	// resource marks a resource bucket (instances), not a request bucket.
	resource bool
}

// draws are the buckets a call of action draws from, as AWS meters it: its request bucket (the
// smaller unfiltered one for an unfiltered, unpaginated read of the EC2 actions that have one),
// and its resource bucket, one token per instance. Actions AWS publishes no limit for draw
// nothing.
func draws(service, action string, d demand) []draw {
	var out []draw
	b, ok := apilimits.RequestBucket(service, action)
	if d.unfiltered {
		if u, uok := apilimits.UnfilteredBucket(service, action); uok {
			b, ok = u, true
		}
	}
	if ok {
		out = append(out, draw{bucket: b, tokens: 1})
	}
	if r, ok := apilimits.ResourceBucket(service, action); ok && d.units > 0 {
		out = append(out, draw{bucket: r, tokens: d.units, resource: true})
	}
	return out
}

// wait reserves the call's tokens in each of its buckets and blocks until the last of them
// allows it, or ctx ends (ctx's error is returned). serviceID is the SDK's (EC2), action the
// operation. A reservation is not given back when ctx ends: the call may be retried, and the
// debt only delays the next callers by what it would have cost.
func (p *pacer) wait(ctx context.Context, serviceID, action string, d demand) error {
	return p.waitFor(ctx, serviceID, action, draws(strings.ToLower(serviceID), action, d))
}

// waitFor is wait for the draws ds.
func (p *pacer) waitFor(ctx context.Context, serviceID, action string, ds []draw) error {
	if len(ds) == 0 {
		return nil
	}
	start := p.clock.Now()
	waits := make([]time.Duration, len(ds))
	var longest time.Duration
	for i, dr := range ds {
		waits[i] = p.bucket(dr.bucket).Reserve(dr.tokens)
		longest = max(longest, waits[i])
	}
	var err error
	if longest > 0 {
		t := p.clock.NewTimer(longest)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			err = ctx.Err()
		}
	}
	if p.metrics != nil {
		waited := p.clock.Since(start)
		for i, dr := range ds {
			p.metrics.rateLimitWait.WithLabelValues(serviceID, action, dr.bucket.Name).Observe(min(waits[i], waited).Seconds())
		}
	}
	return err
}

// throttled empties the request buckets of a call that AWS refused as throttled. AWS's bucket
// for the action is empty while the client's thought it held tokens (the account's other
// callers draw from it too): emptying the client's makes every worker of the set wait for its
// refill, instead of each learning of the throttle by being refused. Resource buckets are left
// alone: the error does not say which bucket refused, and emptying a bucket of a thousand
// instances refilled at two a second would stop launches for minutes on one throttle.
func (p *pacer) throttled(serviceID, action string, d demand) {
	for _, dr := range draws(strings.ToLower(serviceID), action, d) {
		if dr.resource {
			continue
		}
		tb := p.bucket(dr.bucket)
		if t := tb.Tokens(); t > 0 {
			tb.Reserve(t)
		}
	}
}

// demandOf is the demand of a call with the input params (the SDK's *ec2.XInput).
func demandOf(params any) demand {
	return demand{units: resourceUnits(params), unfiltered: unfilteredRead(params)}
}

// resourceUnits is how many instances a call launches, terminates, starts or stops: what EC2's
// resource buckets meter (apilimits.ResourceBucket). RunInstances counts its MaxCount, the most
// it may launch. 0 for every other call; CreateFleet draws from no resource bucket (EC2's page
// lists none for it).
func resourceUnits(params any) float64 {
	switch in := params.(type) {
	case *ec2.RunInstancesInput:
		return float64(aws.ToInt32(in.MaxCount))
	case *ec2.TerminateInstancesInput:
		return float64(len(in.InstanceIds))
	case *ec2.StartInstancesInput:
		return float64(len(in.InstanceIds))
	case *ec2.StopInstancesInput:
		return float64(len(in.InstanceIds))
	}
	return 0
}

// unfilteredRead reports whether params name neither a filter nor pagination: an input with a
// Filters field that is empty and MaxResults and NextToken fields that are unset. Inputs
// without a Filters field are not reads AWS meters as unfiltered (UnfilteredBucket then has no
// bucket for the action anyway). Reflection keeps this to the fields' names, which the seven
// actions of EC2's unfiltered list share.
func unfilteredRead(params any) bool {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	v = v.Elem()
	filters := v.FieldByName("Filters")
	if !filters.IsValid() || filters.Kind() != reflect.Slice || filters.Len() > 0 {
		return false
	}
	for _, name := range []string{"MaxResults", "NextToken"} {
		if f := v.FieldByName(name); f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() {
			return false
		}
	}
	return true
}
