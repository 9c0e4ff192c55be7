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
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.ThrottleRate = 0.5
		return nil
	})
	var throttled, ok int
	for range 10 {
		_, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{})
		switch {
		case err == nil:
			ok++
		case errorCode(t, err) == "RequestLimitExceeded":
			throttled++
		default:
			t.Fatal(err)
		}
	}
	if throttled != 5 || ok != 5 {
		t.Errorf("%d throttled, %d served; want 5 and 5", throttled, ok)
	}
	var stsThrottled bool
	for range 2 {
		if _, err := e.sts.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err != nil {
			stsThrottled = errorCode(t, err) == "Throttling"
		}
	}
	if !stsThrottled {
		t.Error("STS was never throttled")
	}
}

func TestDescribeInstancesLag(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.DescribeInstancesLag = 3 * time.Second
		return nil
	})
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
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.Latency = 2 * time.Second
		return nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := e.ec2.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !e.clock.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the request never waited on the clock")
		}
		select {
		case err := <-done:
			t.Fatalf("answered before the latency passed: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	e.clock.Step(2 * time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestInternalErrors: ErrorRate answers its share of requests with a 500 of the service's
// protocol, counted in Injected; throttling takes precedence on a request both would hit.
func TestInternalErrors(t *testing.T) {
	e := newEnv(t)
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.ErrorRate = 0.25
		return nil
	})
	var failed, ok int
	for range 8 {
		_, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{})
		switch {
		case err == nil:
			ok++
		case errorCode(t, err) == "InternalError":
			failed++
		default:
			t.Fatal(err)
		}
	}
	if failed != 2 || ok != 6 {
		t.Errorf("%d failed, %d served; want 2 and 6", failed, ok)
	}
	var stsFailed bool
	for range 4 {
		if _, err := e.sts.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err != nil {
			stsFailed = errorCode(t, err) == "InternalFailure"
		}
	}
	if !stsFailed {
		t.Error("STS never failed")
	}
	var counts state.FaultCounts
	e.state.View(func(w *state.World) { counts = w.Faults.Injected })
	if counts.Requests != 12 || counts.Errors != 3 || counts.Throttled != 0 {
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
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.SlowRate, w.Faults.SlowLatency = 0.5, 5*time.Second
		return nil
	})
	// The first request is not slowed (floor(1*0.5) = 0), the second is.
	if _, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.ec2.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !e.clock.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never waited on the clock")
		}
		select {
		case err := <-done:
			t.Fatalf("answered before the slow latency passed: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	e.clock.Step(5 * time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var counts state.FaultCounts
	e.state.View(func(w *state.World) { counts = w.Faults.Injected })
	if counts.Slowed != 1 {
		t.Errorf("slowed %d requests, want 1", counts.Slowed)
	}
}

// TestThrottlingEKS: EKS speaks REST-JSON, so its throttling error is one the SDK decodes, not
// the query protocol's XML.
func TestThrottlingEKS(t *testing.T) {
	e := newEnv(t)
	_ = e.state.Update(func(w *state.World) error {
		w.Faults.ThrottleRate = 1
		return nil
	})
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
