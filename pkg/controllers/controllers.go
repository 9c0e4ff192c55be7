// Package controllers wires every controller of the Joiner operator. This one file is the whole
// operator as a reader sees it: which controllers run, and what each is given.
//
// Each controller lives in its own package under pkg/controllers with NewController(deps...),
// Name() and Register(ctx, mgr). This package must hold no controller logic of its own.
package controllers

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	cloudmetrics "github.com/joinerhq/joiner/pkg/cloudprovider/metrics"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/aws/housekeeping"
	"github.com/joinerhq/joiner/pkg/controllers/aws/instancegc"
	"github.com/joinerhq/joiner/pkg/controllers/aws/interruption"
	nodeclassstatus "github.com/joinerhq/joiner/pkg/controllers/aws/nodeclass/status"
	"github.com/joinerhq/joiner/pkg/controllers/aws/unavailableofferings"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
	"github.com/joinerhq/joiner/pkg/controllers/metrics/lifetime"
	nodemetrics "github.com/joinerhq/joiner/pkg/controllers/metrics/node"
	nodeclaimmetrics "github.com/joinerhq/joiner/pkg/controllers/metrics/nodeclaim"
	nodepoolmetrics "github.com/joinerhq/joiner/pkg/controllers/metrics/nodepool"
	podmetrics "github.com/joinerhq/joiner/pkg/controllers/metrics/pod"
	"github.com/joinerhq/joiner/pkg/controllers/node/termination"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/consolidatable"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/drift"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/garbagecollection"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/lifecycle"
	"github.com/joinerhq/joiner/pkg/controllers/nodeclaim/podevents"
	"github.com/joinerhq/joiner/pkg/controllers/nodepool/startuptaints"
	nodepoolstatus "github.com/joinerhq/joiner/pkg/controllers/nodepool/status"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// Controller is what every controller package provides.
type Controller interface {
	// Name is the controller's name in logs, metrics and events.
	Name() string
	// Register adds the controller and its watches to mgr; it runs once mgr starts.
	Register(ctx context.Context, mgr manager.Manager) error
}

// Dependencies are what the controllers share. Nothing here is global: tests build their own.
type Dependencies struct {
	// Clock is the only source of time for every controller.
	Clock clock.WithTicker
	// CloudProvider is the only way to the cloud.
	CloudProvider cloudprovider.CloudProvider
	// Registry receives every controller's metrics.
	Registry prometheus.Registerer
	// BatchIdleDuration and BatchMaxDuration bound provisioning's batch window.
	BatchIdleDuration time.Duration
	BatchMaxDuration  time.Duration
	// NodeCost is the operator's per-node cost (operator.Options.NodeCost), added to what the
	// cloud provider prices per node.
	NodeCost float64
	// SpotToSpotConsolidation is the feature gate of the name (operator.FeatureGates): off,
	// consolidation never replaces spot nodes by spot nodes.
	SpotToSpotConsolidation bool
	// Scheduling are the operator's scheduling settings (operator.Options.Scheduling).
	Scheduling scheduling.Settings
	// AWS, when set, is the AWS provider CloudProvider comes from: it adds the controllers that
	// call it directly (EC2NodeClass status, prices and launch templates, leaked instances).
	AWS *provider.AWS
	// InterruptionQueue, with AWS, names the SQS queue of EC2 interruption events the interruption
	// controller reads; empty: no interruption handling.
	InterruptionQueue string
	// Namespace, with AWS, is the controller's own namespace (the leader Lease's), where the
	// unavailable-offerings record is kept across restarts; empty: it is not kept.
	Namespace string
}

