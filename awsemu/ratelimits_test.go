package awsemu_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/awsemu/ratelimit"
)

// setRateLimits sets the emulator's rate limits through the faults endpoint, as the stacks do.
func (e *env) setRateLimits(t *testing.T, mode string) {
	t.Helper()
	body, err := json.Marshal(inspect.Faults{RateLimits: mode})
	if err != nil {
		t.Fatal(err)
	}
	status, answer := e.call(t, http.MethodPut, inspect.Prefix+"faults", bytes.NewReader(body))
	var got inspect.Faults
	if err := json.Unmarshal(answer, &got); err != nil || status != http.StatusOK || got.RateLimits != mode {
		t.Fatalf("setting rate limits %s: %d, %+v, %v", mode, status, got, err)
	}
}

// limits reads GET /_awsemu/limits and returns its buckets of the test's region by name.
func (e *env) limits(t *testing.T) (inspect.Limits, map[string]ratelimit.BucketState) {
	t.Helper()
	resp, err := http.Get(e.url + inspect.Prefix + "limits")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out inspect.Limits
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	byName := map[string]ratelimit.BucketState{}
	for _, b := range out.Buckets {
		if b.Region == e.region {
			byName[b.Name] = b
		}
	}
	return out, byName
}

// throttledAsEC2 reports whether err is EC2's RequestLimitExceeded as EC2 answers it: HTTP 503
// with a request ID.
func throttledAsEC2(t *testing.T, err error) bool {
	t.Helper()
	if err == nil || errorCode(t, err) != "RequestLimitExceeded" {
		return false
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusServiceUnavailable || re.ServiceRequestID() == "" {
		t.Errorf("RequestLimitExceeded not as EC2 answers it (503 with a request ID): %v", err)
	}
	return true
}

// createFleets sends n CreateFleet calls of capacity each at once and counts the launched and
// the throttled.
func (e *env) createFleets(t *testing.T, n, capacity int) (launched, throttled int) {
	t.Helper()
	f := e.fixture(t)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			in := fleetInput("lt-amd64", ec2types.DefaultTargetCapacityTypeOnDemand, override("m5.large", f.subnets[e.zone("a")]))
			in.TargetCapacitySpecification.TotalTargetCapacity = aws.Int32(int32(capacity))
			out, err := e.ec2.CreateFleet(t.Context(), in)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				for _, i := range out.Instances {
					launched += len(i.InstanceIds)
				}
			case throttledAsEC2(t, err):
				throttled++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	return launched, throttled
}

// TestRateLimitsRefuseUnbatchedCreateFleet: with AWS's limits on, 430 concurrent CreateFleet
// calls of one instance each (one per NodeClaim, unbatched) empty CreateFleet's mutating bucket
// (50, refilled 5 a second) and the rest are refused with RequestLimitExceeded, while one
// CreateFleet of 430 instances goes through: CreateFleet has no resource bucket.
func TestRateLimitsRefuseUnbatchedCreateFleet(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.launchTemplate(t, "lt-amd64", f.amd64AMI, f)
	e.setRateLimits(t, "aws")

	launched, throttled := e.createFleets(t, 430, 1)
	if launched != 50 || throttled != 380 {
		t.Errorf("unbatched: %d launched, %d throttled; want 50 and 380", launched, throttled)
	}
	all, buckets := e.limits(t)
	fleet := buckets["ec2/CreateFleet"]
	if all.RateLimits != "aws" || fleet.Capacity != 50 || fleet.RefillPerSecond != 5 || fleet.Requests != 430 || fleet.Throttled != 380 || fleet.Tokens != 0 || fleet.Source == "" {
		t.Errorf("ec2/CreateFleet bucket %+v (mode %s), want 430 requests, 380 throttled, empty", fleet, all.RateLimits)
	}
	if _, ok := buckets["ec2/CreateFleet/instances"]; ok {
		t.Error("CreateFleet was charged a resource bucket the EC2 page does not list")
	}

	batched := newEnv(t)
	bf := batched.fixture(t)
	batched.launchTemplate(t, "lt-amd64", bf.amd64AMI, bf)
	batched.setRateLimits(t, "aws")
	if launched, throttled := batched.createFleets(t, 1, 430); launched != 430 || throttled != 0 {
		t.Errorf("batched: %d launched, %d throttled; want 430 and 0", launched, throttled)
	}
	if _, buckets := batched.limits(t); buckets["ec2/CreateFleet"].Requests != 1 || buckets["ec2/CreateFleet"].Tokens != 49 {
		t.Errorf("batched: ec2/CreateFleet bucket %+v, want one request and 49 tokens left", buckets["ec2/CreateFleet"])
	}
}

// TestRateLimitsRefill: an empty bucket serves again as it refills on the clock, at its rate
// times the factor, never past its capacity.
func TestRateLimitsRefill(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	e.launchTemplate(t, "lt-amd64", f.amd64AMI, f)
	e.setRateLimits(t, "0.5") // CreateFleet: 25, refilled 2.5 a second

	for _, step := range []struct {
		advance             time.Duration
		calls               int
		launched, throttled int
	}{
		{calls: 30, launched: 25, throttled: 5},
		{advance: time.Second, calls: 3, launched: 2, throttled: 1},
		{advance: 400 * time.Millisecond, calls: 1, launched: 1},
		{advance: time.Hour, calls: 30, launched: 25, throttled: 5},
	} {
		e.clock.Step(step.advance)
		if launched, throttled := e.createFleets(t, step.calls, 1); launched != step.launched || throttled != step.throttled {
			t.Errorf("after %s: %d of %d launched, %d throttled; want %d and %d", step.advance, launched, step.calls, throttled, step.launched, step.throttled)
		}
	}
	if _, buckets := e.limits(t); buckets["ec2/CreateFleet"].Capacity != 25 || buckets["ec2/CreateFleet"].Throttled != 11 {
		t.Errorf("ec2/CreateFleet bucket %+v, want capacity 25 and 11 throttled", buckets["ec2/CreateFleet"])
	}
}

// TestRateLimitsResourceBuckets: RunInstances takes one token of its resource bucket per
// instance and TerminateInstances one per instance ID, besides their request buckets; either
// bucket empty refuses the call, and a refused call takes from neither.
func TestRateLimitsResourceBuckets(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	// At a tenth of AWS's: RunInstances 1 request token (5 kept at one) refilled 0.2 a second and
	// 100 instances refilled 0.2 a second; TerminateInstances 10 requests and 100 instances.
	e.setRateLimits(t, "0.1")
	run := func(n int) ([]string, error) {
		out, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(int32(n)),
			ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")])})
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, i := range out.Instances {
			ids = append(ids, *i.InstanceId)
		}
		return ids, nil
	}
	ids, err := run(100)
	if err != nil || len(ids) != 100 {
		t.Fatalf("RunInstances of 100: %d instances, %v", len(ids), err)
	}
	if _, err := run(1); !throttledAsEC2(t, err) {
		t.Errorf("RunInstances with its request bucket empty: %v, want RequestLimitExceeded", err)
	}
	e.clock.Step(5 * time.Second) // one request token, one instance token
	if _, err := run(2); !throttledAsEC2(t, err) {
		t.Errorf("RunInstances of 2 with one instance token: %v, want RequestLimitExceeded", err)
	}
	if more, err := run(1); err != nil || len(more) != 1 {
		t.Errorf("RunInstances of 1 after the refill: %v, %v", more, err)
	}
	if _, err := e.ec2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: ids}); err != nil {
		t.Errorf("TerminateInstances of 100: %v", err)
	}
	if _, err := e.ec2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: ids[:1]}); !throttledAsEC2(t, err) {
		t.Errorf("TerminateInstances with its resource bucket empty: %v, want RequestLimitExceeded", err)
	}
	_, buckets := e.limits(t)
	for name, want := range map[string]string{
		"ec2/RunInstances":                 "requests 4 throttled 1 taken 2",
		"ec2/RunInstances/instances":       "requests 4 throttled 1 taken 101",
		"ec2/TerminateInstances":           "requests 2 throttled 0 taken 1",
		"ec2/TerminateInstances/instances": "requests 2 throttled 1 taken 100",
	} {
		b := buckets[name]
		if got := fmt.Sprintf("requests %d throttled %d taken %v", b.Requests, b.Throttled, b.Taken); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// TestRateLimitsOffByDefault: the library's server meters nothing until told to, and "off"
// stops it again.
func TestRateLimitsOffByDefault(t *testing.T) {
	e := newEnv(t)
	for range 150 {
		if _, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
			t.Fatal(err)
		}
	}
	if all, _ := e.limits(t); all.RateLimits != "off" || len(all.Buckets) != 0 {
		t.Errorf("limits %+v, want off and no bucket", all)
	}
	e.setRateLimits(t, "aws")
	var throttled int
	for range 101 {
		if _, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); throttledAsEC2(t, err) {
			throttled++
		}
	}
	if throttled != 1 {
		t.Errorf("%d of 101 DescribeAvailabilityZones throttled, want 1 (non-mutating: 100)", throttled)
	}
	e.setRateLimits(t, "off")
	if _, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Errorf("with the limits off again: %v", err)
	}
}

