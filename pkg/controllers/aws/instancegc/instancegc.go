package instancegc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

const name = "aws.instancegc"

// Interval is how often leaked instances are looked for.
const Interval = time.Minute

// Instances finds and terminates the cluster's instances (instance.Provider).
type Instances interface {
	// Leaked returns the IDs of instances no providerID names, older than the grace at now.
	// launching names the NodeClaims whose providerID is not written yet; their instances are
	// spared, as the lifecycle controller adopts them.
	Leaked(ctx context.Context, providerIDs, launching []string, now time.Time) ([]string, error)
	// Delete terminates an instance; a NodeClaimNotFoundError means it is already gone.
	Delete(ctx context.Context, id string) error
}

// Controller is the periodic garbage collection. Build it with NewController.
type Controller struct {
	kube      client.Reader
	instances Instances
	clock     clock.WithTicker
}

// NewController returns the instance garbage collection controller. kube lists NodeClaims.
func NewController(kube client.Reader, instances Instances, clk clock.WithTicker) *Controller {
	return &Controller{kube: kube, instances: instances, clock: clk}
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register runs the controller on the leader once mgr starts.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader terminates.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start collects at once and then every Interval until ctx ends. Failures are logged and
// retried at the next tick.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName(name)
	ctx = log.IntoContext(ctx, logger)
	ticker := c.clock.NewTicker(Interval)
	defer ticker.Stop()
	for {
		if _, err := c.Collect(ctx); err != nil {
			logger.Error(err, "Collecting leaked instances")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// Collect terminates the leaked instances once and returns the IDs it terminated.
func (c *Controller) Collect(ctx context.Context) ([]string, error) {
	logger := log.FromContext(ctx)
	var claims v1.NodeClaimList
	if err := c.kube.List(ctx, &claims); err != nil {
		return nil, fmt.Errorf("listing NodeClaims, %w", err)
	}
	providerIDs := make([]string, 0, len(claims.Items))
	var launching []string
	for i := range claims.Items {
		if id := claims.Items[i].Status.ProviderID; id != "" {
			providerIDs = append(providerIDs, id)
		} else if claims.Items[i].DeletionTimestamp == nil {
			launching = append(launching, claims.Items[i].Name)
		}
	}
	leaked, err := c.instances.Leaked(ctx, providerIDs, launching, c.clock.Now())
	if err != nil {
		return nil, fmt.Errorf("listing leaked instances, %w", err)
	}
	var terminated []string
	var errs []error
	for _, id := range leaked {
		if err := c.instances.Delete(ctx, id); err != nil {
			if cloudprovider.IsNodeClaimNotFoundError(err) {
				continue
			}
			errs = append(errs, err)
			continue
		}
		logger.Info("Terminated leaked instance", "instance", id, "reason", "no NodeClaim names it")
		terminated = append(terminated, id)
	}
	if len(errs) > 0 {
		return terminated, fmt.Errorf("terminating leaked instances, %w", errors.Join(errs...))
	}
	return terminated, nil
}
