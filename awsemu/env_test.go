package awsemu_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/state"
)

// env is one emulator behind an httptest server with real SDK clients pointed at it.
type env struct {
	// region is the region the clients sign for: $AWSEMU_TEST_REGION, us-west-2 by default.
	// The suite passes in any region whose zones include a to d (us-west-2, us-east-1).
	region string
	clock  *clocktesting.FakeClock
	state  *state.State
	url    string
	ec2    *ec2.Client
	iam    *iam.Client
	sts    *sts.Client
	// kubelets boot the instances against api, an in-memory API server: set its aws-auth,
	// read the Nodes registered.
	kubelets *awsemu.Kubelets
	api      *boot.FakeAPIServer
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newEnv(t *testing.T) *env {
	t.Helper()
	return newSeededEnv(t, state.DefaultSeed())
}

// newSeededEnv is newEnv over a world seeded with seed, which must keep the default controller
// access key.
func newSeededEnv(t *testing.T, seed state.SeedOptions) *env {
	t.Helper()
	return newEnvIn(t, seed, testRegion())
}

// newEnvIn is newSeededEnv with clients signing for region.
func newEnvIn(t *testing.T, seed state.SeedOptions, region string) *env {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	st, err := awsemu.NewState(clk, seed)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(awsemu.New(st, clk))
	t.Cleanup(srv.Close)
	api := &boot.FakeAPIServer{}
	e := &env{region: region, clock: clk, state: st, url: srv.URL, api: api, kubelets: awsemu.NewKubelets(st, clk, awsemu.KubeletOptions{APIServer: api})}
	cfg := e.config(e.region, state.DefaultSeed().ControllerAccessKey)
	e.ec2, e.iam, e.sts = ec2.NewFromConfig(cfg), iam.NewFromConfig(cfg), sts.NewFromConfig(cfg)
	return e
}

// testRegion is the region the suite runs in: $AWSEMU_TEST_REGION, else us-west-2.
func testRegion() string {
	if r := os.Getenv("AWSEMU_TEST_REGION"); r != "" {
		return r
	}
	return "us-west-2"
}

// zone is the region's zone with the letter ("a" is us-west-2a in us-west-2).
func (e *env) zone(letter string) string { return e.region + letter }

// boot moves the clock past the pending state and the boot delay of instances just launched and
// lets the kubelets boot them.
func (e *env) boot(t *testing.T) {
	t.Helper()
	e.clock.Step(state.PendingFor + state.BootDelay)
	if err := e.kubelets.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// config is an SDK configuration for the emulator: its URL, a region, and static credentials
// whose access key id names the principal.
func (e *env) config(region, accessKey string) aws.Config {
	return aws.Config{
		Region:           region,
		BaseEndpoint:     aws.String(e.url),
		Credentials:      credentials.NewStaticCredentialsProvider(accessKey, "secret", ""),
		RetryMaxAttempts: 1,
		HTTPClient:       &http.Client{Transport: plainBodies{}},
	}
}

// setControllerPolicy replaces the controller role's policies with one document.
func (e *env) setControllerPolicy(t *testing.T, doc string) {
	t.Helper()
	_ = e.state.Update(func(w *state.World) error {
		w.PutRole(state.DefaultSeed().ControllerRole, map[string]string{"controller": doc})
		return nil
	})
}

// errorCode returns the AWS error code of err, or fails the test when err is not an API error.
func errorCode(t *testing.T, err error) string {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want an AWS API error, got %v", err)
	}
	return ae.ErrorCode()
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// plainBodies hides io.WriterTo on request bodies. smithy-go wraps request bodies in a reader
// whose WriteTo returns io.EOF once the SDK has closed it, which it does as soon as response
// headers arrive; net/http's final check for surplus body bytes then fails the write and closes
// the connection under the response being read ("use of closed network connection"). Against a
// server as fast as a local emulator that race is common; a body without WriteTo is read through
// Read, which returns a clean EOF.
type plainBodies struct{}

func (plainBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = struct{ io.ReadCloser }{r.Body}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// wantCode fails the test unless err is the AWS error code.
func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	if got := errorCode(t, err); got != code {
		t.Errorf("%s: got %s, want %s", what, got, code)
	}
}
