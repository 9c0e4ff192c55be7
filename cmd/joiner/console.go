package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/console"
	"github.com/joinerhq/joiner/pkg/operator"
)

func newConsoleCommand() *cobra.Command {
	var kubeconfig, listen, catalogue, region string
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve Joiner's read-only web console: cost, nodes, pending pods and why, NodeClaims, EC2NodeClasses",
		Long: `console reads the cluster of --kubeconfig (or $KUBECONFIG, or the in-cluster service account)
and serves a read-only web console on --listen: cost per hour by NodePool and capacity type, nodes
with their requested/allocatable CPU and memory and disruption state, pending pods with Joiner's
reason per NodePool, NodeClaims with their timeline and join diagnosis, and EC2NodeClasses with
their conditions (NodeJoinReady's preflight findings). Pages refresh themselves every few seconds.

Prices and pending-pod reasons need the instance types: from AWS (--aws-region, the default
credential chain; AWS_ENDPOINT_URL overrides the endpoints) or from --instance-types, a file in
the shared/bench schema. Everything is embedded: the console needs no network beyond these.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if catalogue == "" && region == "" {
				return errors.New("console needs the instance types for prices and reasons: pass --aws-region (or set AWS_REGION), or --instance-types FILE")
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			scheme, err := operator.NewScheme()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			// The pages read an informer cache: every poll of every open page then reads memory,
			// not the API server.
			kube, err := console.StartCache(ctx, cfg, scheme)
			if err != nil {
				return fmt.Errorf("reading the cluster, %w", err)
			}
			cloud, err := explainCloud(ctx, kube, catalogue, region)
			if err != nil {
				return err
			}
			logger := operator.NewLogger(0)
			c, err := console.New(kube, cloud, clock.RealClock{}, logger)
			if err != nil {
				return err
			}
			go func() { _ = c.RecordCost(ctx, console.CostSampleInterval) }() // returns when ctx is done
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listening on --listen %s, %w", listen, err)
			}
			srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-ctx.Done()
				_ = srv.Close()
			}()
			fmt.Fprintf(cmd.OutOrStdout(), "Joiner console: http://%s/\n", ln.Addr())
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serving the console, %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster; empty: $KUBECONFIG, then the in-cluster service account")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8090", "Address to serve the console on")
	cmd.Flags().StringVar(&catalogue, "instance-types", "", "Instance types from this file (shared/bench schema) instead of AWS")
	cmd.Flags().StringVar(&region, "aws-region", os.Getenv("AWS_REGION"), "Without --instance-types: the cluster's AWS region [AWS_REGION]")
	return cmd
}

// consoleServer serves the console while the manager runs, on every replica: it only reads, so
// it needs no leader election.
type consoleServer struct {
	console *console.Console
	addr    string
}

// NeedLeaderElection is false: every replica serves its console.
func (consoleServer) NeedLeaderElection() bool { return false }

// Start serves until ctx is done.
func (s consoleServer) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listening on --console-listen %s, %w", s.addr, err)
	}
	srv := &http.Server{Handler: s.console.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.console.RecordCost(ctx, console.CostSampleInterval) }() // returns when ctx is done
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	ctrl.LoggerFrom(ctx).Info("Serving the console", "url", "http://"+ln.Addr().String()+"/")
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving the console, %w", err)
	}
	return nil
}

// addConsole adds the console, reading the manager's cache, to mgr when addr is set.
func addConsole(mgr manager.Manager, cloud cloudprovider.CloudProvider, addr string) error {
	if addr == "" {
		return nil
	}
	c, err := console.New(mgr.GetClient(), cloud, clock.RealClock{}, mgr.GetLogger().WithName("console"))
	if err != nil {
		return err
	}
	return mgr.Add(consoleServer{console: c, addr: addr})
}
