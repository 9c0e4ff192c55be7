package awsemu_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joinerhq/joiner/awsemu/state"
)

func TestThrottling(t *testing.T) {
	e := newEnv(t)
	e.setFaults(func(f *state.Faults) { f.ThrottleRate = 0.5 })
	throttled, ok := e.describeZonesFailing(t, 10, "RequestLimitExceeded")
	if throttled != 5 || ok != 5 {
		t.Errorf("%d throttled, %d served; want 5 and 5", throttled, ok)
	}
	if !e.callerIdentityFails(t, 2, "Throttling") {
		t.Error("STS was never throttled")
	}
}

func TestDescribeInstancesLag(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.setFaults(func(f *state.Faults) { f.DescribeInstancesLag = 3 * time.Second })
	run, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")])})
	if err != nil {
		t.Fatal(err)
	}
	id := *run.Instances[0].InstanceId
	_, err = e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	wantCode(t, err, "InvalidInstanceID.NotFound", "right after launch")
	e.clock.Step(3 * time.Second)
	if _, err := e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Errorf("after the lag: %v", err)
	}
}

func TestLatency(t *testing.T) {
	e := newEnv(t)
	e.setFaults(func(f *state.Faults) { f.Latency = 2 * time.Second })
	e.describeZonesDelayed(t, 2*time.Second, "latency")
}

// TestInternalErrors: ErrorRate answers its share of requests with a 500 of the service's
// protocol, counted in Injected; throttling takes precedence on a request both would hit.
func TestInternalErrors(t *testing.T) {
	e := newEnv(t)
	e.setFaults(func(f *state.Faults) { f.ErrorRate = 0.25 })
	failed, ok := e.describeZonesFailing(t, 8, "InternalError")
	if failed != 2 || ok != 6 {
		t.Errorf("%d failed, %d served; want 2 and 6", failed, ok)
	}
	if !e.callerIdentityFails(t, 4, "InternalFailure") {
		t.Error("STS never failed")
	}
	if counts := e.injectedFaults(); counts.Requests != 12 || counts.Errors != 3 || counts.Throttled != 0 {
		t.Errorf("injected %+v, want 12 requests and 3 errors", counts)
	}
	both := &state.Faults{ThrottleRate: 1, ErrorRate: 1}
	if f := both.Next(); !f.Throttle || f.Error {
		t.Errorf("a request hit by both = %+v, want throttled only", f)
	}
}

// TestSlowResponses: SlowRate delays its share of requests by SlowLatency; the others are served
// at once.
func TestSlowResponses(t *testing.T) {
	e := newEnv(t)
	e.setFaults(func(f *state.Faults) { f.SlowRate, f.SlowLatency = 0.5, 5*time.Second })
	// The first request is not slowed (floor(1*0.5) = 0), the second is.
	if _, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Fatal(err)
	}
	e.describeZonesDelayed(t, 5*time.Second, "slow latency")
	if counts := e.injectedFaults(); counts.Slowed != 1 {
		t.Errorf("slowed %d requests, want 1", counts.Slowed)
	}
}

// TestThrottlingEKS: EKS speaks REST-JSON, so its throttling error is one the SDK decodes, not
// the query protocol's XML.
func TestThrottlingEKS(t *testing.T) {
	e := newEnv(t)
	e.setFaults(func(f *state.Faults) { f.ThrottleRate = 1 })
	_, err := e.admin(t, "us-west-2").eks.ListClusters(t.Context(), &eks.ListClustersInput{})
	if err == nil || errorCode(t, err) != "ThrottlingException" {
		t.Errorf("err = %v, want ThrottlingException", err)
	}
}

// TestErrorsSpreadOverUnthrottled: the error rate is spread over the requests not throttled, so
// rates whose spreads coincide (every 50th request is both 30% and 2%) still inject both.
func TestErrorsSpreadOverUnthrottled(t *testing.T) {
	f := &state.Faults{ThrottleRate: 0.3, ErrorRate: 0.02}
	for range 1000 {
		f.Next()
	}
	if f.Injected.Throttled != 300 || f.Injected.Errors != 14 {
		t.Errorf("injected %+v over 1000 requests, want 300 throttled and 14 errors (2%% of the 700 others)", f.Injected)
	}
}

// setFaults sets the world's fault injection with set.
func (e *env) setFaults(set func(*state.Faults)) {
	_ = e.state.Update(func(w *state.World) error {
		set(w.Faults)
		return nil
	})
}

// injectedFaults is what the world's fault injection has counted so far.
func (e *env) injectedFaults() state.FaultCounts {
	var counts state.FaultCounts
	e.state.View(func(w *state.World) { counts = w.Faults.Injected })
	return counts
}

// describeZonesFailing makes n DescribeAvailabilityZones calls and counts those that failed with
// code and those served; any other failure fails the test.
func (e *env) describeZonesFailing(t *testing.T, n int, code string) (failed, served int) {
	t.Helper()
	for range n {
		_, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{})
		switch {
		case err == nil:
			served++
		case errorCode(t, err) == code:
			failed++
		default:
			t.Fatal(err)
		}
	}
	return failed, served
}

// callerIdentityFails makes n GetCallerIdentity calls and reports whether the last of them that
// failed failed with code (false when none failed).
func (e *env) callerIdentityFails(t *testing.T, n int, code string) bool {
	t.Helper()
	var failed bool
	for range n {
		if _, err := e.sts.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err != nil {
			failed = errorCode(t, err) == code
		}
	}
	return failed
}

// describeZonesDelayed makes a DescribeAvailabilityZones call that must wait on the fake clock
// (for the fault named what) and not be answered before the clock steps by delay; it fails the
// test when the call is answered early, never waits within 10s, or fails.
func (e *env) describeZonesDelayed(t *testing.T, delay time.Duration, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := e.ec2.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !e.clock.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatalf("the request delayed by %s never waited on the clock", what)
		}
		select {
		case err := <-done:
			t.Fatalf("answered before the %s passed: %v", what, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	e.clock.Step(delay)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
