// Package metrics decorates a CloudProvider with Karpenter's cloud provider metrics, named and
// labelled as Karpenter v1.15's:
//
//   - karpenter_cloudprovider_duration_seconds{controller,method,provider}: a histogram of every
//     call's duration;
//   - karpenter_cloudprovider_errors_total{controller,method,provider,error}: calls that returned
//     an error, error being the kind the cloudprovider package's Is* helpers recognise
//     (NodeClaimNotFoundError, InsufficientCapacityError, NodeClassNotReadyError), else empty.
//
// method is the CloudProvider method (Create, Delete, Get, List, GetInstanceTypes, IsDrifted),
// provider the provider's Name, controller the name of the controller the decorated provider
// was given to. NodeCost and DiagnoseJoin pass through unmeasured, as Karpenter has no series for
// them.
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

// Metrics are the collectors every decorated provider of one registry shares.
type Metrics struct {
	clock    clock.PassiveClock
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
}

// NewMetrics declares the metrics and registers them with reg, or reuses those already there;
// clk times the calls.
func NewMetrics(clk clock.PassiveClock, reg prometheus.Registerer) (*Metrics, error) {
	duration, err := joinermetrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "karpenter", Subsystem: "cloudprovider", Name: "duration_seconds",
		Help: "Duration of cloud provider method calls. Labeled by the controller, method name and provider.",
	}, []string{"controller", "method", "provider"}))
	if err != nil {
		return nil, err
	}
	errs, err := joinermetrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "karpenter", Subsystem: "cloudprovider", Name: "errors_total",
		Help: "Total number of errors returned from CloudProvider calls.",
	}, []string{"controller", "method", "provider", "error"}))
	if err != nil {
		return nil, err
	}
	return &Metrics{clock: clk, duration: duration, errors: errs}, nil
}

// Decorate returns cloud measured under the controller name. The result implements
// cloudprovider.JoinDiagnoser exactly when cloud does, and cloudprovider.NodeCoster always
// (pricing nothing when cloud does not, as callers treat a provider without it).
func (m *Metrics) Decorate(cloud cloudprovider.CloudProvider, controller string) cloudprovider.CloudProvider {
	d := &decorator{CloudProvider: cloud, m: m, controller: controller}
	if diagnoser, ok := cloud.(cloudprovider.JoinDiagnoser); ok {
		return &diagnosing{decorator: d, diagnoser: diagnoser}
	}
	return d
}

// ErrorLabel is the error label of err: the kind of cloud provider error it is, else empty.
func ErrorLabel(err error) string {
	switch {
	case cloudprovider.IsInsufficientCapacityError(err):
		return "InsufficientCapacityError"
	case cloudprovider.IsNodeClaimNotFoundError(err):
		return "NodeClaimNotFoundError"
	case cloudprovider.IsNodeClassNotReadyError(err):
		return "NodeClassNotReadyError"
	default:
		return ""
	}
}

type decorator struct {
	cloudprovider.CloudProvider
	m          *Metrics
	controller string
}

// measure records a call of method that started at start and returned err.
func (d *decorator) measure(method string, start time.Time, err error) {
	provider := d.Name()
	d.m.duration.WithLabelValues(d.controller, method, provider).Observe(d.m.clock.Since(start).Seconds())
	if err != nil {
		d.m.errors.WithLabelValues(d.controller, method, provider, ErrorLabel(err)).Inc()
	}
}

func (d *decorator) Create(ctx context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error) {
	start := d.m.clock.Now()
	out, err := d.CloudProvider.Create(ctx, nodeClaim)
	d.measure("Create", start, err)
	return out, err
}

func (d *decorator) Delete(ctx context.Context, nodeClaim *v1.NodeClaim) error {
	start := d.m.clock.Now()
	err := d.CloudProvider.Delete(ctx, nodeClaim)
	d.measure("Delete", start, err)
	return err
}

func (d *decorator) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	start := d.m.clock.Now()
	out, err := d.CloudProvider.Get(ctx, providerID)
	d.measure("Get", start, err)
	return out, err
}

func (d *decorator) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	start := d.m.clock.Now()
	out, err := d.CloudProvider.List(ctx)
	d.measure("List", start, err)
	return out, err
}

func (d *decorator) GetInstanceTypes(ctx context.Context, nodePool *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	start := d.m.clock.Now()
	out, err := d.CloudProvider.GetInstanceTypes(ctx, nodePool)
	d.measure("GetInstanceTypes", start, err)
	return out, err
}

func (d *decorator) IsDrifted(ctx context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	start := d.m.clock.Now()
	out, err := d.CloudProvider.IsDrifted(ctx, nodeClaim)
	d.measure("IsDrifted", start, err)
	return out, err
}

func (d *decorator) GetSupportedNodeClasses() []client.Object {
	return d.CloudProvider.GetSupportedNodeClasses()
}

// NodeCost passes through to the decorated provider, or prices nothing when it does not price
// nodes.
func (d *decorator) NodeCost(ctx context.Context, nodePool *v1.NodePool) (float64, error) {
	if coster, ok := d.CloudProvider.(cloudprovider.NodeCoster); ok {
		return coster.NodeCost(ctx, nodePool)
	}
	return 0, nil
}

// diagnosing is a decorator of a provider that diagnoses joins.
type diagnosing struct {
	*decorator
	diagnoser cloudprovider.JoinDiagnoser
}

func (d *diagnosing) DiagnoseJoin(ctx context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.Diagnosis, error) {
	return d.diagnoser.DiagnoseJoin(ctx, nodeClaim)
}
