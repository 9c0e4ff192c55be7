package sdk_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
)

func controllerCredentials() credentials.StaticCredentialsProvider {
	return credentials.NewStaticCredentialsProvider(state.DefaultSeed().ControllerAccessKey, "secret", "")
}

// TestClientsSurviveFastServer makes many requests with bodies against the emulator, the
// situation in which smithy-go's body race fails requests with "use of closed network
// connection" (intermittently, so the test cannot prove its absence; it catches regressions
// that make it common).
func TestClientsSurviveFastServer(t *testing.T) {
	url := emutest.Start(t).URL
	cfg, err := sdk.LoadConfig(t.Context(), sdk.Options{Region: "us-west-2", Endpoint: url, Credentials: controllerCredentials(), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClients(cfg)
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
	url := emutest.Start(t).URL
	t.Setenv("AWS_ENDPOINT_URL", url)
	cfg, err := sdk.LoadConfig(context.Background(), sdk.Options{Region: "us-west-2", Credentials: controllerCredentials()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := sdk.NewClients(cfg).STS.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatalf("GetCallerIdentity through AWS_ENDPOINT_URL: %v", err)
	}
	if got := *out.Account; got != awsemu.DefaultAccountID {
		t.Errorf("account %s, want %s", got, awsemu.DefaultAccountID)
	}
}

func TestLoadConfigNeedsRegion(t *testing.T) {
	if _, err := sdk.LoadConfig(t.Context(), sdk.Options{}); err == nil {
		t.Error("LoadConfig without a region succeeded")
	}
}

func TestPricingRegion(t *testing.T) {
	for region, want := range map[string]string{
		"us-west-2": "us-east-1", "us-east-1": "us-east-1", "ca-central-1": "us-east-1", "sa-east-1": "us-east-1",
		"eu-west-1": "eu-central-1", "me-south-1": "eu-central-1", "af-south-1": "eu-central-1",
		"ap-northeast-1": "ap-south-1", "cn-north-1": "cn-northwest-1",
	} {
		if got := sdk.PricingRegion(region); got != want {
			t.Errorf("PricingRegion(%s) = %s, want %s", region, got, want)
		}
	}
}

// TestRetriesThrottling: with every other request throttled by the emulator, calls succeed
// within MaxAttempts; with one attempt they fail.
func TestRetriesThrottling(t *testing.T) {
	e := emutest.Start(t)
	e.Update(t, func(w *state.World) error {
		w.Faults.ThrottleRate = 0.5
		return nil
	})
	tests := []struct {
		attempts int
		wantErr  bool
	}{{attempts: 3, wantErr: false}, {attempts: 1, wantErr: true}}
	for _, tt := range tests {
		cfg, err := sdk.LoadConfig(t.Context(), sdk.Options{Region: "us-west-2", Endpoint: e.URL, Credentials: controllerCredentials(),
			MaxAttempts: tt.attempts, MaxBackoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		c := sdk.NewClients(cfg)
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