// New returns every controller of the operator, built on mgr's client and cache. It registers
// the cache indexes they read with, so call it before mgr starts.
func New(ctx context.Context, mgr manager.Manager, deps Dependencies) ([]Controller, error) {
	if err := cluster.IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	view := cluster.New(mgr.GetClient(), true, cluster.ReadingStores(mgr.GetCache()))
	// Each controller gets the cloud provider measured under its name
	// (karpenter_cloudprovider_duration_seconds and _errors_total, as Karpenter's).
	cloudMetrics, err := cloudmetrics.NewMetrics(deps.Clock, deps.Registry)
	if err != nil {
		return nil, err
	}
	cloud := func(controller string) cloudprovider.CloudProvider {
		return cloudMetrics.Decorate(deps.CloudProvider, controller)
	}

	prov, err := provisioning.NewController(mgr.GetClient(), view, cloud("provisioning"), deps.Clock,
		mgr.GetEventRecorder("karpenter"), deps.Registry, deps.BatchIdleDuration, deps.BatchMaxDuration, provisioning.WithNodeCost(deps.NodeCost), provisioning.WithScheduling(deps.Scheduling))
	if err != nil {
		return nil, err
	}
	pods, err := podmetrics.NewController(mgr.GetClient(), deps.Clock, deps.Registry)
	if err != nil {
		return nil, err
	}
	claimMetrics, err := nodeclaimmetrics.NewController(deps.Registry)
	if err != nil {
		return nil, err
	}
	// Nodes are labelled in metrics by the well-known labels, AWS's included, as Karpenter's AWS
	// provider labels them.
	nodeMetrics, err := nodemetrics.NewController(view, deps.Clock, append(v1.WellKnownLabels(), awsv1.WellKnownLabels()...), deps.Registry)
	if err != nil {
		return nil, err
	}
	poolMetrics, err := nodepoolmetrics.NewController(view, cloud("metrics.nodepool"), deps.Clock, deps.Registry)
	if err != nil {
		return nil, err
	}
	lifetimeMetrics, err := lifetime.NewController(deps.Clock, deps.Registry)
	if err != nil {
		return nil, err
	}
	recorder := mgr.GetEventRecorder("karpenter")
	disrupt, err := disruption.NewController(mgr.GetClient(), view, cloud("disruption"), deps.Clock, recorder, deps.Registry, disruption.WithNodeCost(deps.NodeCost),
		disruption.WithSpotToSpotConsolidation(deps.SpotToSpotConsolidation), disruption.WithScheduling(deps.Scheduling))
	if err != nil {
		return nil, err
	}
	controllers := []Controller{
		prov,
		nodepoolstatus.NewController(mgr.GetClient(), view, cloud("nodepool.status"), deps.Clock),
		// Advice to declare agent taints (Cilium's, the EBS CSI driver's...) in startupTaints.
		startuptaints.NewController(mgr.GetClient(), recorder),
		// Lifecycle and termination each rely on the other for deletion: lifecycle finalizes
		// NodeClaims (Node deleted, instance deleted), termination drains Nodes.
		lifecycle.NewController(mgr.GetClient(), cloud("nodeclaim.lifecycle"), deps.Clock, recorder),
		termination.NewController(mgr.GetClient(), cloud("node.termination"), deps.Clock, recorder),
		garbagecollection.NewController(mgr.GetClient(), cloud("nodeclaim.garbagecollection"), deps.Clock, recorder),
		pods,
		// Launched, registered, initialized and failed joins, counted from NodeClaim transitions.
		claimMetrics,
		// Karpenter's node, NodePool, cost and offering gauges, measured periodically.
		nodeMetrics,
		poolMetrics,
		// Nodes and NodeClaims created and terminated, and how long termination took.
		lifetimeMetrics,
		// Disruption: podevents records when pods come and go, consolidatable marks NodeClaims
		// quiet for consolidateAfter, drift marks those that no longer match their NodePool or
		// node class, disruption removes, replaces and expires nodes within budgets.
		podevents.NewController(mgr.GetClient(), deps.Clock),
		consolidatable.NewController(mgr.GetClient(), deps.Clock),
		drift.NewController(mgr.GetClient(), cloud("nodeclaim.drift"), deps.Clock),
		disrupt,
	}
	if deps.AWS != nil {
		controllers = append(controllers,
			nodeclassstatus.NewController(mgr.GetClient(), deps.AWS.NodeClasses, deps.AWS.InstanceProfiles, deps.Clock, recorder),
			housekeeping.NewController(deps.AWS.Prices, deps.AWS.LaunchTemplates, deps.Clock),
			instancegc.NewController(mgr.GetClient(), deps.AWS.Instances, deps.Clock),
		)
		if deps.Namespace != "" {
			// Before the interruption controller: both feed the record this one keeps.
			controllers = append(controllers, unavailableofferings.NewController(mgr.GetClient(), deps.AWS.Unavailable, deps.Namespace, deps.Clock))
		}
		if deps.InterruptionQueue != "" {
			queue := interruption.NewQueue(deps.AWS.SQS, deps.InterruptionQueue)
			interrupt, err := interruption.NewController(mgr.GetClient(), queue, deps.AWS.Unavailable, deps.Clock, recorder, deps.Registry)
			if err != nil {
				return nil, err
			}
			controllers = append(controllers, interrupt)
		}
	}
	return controllers, nil
}

// Register registers every controller with mgr.
func Register(ctx context.Context, mgr manager.Manager, controllers []Controller) error {
	for _, c := range controllers {
		if err := c.Register(ctx, mgr); err != nil {
			return fmt.Errorf("registering controller %s, %w", c.Name(), err)
		}
	}
	return nil
}
