package awsemu_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
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
