package sdk_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/testkit"
	"github.com/joinerhq/joiner/pkg/aws/apilimits"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
)

// TestMetricsCountCallsThrottlesAndRetries calls the emulator, which throttles every other
// request, through paced clients with a metrics registry: each EC2 call is throttled once and
// retried, the throttle empties the action's client-side bucket so that the retry waits one
// refill (on the fake clock the test steps), and the series count calls, attempts, throttles,
// retries and the wait by service and action.
func TestMetricsCountCallsThrottlesAndRetries(t *testing.T) {
	e := emutest.Start(t)
	reg := prometheus.NewRegistry()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	cfg, err := sdk.LoadConfig(t.Context(), sdk.Options{Region: "us-west-2", Endpoint: e.URL, Credentials: controllerCredentials(),
		MaxAttempts: 3, MaxBackoff: time.Millisecond, RateLimitScale: sdk.DefaultRateLimitScale, Clock: clk, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClients(cfg)
	// One unthrottled STS call first: the emulator's throttling is spread over all requests, so
	// the first request passes and every even one is refused.
	if _, err := c.STS.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err != nil {
		t.Fatal(err)
	}
	e.Update(t, func(w *state.World) error {
		w.Faults.Set(state.Faults{ThrottleRate: 0.5})
		return nil
	})
	const calls = 5
	errs := make(chan error, 1)
	go func() {
		for range calls {
			if _, err := c.EC2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for range calls {
		testkit.Poll(t, 10*time.Second, "a retry waiting for the client-side bucket", func() bool { return clk.Waiters() == 1 })
		clk.Step(time.Second)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}

	const action = "DescribeAvailabilityZones"
	for _, tt := range []struct {
		metric string
		labels prometheus.Labels
		want   float64
	}{
		{metric: "aws_sdk_go_request_total", labels: call("EC2", action, "200"), want: calls},
		{metric: "aws_sdk_go_request_total", labels: call("EC2", action, "503"), want: 0},
		{metric: "aws_sdk_go_request_total", labels: call("STS", "GetCallerIdentity", "200"), want: 1},
		{metric: "aws_sdk_go_request_attempt_total", labels: call("EC2", action, "200"), want: calls},
		{metric: "aws_sdk_go_request_attempt_total", labels: call("EC2", action, "503"), want: calls},
		{metric: "joiner_aws_sdk_request_throttle_total", labels: call("EC2", action, ""), want: calls},
		{metric: "joiner_aws_sdk_request_throttle_total", labels: call("STS", "GetCallerIdentity", ""), want: 0},
	} {
		if got := counter(t, reg, tt.metric, tt.labels); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.metric, tt.labels, got, tt.want)
		}
	}
	if n, sum := histogram(t, reg, "aws_sdk_go_request_retry_count", call("EC2", action, "200")); n != calls || sum != calls {
		t.Errorf("aws_sdk_go_request_retry_count: %d calls retried %v times, want %d and %d", n, sum, calls, calls)
	}
	// Every attempt is paced; each retry waits one refill of the emptied bucket, 0.9 x 20 a second.
	bucket, _ := apilimits.RequestBucket("ec2", action)
	refill := time.Duration(float64(time.Second) / (bucket.RefillPerSecond * sdk.DefaultRateLimitScale))
	wait := call("EC2", action, "")
	wait["bucket"] = bucket.Name
	n, sum := histogram(t, reg, "joiner_aws_sdk_rate_limit_wait_seconds", wait)
	if want := calls * refill.Seconds(); n != 2*calls || sum < want-0.001 || sum > want+0.001 {
		t.Errorf("joiner_aws_sdk_rate_limit_wait_seconds: %d attempts waited %vs, want %d and %vs", n, sum, 2*calls, want)
	}
	if n, _ := histogram(t, reg, "aws_sdk_go_request_duration_seconds", call("EC2", action, "200")); n != calls {
		t.Errorf("aws_sdk_go_request_duration_seconds counted %d calls, want %d", n, calls)
	}
}

// TestMetricsCountFailedCalls: a call whose every attempt is throttled counts as a call with the
// throttling status, its attempts and retries included.
func TestMetricsCountFailedCalls(t *testing.T) {
	e := emutest.Start(t)
	e.Update(t, func(w *state.World) error {
		w.Faults.Set(state.Faults{ThrottleRate: 1})
		return nil
	})
	reg := prometheus.NewRegistry()
	cfg, err := sdk.LoadConfig(t.Context(), sdk.Options{Region: "us-west-2", Endpoint: e.URL, Credentials: controllerCredentials(),
		MaxAttempts: 2, MaxBackoff: time.Millisecond, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.NewClients(cfg).STS.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err == nil {
		t.Fatal("GetCallerIdentity succeeded with every request throttled")
	}
	labels := call("STS", "GetCallerIdentity", "400")
	if got := counter(t, reg, "aws_sdk_go_request_total", labels); got != 1 {
		t.Errorf("aws_sdk_go_request_total%v = %v, want 1", labels, got)
	}
	if got := counter(t, reg, "aws_sdk_go_request_attempt_total", labels); got != 2 {
		t.Errorf("aws_sdk_go_request_attempt_total%v = %v, want 2", labels, got)
	}
	if got := counter(t, reg, "joiner_aws_sdk_request_throttle_total", call("STS", "GetCallerIdentity", "")); got != 2 {
		t.Errorf("joiner_aws_sdk_request_throttle_total = %v, want 2", got)
	}
	if n, sum := histogram(t, reg, "aws_sdk_go_request_retry_count", labels); n != 1 || sum != 1 {
		t.Errorf("aws_sdk_go_request_retry_count: %d calls retried %v times, want 1 and 1", n, sum)
	}
	// Unpaced clients observe no wait.
	if n, _ := histogram(t, reg, "joiner_aws_sdk_rate_limit_wait_seconds", nil); n != 0 {
		t.Errorf("an unpaced client observed %d rate-limit waits", n)
	}
}

// TestLoadConfigRefusesNegativeScale names the option and the fix.
func TestLoadConfigRefusesNegativeScale(t *testing.T) {
	if _, err := sdk.LoadConfig(t.Context(), sdk.Options{Region: "us-west-2", RateLimitScale: -1}); err == nil {
		t.Error("LoadConfig with a negative rate-limit scale succeeded")
	}
}

// series returns the metric of family name whose labels include want (nil: the first one).
func series(t *testing.T, reg prometheus.Gatherer, name string, want prometheus.Labels) *dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(want) {
				return m
			}
		}
	}
	return nil
}

func counter(t *testing.T, reg prometheus.Gatherer, name string, want prometheus.Labels) float64 {
	t.Helper()
	return series(t, reg, name, want).GetCounter().GetValue()
}

func histogram(t *testing.T, reg prometheus.Gatherer, name string, want prometheus.Labels) (uint64, float64) {
	t.Helper()
	h := series(t, reg, name, want).GetHistogram()
	return h.GetSampleCount(), h.GetSampleSum()
}

// call is the labels of a call's series.
func call(service, action, code string) prometheus.Labels {
	l := prometheus.Labels{"service": service, "action": action}
	if code != "" {
		l["code"] = code
	}
	return l
}
