package testenv

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/joinerhq/joiner/pkg/cluster"
)

// NewManager builds a manager on the environment's API server and scheme, with the metrics server
// and health probes off and controller name validation skipped, so that a test process may build
// several managers registering the same controllers. It discards controller-runtime's logs
// (ctrl.SetLogger, which is process-wide). The caller starts it, or StartManager does.
func (e *Environment) NewManager() (manager.Manager, error) {
	ctrl.SetLogger(logr.Discard())
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("building manager, %w", err)
	}
	return mgr, nil
}

// StartManager builds a manager with NewManager, registers the cache indexes of
// cluster.IndexFields (as the operator does), lets register add the controllers under test, starts
// the manager and returns once its cache has synced.
//
// The manager runs until ctx is cancelled or Stop is called; Stop waits for it and reports its
// error. StartManager fails, stopping the manager, when register fails or the manager stops before
// its cache syncs.
func (e *Environment) StartManager(ctx context.Context, register func(ctx context.Context, mgr manager.Manager) error) error {
	mgr, err := e.NewManager()
	if err != nil {
		return err
	}
	if err := cluster.IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := register(ctx, mgr); err != nil {
		return fmt.Errorf("registering controllers, %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	run := &runningManager{cancel: cancel, stopped: make(chan struct{})}
	go func() {
		defer close(run.stopped)
		run.err = mgr.Start(ctx)
	}()
	e.mu.Lock()
	e.managers = append(e.managers, run)
	e.mu.Unlock()

	synced := make(chan bool, 1)
	syncCtx, cancelSync := context.WithCancel(ctx)
	defer cancelSync()
	go func() { synced <- mgr.GetCache().WaitForCacheSync(syncCtx) }()
	select {
	case ok := <-synced:
		if !ok {
			return errors.New("manager stopped before its cache synced")
		}
		return nil
	case <-run.stopped:
		return fmt.Errorf("manager stopped before its cache synced, %w", cmp.Or(run.err, ctx.Err()))
	}
}

// runningManager is a manager StartManager started.
type runningManager struct {
	cancel context.CancelFunc
	// stopped is closed once Start returned, with its error in err.
	stopped chan struct{}
	err     error
}

// stopManagers stops the managers StartManager started and waits for them, joining their errors.
func (e *Environment) stopManagers() error {
	e.mu.Lock()
	managers := e.managers
	e.managers = nil
	e.mu.Unlock()
	var errs []error
	for _, m := range managers {
		m.cancel()
		<-m.stopped
		if m.err != nil {
			errs = append(errs, fmt.Errorf("manager stopped with %w", m.err))
		}
	}
	return errors.Join(errs...)
}
