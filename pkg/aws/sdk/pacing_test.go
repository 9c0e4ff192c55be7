package sdk

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/internal/testkit"
	"github.com/joinerhq/joiner/pkg/aws/apilimits"
)

var epoch = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// TestPacerTakesTheBucketsTime starts calls all at once against a pacer on a fake clock and
// checks that the last of them is let through when the buckets allow it, and not before: with
// capacity C, refill R per second and N calls of one token, (N-C)/R seconds.
func TestPacerTakesTheBucketsTime(t *testing.T) {
	tests := []struct {
		name  string
		scale float64
		calls int
		// draws of every call: either given, or those of service and action with demand.
		draws           []draw
		service, action string
		demand          demand
		want            time.Duration
	}{
		{name: "within capacity", scale: 1, calls: 10,
			draws: []draw{{bucket: apilimits.Bucket{Name: "t/a", Capacity: 10, RefillPerSecond: 1}, tokens: 1}}, want: 0},
		{name: "over capacity by the refill of 3 s", scale: 1, calls: 8,
			draws: []draw{{bucket: apilimits.Bucket{Name: "t/a", Capacity: 5, RefillPerSecond: 1}, tokens: 1}}, want: 3 * time.Second},
		{name: "scale shrinks capacity and refill", scale: 0.5, calls: 10,
			draws: []draw{{bucket: apilimits.Bucket{Name: "t/a", Capacity: 10, RefillPerSecond: 4}, tokens: 1}}, want: 2500 * time.Millisecond},
		{name: "several tokens a call", scale: 1, calls: 5,
			draws: []draw{{bucket: apilimits.Bucket{Name: "t/a", Capacity: 100, RefillPerSecond: 10}, tokens: 30}}, want: 5 * time.Second},
		{name: "EC2 mutating at the default scale", scale: DefaultRateLimitScale, calls: 54,
			service: "ec2", action: "CreateFleet", want: 2 * time.Second}, // 45 tokens, 4.5 a second
		{name: "EC2 describe, filtered", scale: 1, calls: 140,
			service: "ec2", action: "DescribeInstances", want: 2 * time.Second}, // 100, 20 a second
		{name: "EC2 describe, unfiltered", scale: 1, calls: 70, demand: demand{unfiltered: true},
			service: "ec2", action: "DescribeInstances", want: 2 * time.Second}, // 50, 10 a second
		{name: "RunInstances: the resource bucket is the slower", scale: 1, calls: 12, demand: demand{units: 100},
			service: "ec2", action: "RunInstances", want: 100 * time.Second}, // instances 1000, 2 a second; requests 5, 2 a second
		{name: "RunInstances: the request bucket is the slower", scale: 1, calls: 12, demand: demand{units: 1},
			service: "ec2", action: "RunInstances", want: 3500 * time.Millisecond},
		{name: "TerminateInstances counts instances", scale: 1, calls: 3, demand: demand{units: 600},
			service: "ec2", action: "TerminateInstances", want: 40 * time.Second}, // 1800 instances, 1000 then 20 a second
		{name: "unmetered service", scale: 1, calls: 1000, service: "iam", action: "GetInstanceProfile", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(epoch)
			p := newPacer(clk, tt.scale, nil)
			ds := tt.draws
			if ds == nil {
				ds = draws(tt.service, tt.action, tt.demand)
			}
			var done atomic.Int64
			errs := make(chan error, tt.calls)
			for range tt.calls {
				go func() {
					errs <- p.waitFor(t.Context(), "Test", "Call", ds)
					done.Add(1)
				}()
			}
			// Every call has reserved its tokens at epoch once each is done or waiting.
			testkit.Poll(t, 10*time.Second, "every call done or waiting", func() bool {
				return int(done.Load())+clk.Waiters() == tt.calls
			})
			if tt.want > 0 {
				clk.SetTime(epoch.Add(tt.want - time.Millisecond))
				if clk.Waiters() == 0 {
					t.Fatalf("every call let through before %v", tt.want)
				}
				clk.SetTime(epoch.Add(tt.want + time.Millisecond))
			}
			testkit.Poll(t, 10*time.Second, "every call done", func() bool { return int(done.Load()) == tt.calls })
			for range tt.calls {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestPacerWaitEndsWithContext: a call waiting for an empty bucket returns its context's error
// as soon as the context ends, without the clock moving.
func TestPacerWaitEndsWithContext(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := newPacer(clk, 1, nil)
	ds := []draw{{bucket: apilimits.Bucket{Name: "t/a", Capacity: 1, RefillPerSecond: 0.001}, tokens: 1}}
	if err := p.waitFor(t.Context(), "Test", "Call", ds); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 1)
	go func() { errs <- p.waitFor(ctx, "Test", "Call", ds) }()
	testkit.Poll(t, 10*time.Second, "the call waiting", func() bool { return clk.Waiters() == 1 })
	cancel()
	select {
	case err := <-errs:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("wait ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end with its context")
	}
	if !clk.Now().Equal(epoch) {
		t.Errorf("the clock moved to %v", clk.Now())
	}
}

// TestPacerThrottledEmptiesRequestBucket: after a throttle the next call of the action waits for
// one refill of its request bucket; its resource bucket keeps its tokens.
func TestPacerThrottledEmptiesRequestBucket(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := newPacer(clk, 1, nil)
	d := demand{units: 1}
	p.throttled("EC2", "TerminateInstances", d)
	request, _ := apilimits.RequestBucket("ec2", "TerminateInstances")
	resource, _ := apilimits.ResourceBucket("ec2", "TerminateInstances")
	if got := p.bucket(request).Tokens(); got != 0 {
		t.Errorf("request bucket holds %v tokens after a throttle, want 0", got)
	}
	if got := p.bucket(resource).Tokens(); got != resource.Capacity {
		t.Errorf("resource bucket holds %v tokens after a throttle, want its capacity %v", got, resource.Capacity)
	}
	errs := make(chan error, 1)
	go func() { errs <- p.wait(t.Context(), "EC2", "TerminateInstances", d) }()
	testkit.Poll(t, 10*time.Second, "the call waiting", func() bool { return clk.Waiters() == 1 })
	clk.Step(time.Duration(float64(time.Second)/request.RefillPerSecond) + time.Millisecond)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

func TestDemandOf(t *testing.T) {
	tests := []struct {
		name   string
		params any
		want   demand
	}{
		{name: "RunInstances counts MaxCount", params: &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(3)}, want: demand{units: 3}},
		{name: "TerminateInstances counts IDs", params: &ec2.TerminateInstancesInput{InstanceIds: []string{"i-1", "i-2"}}, want: demand{units: 2}},
		{name: "StopInstances counts IDs", params: &ec2.StopInstancesInput{InstanceIds: []string{"i-1"}}, want: demand{units: 1}},
		{name: "CreateFleet draws no resource bucket", params: &ec2.CreateFleetInput{TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(10)}}},
		{name: "DescribeInstances by ID is unfiltered", params: &ec2.DescribeInstancesInput{InstanceIds: []string{"i-1"}}, want: demand{unfiltered: true}},
		{name: "DescribeInstances with a filter", params: &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:a")}}}},
		{name: "DescribeInstances paginated", params: &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1000)}},
		{name: "DescribeInstances continued", params: &ec2.DescribeInstancesInput{NextToken: aws.String("t")}},
		{name: "no input", params: (*ec2.DescribeInstancesInput)(nil)},
		{name: "not a pointer", params: ec2.DescribeInstancesInput{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := demandOf(tt.params); got != tt.want {
				t.Errorf("demandOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
