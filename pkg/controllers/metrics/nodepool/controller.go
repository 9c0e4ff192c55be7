package nodepool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
)

const name = "metrics.nodepool"

// Interval is how often the leader measures, as Karpenter's NodePool metrics.
const Interval = 10 * time.Second

// Controller measures the NodePools and offerings and serves the measurement. Build it with
// NewController.
type Controller struct {
	view  *cluster.Cluster
	cloud cloudprovider.CloudProvider
	clock clock.WithTicker

	usage, limit, cost, available, price, cpu, memory *prometheus.Desc

	// mu guards samples, the last measurement, which Measure replaces and Collect reads.
	mu      sync.Mutex
	samples []prometheus.Metric
}

// NewController returns the controller and registers its metrics with reg.
func NewController(view *cluster.Cluster, cloud cloudprovider.CloudProvider, clk clock.WithTicker, reg prometheus.Registerer) (*Controller, error) {
	offering := []string{"instance_type", "capacity_type", "zone"}
	c := &Controller{
		view: view, cloud: cloud, clock: clk,
		usage: prometheus.NewDesc("karpenter_nodepools_usage",
			"The amount of resources that have been provisioned for a nodepool. Labeled by nodepool name and resource type.", []string{"nodepool", "resource_type"}, nil),
		limit: prometheus.NewDesc("karpenter_nodepools_limit",
			"Limits specified on the nodepool that restrict the quantity of resources provisioned. Labeled by nodepool name and resource type.", []string{"nodepool", "resource_type"}, nil),
		cost: prometheus.NewDesc("karpenter_nodepools_cost_total",
			"Hourly price in US dollars of the nodepool's launched instances at their offerings' current prices; an estimate, not a bill.", []string{"nodepool"}, nil),
		available: prometheus.NewDesc("karpenter_cloudprovider_instance_type_offering_available",
			"Instance type offering availability, based on instance type, capacity type, and zone", offering, nil),
		price: prometheus.NewDesc("karpenter_cloudprovider_instance_type_offering_price_estimate",
			"Instance type offering estimated hourly price, in US dollars, based on instance type, capacity type, and zone.", offering, nil),
		cpu: prometheus.NewDesc("karpenter_cloudprovider_instance_type_cpu_cores",
			"VCPUs cores for a given instance type.", []string{"instance_type"}, nil),
		memory: prometheus.NewDesc("karpenter_cloudprovider_instance_type_memory_bytes",
			"Memory, in bytes, for a given instance type.", []string{"instance_type"}, nil),
	}
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("registering nodepool metrics, %w", err)
	}
	return c, nil
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register runs the measurements on the leader once mgr starts.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error { return mgr.Add(c) }

// NeedLeaderElection is true: the leader measures, as Karpenter's.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start measures at once and then every Interval until ctx ends. Errors are logged; what could
// be measured is served.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName(name)
	tick := c.clock.NewTicker(Interval)
	defer tick.Stop()
	for {
		if err := c.Measure(ctx); err != nil {
			logger.Error(err, "Measuring nodepools")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C():
		}
	}
}

// Describe sends every descriptor.
func (c *Controller) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.usage, c.limit, c.cost, c.available, c.price, c.cpu, c.memory} {
		ch <- d
	}
}

// Collect sends the last measurement.
func (c *Controller) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	samples := c.samples
	c.mu.Unlock()
	for _, m := range samples {
		ch <- m
	}
}

// offeringKey names one offering.
type offeringKey struct{ instanceType, capacityType, zone string }

// Measure reads every NodePool, its NodeClaims and its instance types, and replaces the
// measurement. When the cluster cannot be read the previous measurement is kept; a NodePool
// whose instance types cannot be read is measured without them, and its error returned.
func (c *Controller) Measure(ctx context.Context) error {
	pools, err := c.view.NodePools(ctx)
	if err != nil {
		return fmt.Errorf("reading nodepools, %w", err)
	}
	var samples []prometheus.Metric
	var errs []error
	available := map[offeringKey]bool{}
	price := map[offeringKey]float64{}
	types := map[string]*cloudprovider.InstanceType{}
	for _, np := range pools {
		for desc, list := range map[*prometheus.Desc]corev1.ResourceList{c.usage: np.Status.Resources, c.limit: corev1.ResourceList(np.Spec.Limits)} {
			for res, q := range list {
				v := float64(q.Value())
				if res == corev1.ResourceCPU {
					v = float64(q.MilliValue()) / 1000
				}
				samples = append(samples, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, np.Name, strings.ReplaceAll(strings.ToLower(string(res)), "-", "_")))
			}
		}
		its, err := c.cloud.GetInstanceTypes(ctx, np)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading instance types of nodepool %s, %w", np.Name, err))
			continue
		}
		prices := map[offeringKey]float64{}
		for _, it := range its {
			types[it.Name] = it
			for _, o := range it.Offerings {
				key := offeringKey{it.Name, o.CapacityType, o.Zone}
				available[key] = available[key] || o.Available
				price[key] = o.Price
				prices[key] = o.Price
			}
		}
		claims, err := c.view.NodeClaimsOf(ctx, np.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading nodeclaims of nodepool %s, %w", np.Name, err))
			continue
		}
		total := 0.0
		for _, nc := range claims {
			if nc.Status.ProviderID == "" {
				continue
			}
			total += prices[offeringKey{nc.Labels[corev1.LabelInstanceTypeStable], nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[corev1.LabelTopologyZone]}]
		}
		samples = append(samples, prometheus.MustNewConstMetric(c.cost, prometheus.GaugeValue, total, np.Name))
	}
	for key, ok := range available {
		v := 0.0
		if ok {
			v = 1
		}
		samples = append(samples,
			prometheus.MustNewConstMetric(c.available, prometheus.GaugeValue, v, key.instanceType, key.capacityType, key.zone),
			prometheus.MustNewConstMetric(c.price, prometheus.GaugeValue, price[key], key.instanceType, key.capacityType, key.zone))
	}
	for name, it := range types {
		if q, ok := it.Capacity[corev1.ResourceCPU]; ok {
			samples = append(samples, prometheus.MustNewConstMetric(c.cpu, prometheus.GaugeValue, float64(q.MilliValue())/1000, name))
		}
		if q, ok := it.Capacity[corev1.ResourceMemory]; ok {
			samples = append(samples, prometheus.MustNewConstMetric(c.memory, prometheus.GaugeValue, float64(q.Value()), name))
		}
	}
	c.mu.Lock()
	c.samples = samples
	c.mu.Unlock()
	return errors.Join(errs...)
}
