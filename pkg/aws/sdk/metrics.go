package sdk

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/joinerhq/joiner/pkg/metrics"
)

// Labels of the SDK metrics. service is the SDK's service ID (EC2, IAM, STS, SSM, Pricing, SQS,
// EKS), action the API operation (CreateFleet), code the HTTP status code of the response ("0"
// when none arrived: a network error, a timeout, a cancelled context), bucket the client-side
// token bucket (pkg/aws/apilimits' bucket name).
const (
	labelService = "service"
	labelAction  = "action"
	labelCode    = "code"
	labelBucket  = "bucket"
)

// Metrics are the Prometheus series of the AWS clients. The aws_sdk_go_* series have the names
// and labels (service, action, code) of the SDK middleware upstream Karpenter's AWS provider
// uses, so that its dashboards and alerts read Joiner's; the joiner_aws_sdk_* series are what
// that middleware lacks: throttles by name, and the wait on the client-side rate limit.
type Metrics struct {
	requests        *prometheus.CounterVec
	attempts        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	attemptDuration *prometheus.HistogramVec
	retries         *prometheus.HistogramVec
	throttles       *prometheus.CounterVec
	rateLimitWait   *prometheus.HistogramVec
}

// NewMetrics declares the SDK metrics in reg, or takes the ones already registered there (so
// that the several client sets of one process, such as a test's, count into one series).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	callLabels := []string{labelService, labelAction, labelCode}
	latency := prometheus.ExponentialBuckets(0.005, 2, 14) // 5 ms to 41 s
	m := &Metrics{}
	var err error
	if m.requests, err = metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aws_sdk_go_request_total",
		Help: "AWS API calls the controller made (one per call, retries included in it), by the status code of its last attempt.",
	}, callLabels)); err != nil {
		return nil, sdkMetricsError(err)
	}
	if m.attempts, err = metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aws_sdk_go_request_attempt_total",
		Help: "HTTP attempts of AWS API calls (the first try and each retry), by status code.",
	}, callLabels)); err != nil {
		return nil, sdkMetricsError(err)
	}
	if m.duration, err = metrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "aws_sdk_go_request_duration_seconds",
		Help:    "Seconds an AWS API call took as its caller saw it: client-side rate-limit waits, retries and their backoff included.",
		Buckets: latency,
	}, callLabels)); err != nil {
		return nil, sdkMetricsError(err)
	}
	if m.attemptDuration, err = metrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "aws_sdk_go_request_attempt_duration_seconds",
		Help:    "Seconds one HTTP attempt of an AWS API call took, from sending (after any client-side rate-limit wait) to the decoded response.",
		Buckets: latency,
	}, callLabels)); err != nil {
		return nil, sdkMetricsError(err)
	}
	if m.retries, err = metrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "aws_sdk_go_request_retry_count",
		Help:    "Retries an AWS API call made (attempts beyond the first), by the status code of its last attempt.",
		Buckets: prometheus.LinearBuckets(0, 1, 11),
	}, callLabels)); err != nil {
		return nil, sdkMetricsError(err)
	}
	if m.throttles, err = metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "joiner_aws_sdk_request_throttle_total",
		Help: "Attempts of AWS API calls refused as throttled (RequestLimitExceeded, Throttling, ThrottlingException, TooManyRequestsException and the other throttling codes of the SDK).",
	}, []string{labelService, labelAction})); err != nil {
		return nil, sdkMetricsError(err)
	}
	if m.rateLimitWait, err = metrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "joiner_aws_sdk_rate_limit_wait_seconds",
		Help:    "Seconds an attempt of an AWS API call waited for the client-side token bucket (--aws-rate-limit-scale) before it was sent; 0 when the bucket had tokens.",
		Buckets: append([]float64{0}, prometheus.ExponentialBuckets(0.001, 2, 17)...), // 0, then 1 ms to 66 s
	}, []string{labelService, labelAction, labelBucket})); err != nil {
		return nil, sdkMetricsError(err)
	}
	return m, nil
}

func sdkMetricsError(err error) error {
	return fmt.Errorf("declaring the AWS SDK metrics, %w", err)
}
