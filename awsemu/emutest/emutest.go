package emutest

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// Epoch is the fake clock's start unless WithNow says otherwise, 2026-03-01T12:00:00Z: the
// instant the tests' expected values (image ages, prices' dates) are written against.
func Epoch() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// SecretKey is the secret access key the clients sign with; the emulator checks the access key
// id only.
const SecretKey = "secret"

// Emulator is one emulated AWS serving one test.
type Emulator struct {
	// Clock is the fake clock the world and the server run on.
	Clock *clocktesting.FakeClock
	// State is the emulated world; tests edit it with State.Update (or Update).
	State *state.State
	// Seed is what the world was seeded with.
	Seed state.SeedOptions
	// URL is the server's base URL (http://127.0.0.1:port).
	URL string
	// Region is the region Config and Clients call.
	Region string
	// AccessKey is the access key id Config and Clients sign with.
	AccessKey string
	// Config is the product's SDK configuration (sdk.LoadConfig) for URL, Region and AccessKey.
	Config aws.Config
	// Clients are the product's SDK clients over Config.
	Clients *sdk.Clients

	server      *httptest.Server
	maxAttempts int
}

type options struct {
	seed        state.SeedOptions
	worldFile   string
	region      string
	accessKey   string
	maxAttempts int
	now         time.Time
}

// Option changes what Start and New build.
type Option func(*options)

// WithSeed seeds the world with seed instead of state.DefaultSeed().
func WithSeed(seed state.SeedOptions) Option { return func(o *options) { o.seed = seed } }

// WithWorldFile seeds the world from a world file (docs/design/awsemu.md) over the default seed,
// as `awsemu --world` does.
func WithWorldFile(path string) Option { return func(o *options) { o.worldFile = path } }

// WithRegion points the clients at region instead of us-west-2.
func WithRegion(region string) Option { return func(o *options) { o.region = region } }

// WithAccessKey signs the clients' requests with another access key id than the seed's
// controller key (one the world must know for the requests to be authenticated).
func WithAccessKey(id string) Option { return func(o *options) { o.accessKey = id } }

// WithMaxAttempts lets the clients try a request n times instead of once; the default of one
// makes an injected fault an error the test sees.
func WithMaxAttempts(n int) Option { return func(o *options) { o.maxAttempts = n } }

// WithNow starts the fake clock at now instead of Epoch.
func WithNow(now time.Time) Option { return func(o *options) { o.now = now } }

// Start serves an emulated world for the test and closes it when the test ends; any failure to
// build it fails the test.
func Start(t testing.TB, opts ...Option) *Emulator {
	t.Helper()
	e, err := New(t.Context(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// New is Start for callers without a test, such as a TestMain's set-up: the caller closes the
// Emulator (or lets it live as long as the test binary).
func New(ctx context.Context, opts ...Option) (*Emulator, error) {
	o := options{seed: state.DefaultSeed(), region: "us-west-2", maxAttempts: 1, now: Epoch()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.worldFile != "" {
		cat, err := catalog.Load()
		if err != nil {
			return nil, fmt.Errorf("loading the instance-type catalogue, %w", err)
		}
		f, err := world.Load(o.worldFile, cat)
		if err != nil {
			return nil, err
		}
		o.seed = f.SeedOptions(o.seed)
	}
	if o.accessKey == "" {
		o.accessKey = o.seed.ControllerAccessKey
	}
	clk := clocktesting.NewFakeClock(o.now)
	st, err := awsemu.NewState(clk, o.seed)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(awsemu.New(st, clk))
	e := &Emulator{Clock: clk, State: st, Seed: o.seed, URL: srv.URL, Region: o.region, AccessKey: o.accessKey,
		server: srv, maxAttempts: o.maxAttempts}
	cfg, err := e.config(ctx, o.region, o.accessKey)
	if err != nil {
		srv.Close()
		return nil, err
	}
	e.Config, e.Clients = cfg, sdk.NewClients(cfg)
	return e, nil
}

// ConfigFor is Config for another region or another access key id (one the world knows, such as
// authz.AdminAccessKey): for a test that calls a second region or plays a second principal.
func (e *Emulator) ConfigFor(t testing.TB, region, accessKey string) aws.Config {
	t.Helper()
	cfg, err := e.config(t.Context(), region, accessKey)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (e *Emulator) config(ctx context.Context, region, accessKey string) (aws.Config, error) {
	cfg, err := sdk.LoadConfig(ctx, sdk.Options{Region: region, Endpoint: e.URL, MaxAttempts: e.maxAttempts,
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, SecretKey, "")})
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the SDK config for the emulator, %w", err)
	}
	return cfg, nil
}

// Close stops the server.
func (e *Emulator) Close() { e.server.Close() }

// Update edits the world, failing the test on fn's error.
func (e *Emulator) Update(t testing.TB, fn func(w *state.World) error) {
	t.Helper()
	if err := e.State.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// SetControllerPolicy makes doc the controller role's only inline policy (named "controller").
func (e *Emulator) SetControllerPolicy(t testing.TB, doc string) {
	t.Helper()
	e.Update(t, func(w *state.World) error {
		w.PutRole(e.Seed.ControllerRole, map[string]string{"controller": doc})
		return nil
	})
}

// SetEnv points the AWS SDK's environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY) at the emulator for the test, for code that builds its own config.
func (e *Emulator) SetEnv(t testing.TB) {
	t.Setenv("AWS_ENDPOINT_URL", e.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", e.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
}

// ClusterCA is the PEM bundle ClusterWithCA gives the cluster: well formed, signing nothing.
const ClusterCA = "-----BEGIN CERTIFICATE-----\nZW11bGF0ZWQ=\n-----END CERTIFICATE-----\n"

// ClusterWithCA gives the seeded EKS cluster in the clients' region the CA bundle ClusterCA and
// returns the cluster as the product renders userData for it. DNS is the tenth address of the
// seed's service CIDR (10.100.0.0/16), as EKS assigns it.
func (e *Emulator) ClusterWithCA() (userdata.Cluster, error) {
	var cluster userdata.Cluster
	err := e.State.Update(func(w *state.World) error {
		r, err := w.Region(e.Region)
		if err != nil {
			return err
		}
		c, ok := r.Clusters[e.Seed.ClusterName]
		if !ok {
			return fmt.Errorf("cluster %q is not in region %s", e.Seed.ClusterName, e.Region)
		}
		c.CertificateData = base64.StdEncoding.EncodeToString([]byte(ClusterCA))
		cluster = userdata.Cluster{Name: c.Name, Endpoint: c.Endpoint, CABundle: c.CertificateData, DNS: "10.100.0.10", CIDR: c.ServiceIPv4CIDR}
		return nil
	})
	if err != nil {
		return userdata.Cluster{}, fmt.Errorf("giving the emulated cluster a CA, %w", err)
	}
	return cluster, nil
}
