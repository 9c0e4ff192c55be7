package sdk

import (
	"context"
	"errors"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"k8s.io/utils/clock"
)

// pacing is what the attempt middleware waits on before each attempt: the client-side rate
// limit of one client set (pacer in pacing.go).
type pacing interface {
	// wait blocks until the buckets of service's action allow a call of demand d, or ctx ends
	// (its error is returned).
	wait(ctx context.Context, service, action string, d demand) error
	// throttled tells the rate limit that AWS refused an attempt of such a call as throttled.
	throttled(service, action string, d demand)
}

// Middleware IDs on the SDK's stacks.
const (
	callMiddlewareID    = "JoinerCall"
	attemptMiddlewareID = "JoinerAttempt"
	// retryMiddlewareID is the SDK's retry loop (retry.Attempt) in the Finalize step: the
	// attempt middleware goes right inside it, so that it runs once per attempt, and before
	// signing, so that a request is signed after its wait.
	retryMiddlewareID = "Retry"
)

// instrument adds Joiner's middlewares to every client built from cfg: the call middleware
// (Initialize step: call metrics, and the demand of the call's input on AWS's buckets) and the
// attempt middleware (Finalize step, per attempt: the client-side rate limit, attempt metrics).
// Either of p and m may be nil.
func instrument(cfg *aws.Config, p pacing, m *Metrics, clk clock.PassiveClock) {
	if p == nil && m == nil {
		return
	}
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		if err := stack.Initialize.Add(&callMiddleware{metrics: m, clock: clk}, middleware.After); err != nil {
			return err
		}
		return stack.Finalize.Insert(&attemptMiddleware{pacing: p, metrics: m, clock: clk}, retryMiddlewareID, middleware.After)
	})
}

// demandKey is the stack value under which the call middleware passes the call's demand to
// the attempt middleware (which only sees the serialized request).
type demandKey struct{}

type callMiddleware struct {
	metrics *Metrics
	clock   clock.PassiveClock
}

func (*callMiddleware) ID() string { return callMiddlewareID }

func (c *callMiddleware) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error,
) {
	ctx = middleware.WithStackValue(ctx, demandKey{}, demandOf(in.Parameters))
	start := c.clock.Now()
	out, md, err := next.HandleInitialize(ctx, in)
	if c.metrics != nil {
		service, action := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
		code := statusCode(md, err)
		c.metrics.requests.WithLabelValues(service, action, code).Inc()
		c.metrics.duration.WithLabelValues(service, action, code).Observe(c.clock.Since(start).Seconds())
		retries := 0
		if results, ok := retry.GetAttemptResults(md); ok && len(results.Results) > 1 {
			retries = len(results.Results) - 1
		}
		c.metrics.retries.WithLabelValues(service, action, code).Observe(float64(retries))
	}
	return out, md, err
}

type attemptMiddleware struct {
	pacing  pacing
	metrics *Metrics
	clock   clock.PassiveClock
}

func (*attemptMiddleware) ID() string { return attemptMiddlewareID }

func (a *attemptMiddleware) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error,
) {
	service, action := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
	d, _ := middleware.GetStackValue(ctx, demandKey{}).(demand)
	if a.pacing != nil {
		if err := a.pacing.wait(ctx, service, action, d); err != nil {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, err
		}
	}
	start := a.clock.Now()
	out, md, err := next.HandleFinalize(ctx, in)
	throttled := isThrottle(err)
	if throttled && a.pacing != nil {
		a.pacing.throttled(service, action, d)
	}
	if a.metrics != nil {
		code := statusCode(md, err)
		a.metrics.attempts.WithLabelValues(service, action, code).Inc()
		a.metrics.attemptDuration.WithLabelValues(service, action, code).Observe(a.clock.Since(start).Seconds())
		if throttled {
			a.metrics.throttles.WithLabelValues(service, action).Inc()
		}
	}
	return out, md, err
}

// isThrottle reports whether err has one of the error codes the SDK's retryers treat as
// throttling: EC2's RequestLimitExceeded, the Query services' Throttling, the JSON services'
// ThrottlingException, TooManyRequestsException and the rest of retry.DefaultThrottleErrorCodes.
func isThrottle(err error) bool {
	return err != nil && retry.ThrottleErrorCode{Codes: retry.DefaultThrottleErrorCodes}.IsErrorThrottle(err) == aws.TrueTernary
}

// statusCode is the HTTP status code of the response of md or err, "0" when there was none.
func statusCode(md middleware.Metadata, err error) string {
	if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && resp != nil && resp.Response != nil {
		return strconv.Itoa(resp.StatusCode)
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return strconv.Itoa(re.HTTPStatusCode())
	}
	return "0"
}
