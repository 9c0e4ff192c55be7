package housekeeping

import (
	"context"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

const name = "aws.housekeeping"

// Intervals of the periodic work.
const (
	PricesInterval           = time.Minute
	LaunchTemplateGCInterval = time.Hour
)

// Prices refreshes whatever prices are due (pricing.Provider).
type Prices interface {
	Refresh(ctx context.Context) error
}

// LaunchTemplates deletes unused launch templates (launchtemplate.Provider).
type LaunchTemplates interface {
	GarbageCollect(ctx context.Context) ([]string, error)
}

// Controller is the periodic work. Build it with NewController.
type Controller struct {
	prices          Prices
	launchTemplates LaunchTemplates
	clock           clock.WithTicker
}

// NewController returns the housekeeping controller.
func NewController(prices Prices, launchTemplates LaunchTemplates, clk clock.WithTicker) *Controller {
	return &Controller{prices: prices, launchTemplates: launchTemplates, clock: clk}
}

// Name is the controller's name.
func (c *Controller) Name() string { return name }

// Register runs the controller on the leader once mgr starts.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader refreshes and deletes.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start refreshes prices at once and then every PricesInterval, and collects launch templates
// every LaunchTemplateGCInterval, until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName(name)
	prices := c.clock.NewTicker(PricesInterval)
	defer prices.Stop()
	templates := c.clock.NewTicker(LaunchTemplateGCInterval)
	defer templates.Stop()
	c.refresh(ctx, logger.Error)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-prices.C():
			c.refresh(ctx, logger.Error)
		case <-templates.C():
			deleted, err := c.launchTemplates.GarbageCollect(ctx)
			if err != nil {
				logger.Error(err, "Deleting unused launch templates")
			}
			if len(deleted) > 0 {
				logger.Info("Deleted unused launch templates", "names", deleted)
			}
		}
	}
}

func (c *Controller) refresh(ctx context.Context, logError func(error, string, ...any)) {
	if err := c.prices.Refresh(ctx); err != nil {
		logError(err, "Refreshing prices; keeping the previous ones")
	}
}