// TestRateLimitsOtherServices: SSM's Parameter Store throughput (40 a second, shared by
// GetParameter and GetParameters) refuses with SSM's ThrottlingException; STS, which publishes no
// limit, is not metered.
func TestRateLimitsOtherServices(t *testing.T) {
	e := newEnv(t)
	e.setRateLimits(t, "aws")
	name := aws.String("/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id")
	client := e.emu.Clients.SSM
	var throttled int
	for i := range 41 {
		var err error
		if i%2 == 0 {
			_, err = client.GetParameter(t.Context(), &ssm.GetParameterInput{Name: name})
		} else {
			_, err = client.GetParameters(t.Context(), &ssm.GetParametersInput{Names: []string{*name}})
		}
		switch {
		case err == nil:
		case errorCode(t, err) == "ThrottlingException":
			throttled++
		default:
			t.Fatal(err)
		}
	}
	if throttled != 1 {
		t.Errorf("%d of 41 Parameter Store reads throttled, want 1", throttled)
	}
	for range 200 {
		if _, err := e.sts.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err != nil {
			t.Fatalf("STS is not metered: %v", err)
		}
	}
	if _, buckets := e.limits(t); buckets["ssm/parameter-store-throughput"].Requests != 41 || len(buckets) != 1 {
		t.Errorf("buckets %+v, want ssm/parameter-store-throughput alone, with 41 requests", buckets)
	}
}

