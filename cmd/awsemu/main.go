// Command awsemu runs the AWS emulator as a process for the local stack and end-to-end tests.
//
//	awsemu --listen 127.0.0.1:4566
//
// It logs exactly one line, `awsemu listening on http://ADDR`, once it accepts connections, and
// serves until interrupted. Point SDK clients at that URL with static credentials whose access key
// id is the seeded controller key (AKIDJOINERCONTROLLER).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/state"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, writing the ready line and warnings to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("awsemu", flag.ContinueOnError)
	fs.SetOutput(out)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster booted instances register their Nodes in (none: instances boot and are admitted on EKS access entries alone, and no Node appears)")
	cluster := fs.String("cluster-name", "demo", "cluster name the seeded subnets and security groups are tagged for")
	if err := fs.Parse(args); err != nil {
		return err
	}
	seed := state.DefaultSeed()
	seed.ClusterName = *cluster
	seed.NodeRole = "KarpenterNodeRole-" + *cluster
	st, err := awsemu.NewState(clock.RealClock{}, seed)
	if err != nil {
		return err
	}
	var opts awsemu.KubeletOptions
	if *kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
		if err != nil {
			return fmt.Errorf("reading kubeconfig %s, %w", *kubeconfig, err)
		}
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			return fmt.Errorf("building a Kubernetes client, %w", err)
		}
		opts.Client = c
	}
	go awsemu.NewKubelets(st, clock.RealClock{}, opts).Run(ctx, time.Second)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s, %w", *listen, err)
	}
	srv := &http.Server{Handler: awsemu.New(st, clock.RealClock{}), ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	log.New(out, "", 0).Printf("awsemu listening on http://%s", ln.Addr())
	select {
	case err := <-errs:
		return fmt.Errorf("serving, %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down, %w", err)
	}
	return nil
}
