package awsemu_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/state"
)

// env is one emulator from the kit (emutest) with SDK clients pointed at it, and kubelets.
type env struct {
	emu *emutest.Emulator
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
	kubelets *kubelets.Kubelets
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
	emu := emutest.Start(t, emutest.WithSeed(seed), emutest.WithRegion(region), emutest.WithNow(t0),
		emutest.WithAccessKey(state.DefaultSeed().ControllerAccessKey))
	api := &boot.FakeAPIServer{}
	return &env{emu: emu, region: region, clock: emu.Clock, state: emu.State, url: emu.URL, ec2: emu.Clients.EC2,
		iam: emu.Clients.IAM, sts: emu.Clients.STS, api: api,
		kubelets: kubelets.New(emu.State, emu.Clock, kubelets.Options{APIServer: api})}
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

// config is an SDK configuration for the emulator in region, signing as the principal accessKey
// names.
func (e *env) config(t *testing.T, region, accessKey string) aws.Config {
	t.Helper()
	return e.emu.ConfigFor(t, region, accessKey)
}

// setControllerPolicy replaces the controller role's policies with one document.
func (e *env) setControllerPolicy(t *testing.T, doc string) {
	t.Helper()
	e.emu.SetControllerPolicy(t, doc)
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

// wantCode fails the test unless err is the AWS error code.
func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	if got := errorCode(t, err); got != code {
		t.Errorf("%s: got %s, want %s", what, got, code)
	}
}