// TestRateLimitsUnfilteredDescribe: DescribeInstances with neither a filter nor pagination draws
// from the smaller unfiltered bucket (50), with either from the non-mutating one (100).
func TestRateLimitsUnfilteredDescribe(t *testing.T) {
	e := newEnv(t)
	e.setRateLimits(t, "aws")
	var throttled int
	for range 51 {
		if _, err := e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{}); throttledAsEC2(t, err) {
			throttled++
		}
	}
	filter := []ec2types.Filter{{Name: aws.String("instance-state-name"), Values: []string{"running"}}}
	for range 50 {
		if _, err := e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{Filters: filter}); err != nil {
			t.Fatalf("filtered DescribeInstances: %v", err)
		}
		if _, err := e.ec2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)}); err != nil {
			t.Fatalf("paginated DescribeInstances: %v", err)
		}
	}
	_, buckets := e.limits(t)
	if throttled != 1 || buckets["ec2/DescribeInstances/unfiltered"].Requests != 51 || buckets["ec2/DescribeInstances"].Requests != 100 || buckets["ec2/DescribeInstances"].Tokens != 0 {
		t.Errorf("%d unfiltered throttled, buckets %+v; want 1, 51 unfiltered requests, 100 filtered or paginated", throttled, buckets)
	}
}
