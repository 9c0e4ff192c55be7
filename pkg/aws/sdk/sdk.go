package sdk

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
)

// DefaultMaxAttempts is how many times a request is tried (the first try included) when
// Options.MaxAttempts is 0: throttled and transient failures are retried by the SDK with
// backoff, everything beyond that is the calling controller's requeue.
const DefaultMaxAttempts = 3

// DefaultTimeout bounds one HTTP request when Options.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// Options are what Joiner's own configuration decides about the AWS clients.
type Options struct {
	// Region is the AWS region of the cluster; required.
	Region string
	// Endpoint overrides every service's endpoint (a URL such as http://127.0.0.1:4566). Empty
	// leaves it to AWS_ENDPOINT_URL and the shared config, else the real endpoints.
	Endpoint string
	// Credentials replace the default credential chain (environment, web identity, shared files,
	// container and instance metadata) when set.
	Credentials aws.CredentialsProvider
	// MaxAttempts bounds tries per request; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// MaxBackoff caps the jittered exponential wait between tries; 0 keeps the SDK's (20s).
	MaxBackoff time.Duration
	// Timeout bounds one HTTP request, response body included; 0 means DefaultTimeout.
	Timeout time.Duration
	// RateLimitScale paces the clients to AWS's published request and resource buckets
	// (pkg/aws/apilimits), their sizes and refill rates multiplied by this (the controller's
	// DefaultRateLimitScale is slightly under AWS's): one client-side token bucket per AWS
	// bucket, shared by every client built from the configuration, waited on before each
	// attempt. 0 leaves the clients unpaced; it must not be negative.
	RateLimitScale float64
	// Clock is what the pacing waits on and the metrics time with; nil is the real clock.
	Clock clock.Clock
	// Registerer receives the clients' metrics (NewMetrics); nil records none.
	Registerer prometheus.Registerer
}

// LoadConfig returns the SDK configuration for the options, reading the environment and shared
// config files the way the AWS CLI does for anything the options leave unset.
func LoadConfig(ctx context.Context, o Options) (aws.Config, error) {
	if o.Region == "" {
		return aws.Config{}, fmt.Errorf("loading AWS config, the region is required")
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	maxAttempts := o.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if !(o.RateLimitScale >= 0) || math.IsInf(o.RateLimitScale, 0) {
		return aws.Config{}, fmt.Errorf("loading AWS config, the rate-limit scale %v is not a share: give 0 (off) or a positive number such as %v", o.RateLimitScale, DefaultRateLimitScale)
	}
	loaders := []func(*config.LoadOptions) error{
		config.WithRegion(o.Region),
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(timeout)),
		// The standard retryer, not the SDK's adaptive mode (retry.NewAdaptiveMode): adaptive
		// mode cuts a client's send rate on every throttling error from the rate it has
		// measured, and a client that has measured none yet (a fresh process, or one idle for a
		// while) drops to its floor of 0.5 requests per second for all of the service's actions,
		// recovering over seconds: ten DescribeAvailabilityZones under 50% throttling took 20 s
		// instead of 0.1 s. The client-side buckets (RateLimitScale, pacing.go) adapt instead:
		// a throttling error empties the action's request bucket, so every worker of the
		// controller waits for the bucket's refill, AWS's published rate scaled, not for a
		// guess. Retryable errors, attempts and backoff are the standard retryer's, throttling
		// or not.
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = maxAttempts
				if o.MaxBackoff > 0 {
					so.MaxBackoff = o.MaxBackoff
					so.Backoff = retry.NewExponentialJitterBackoff(o.MaxBackoff)
				}
			})
		}),
	}
	if o.Endpoint != "" {
		loaders = append(loaders, config.WithBaseEndpoint(o.Endpoint))
	}
	if o.Credentials != nil {
		loaders = append(loaders, config.WithCredentialsProvider(o.Credentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loaders...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS config, %w", err)
	}
	// Wrapped after loading, so that the loader could still apply AWS_CA_BUNDLE to the
	// buildable client's transport.
	cfg.HTTPClient = PlainBodies(cfg.HTTPClient)
	clk := o.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	var m *Metrics
	if o.Registerer != nil {
		if m, err = NewMetrics(o.Registerer); err != nil {
			return aws.Config{}, fmt.Errorf("loading AWS config, %w", err)
		}
	}
	var p pacing
	if o.RateLimitScale > 0 {
		p = newPacer(clk, o.RateLimitScale, m)
	}
	instrument(&cfg, p, m, clk)
	return cfg, nil
}

// PlainBodies wraps an HTTP client so that the request bodies it sends do not expose
// io.WriterTo (see the package documentation). LoadConfig applies it; use it on any client built
// by hand.
func PlainBodies(c aws.HTTPClient) aws.HTTPClient {
	return plainBodies{next: c}
}

type plainBodies struct{ next aws.HTTPClient }

func (p plainBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r = r.Clone(r.Context())
		r.Body = struct{ io.ReadCloser }{r.Body}
	}
	return p.next.Do(r)
}

// Clients are the SDK clients of the AWS provider, all built from one configuration.
type Clients struct {
	EC2     *ec2.Client
	IAM     *iam.Client
	STS     *sts.Client
	SSM     *ssm.Client
	Pricing *pricing.Client
	// SQS reads the interruption queue.
	SQS *sqs.Client
	// EKS reads the cluster's authentication mode and access entries.
	EKS *eks.Client
}

// NewClients builds the clients. The Price List API is served from a few regions only; its client
// uses PricingRegion(cfg.Region).
func NewClients(cfg aws.Config) *Clients {
	return &Clients{
		EC2: ec2.NewFromConfig(cfg),
		IAM: iam.NewFromConfig(cfg),
		STS: sts.NewFromConfig(cfg),
		SSM: ssm.NewFromConfig(cfg),
		SQS: sqs.NewFromConfig(cfg),
		EKS: eks.NewFromConfig(cfg),
		Pricing: pricing.NewFromConfig(cfg, func(o *pricing.Options) {
			o.Region = PricingRegion(cfg.Region)
		}),
	}
}

// PricingRegion is the Price List API region nearest to region: ap-south-1 for Asia Pacific,
// eu-central-1 for Europe, the Middle East and Africa, cn-northwest-1 for China, us-east-1
// otherwise.
func PricingRegion(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "cn-northwest-1"
	case strings.HasPrefix(region, "ap-"):
		return "ap-south-1"
	case strings.HasPrefix(region, "eu-"), strings.HasPrefix(region, "me-"), strings.HasPrefix(region, "af-"), strings.HasPrefix(region, "il-"):
		return "eu-central-1"
	}
	return "us-east-1"
}
