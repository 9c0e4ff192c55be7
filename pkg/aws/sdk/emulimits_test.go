package sdk_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/internal/testkit"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
)

// TestPacedClientsKeepWithinTheEmulatorsLimits: with the emulator metering as AWS does, and the
// clients pacing on the emulator's clock, 60 unfiltered DescribeInstances (a bucket of 50,
// refilled 10 a second) are refused 10 times unpaced and never paced, the paced calls waiting
// for the refill instead; the metrics tell the two apart.
func TestPacedClientsKeepWithinTheEmulatorsLimits(t *testing.T) {
	const calls, capacity = 60, 50
	tests := []struct {
		name          string
		scale         float64
		wantThrottled float64
		wantWaited    bool
	}{
		{name: "unpaced", scale: 0, wantThrottled: calls - capacity},
		{name: "paced at AWS's rates", scale: 1, wantWaited: true},
		{name: "paced at the default scale", scale: sdk.DefaultRateLimitScale, wantWaited: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := emutest.Start(t)
			setRateLimits(t, e.URL, "aws")
			reg := prometheus.NewRegistry()
			cfg, err := sdk.LoadConfig(t.Context(), sdk.Options{Region: e.Region, Endpoint: e.URL, Credentials: controllerCredentials(),
				MaxAttempts: 1, RateLimitScale: tt.scale, Clock: e.Clock, Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			c := sdk.NewClients(cfg)
			done := make(chan int, 1)
			go func() {
				failed := 0
				for range calls {
					if _, err := c.EC2.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{}); err != nil {
						failed++
					}
				}
				done <- failed
			}()
			var failed int
			for finished := false; !finished; {
				testkit.Poll(t, 10*time.Second, "the calls finished or waiting for the client-side bucket", func() bool {
					select {
					case failed = <-done:
						finished = true
						return true
					default:
						return e.Clock.Waiters() > 0
					}
				})
				if !finished {
					e.Clock.Step(100 * time.Millisecond)
				}
			}
			labels := call("EC2", "DescribeInstances", "")
			if got := counter(t, reg, "joiner_aws_sdk_request_throttle_total", labels); got != tt.wantThrottled || float64(failed) != tt.wantThrottled {
				t.Errorf("%v calls throttled (%d failed), want %v", got, failed, tt.wantThrottled)
			}
			if got := counter(t, reg, "aws_sdk_go_request_total", call("EC2", "DescribeInstances", "200")); got != calls-tt.wantThrottled {
				t.Errorf("%v calls answered 200, want %v", got, calls-tt.wantThrottled)
			}
			labels["bucket"] = "ec2/DescribeInstances/unfiltered"
			n, waited := histogram(t, reg, "joiner_aws_sdk_rate_limit_wait_seconds", labels)
			if tt.wantWaited && (n != calls || waited <= 0) || !tt.wantWaited && n != 0 {
				t.Errorf("%d calls waited %vs for the unfiltered bucket, want %d calls and a wait: %v", n, waited, calls, tt.wantWaited)
			}
		})
	}
}

// setRateLimits sets the emulator's rate-limit mode through its faults endpoint.
func setRateLimits(t *testing.T, url, mode string) {
	t.Helper()
	body, err := json.Marshal(inspect.Faults{RateLimits: mode})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url+inspect.Prefix+"faults", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setting the emulator's rate limits to %s: %s", mode, resp.Status)
	}
}
