package sdk

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/state"
)

// startEmulator serves a default emulated world on 127.0.0.1 for the test's lifetime.
func startEmulator(t *testing.T) string {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st, err := awsemu.NewState(clk, state.DefaultSeed())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(awsemu.New(st, clk))
	t.Cleanup(srv.Close)
	return srv.URL
}

func controllerCredentials() credentials.StaticCredentialsProvider {
	return credentials.NewStaticCredentialsProvider(state.DefaultSeed().ControllerAccessKey, "secret", "")
}

// TestClientsSurviveFastServer makes many requests with bodies against the emulator, the
// situation in which smithy-go's body race fails requests with "use of closed network
// connection" (intermittently, so the test cannot prove its absence; it catches regressions
// that make it common).
func TestClientsSurviveFastServer(t *testing.T) {
	url := startEmulator(t)
	cfg, err := LoadConfig(t.Context(), Options{Region: "us-west-2", Endpoint: url, Credentials: controllerCredentials(), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := NewClients(cfg)
	for i := range 300 {
		if _, err := c.STS.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if _, err := c.EC2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
}

func TestEndpointFromEnvironment(t *testing.T) {
	url := startEmulator(t)
	t.Setenv("AWS_ENDPOINT_URL", url)
	cfg, err := LoadConfig(context.Background(), Options{Region: "us-west-2", Credentials: controllerCredentials()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := NewClients(cfg).STS.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatalf("GetCallerIdentity through AWS_ENDPOINT_URL: %v", err)
	}
	if got := *out.Account; got != awsemu.DefaultAccountID {
		t.Errorf("account %s, want %s", got, awsemu.DefaultAccountID)
	}
}

func TestLoadConfigNeedsRegion(t *testing.T) {
	if _, err := LoadConfig(t.Context(), Options{}); err == nil {
		t.Error("LoadConfig without a region succeeded")
	}
}

func TestPricingRegion(t *testing.T) {
	for region, want := range map[string]string{
		"us-west-2": "us-east-1", "us-east-1": "us-east-1", "ca-central-1": "us-east-1", "sa-east-1": "us-east-1",
		"eu-west-1": "eu-central-1", "me-south-1": "eu-central-1", "af-south-1": "eu-central-1",
		"ap-northeast-1": "ap-south-1", "cn-north-1": "cn-northwest-1",
	} {
		if got := PricingRegion(region); got != want {
			t.Errorf("PricingRegion(%s) = %s, want %s", region, got, want)
		}
	}
}

// TestRetriesThrottling: with every other request throttled by the emulator, calls succeed
// within MaxAttempts; with one attempt they fail.
func TestRetriesThrottling(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st, err := awsemu.NewState(clk, state.DefaultSeed())
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Update(func(w *state.World) error {
		w.Faults.ThrottleRate = 0.5
		return nil
	})
	srv := httptest.NewServer(awsemu.New(st, clk))
	t.Cleanup(srv.Close)
	tests := []struct {
		attempts int
		wantErr  bool
	}{{attempts: 3, wantErr: false}, {attempts: 1, wantErr: true}}
	for _, tt := range tests {
		cfg, err := LoadConfig(t.Context(), Options{Region: "us-west-2", Endpoint: srv.URL, Credentials: controllerCredentials(),
			MaxAttempts: tt.attempts, MaxBackoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		c := NewClients(cfg)
		var failed bool
		for range 10 {
			if _, err := c.EC2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
				failed = true
			}
		}
		if failed != tt.wantErr {
			t.Errorf("%d attempts under 50%% throttling: failed=%v, want %v", tt.attempts, failed, tt.wantErr)
		}
	}
}
