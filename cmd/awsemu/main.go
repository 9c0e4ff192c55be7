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
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/utils/clock"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/state"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("awsemu", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster booted instances join (boot simulation is not implemented yet)")
	cluster := fs.String("cluster-name", "demo", "cluster name the seeded subnets and security groups are tagged for")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig != "" {
		fmt.Fprintln(os.Stderr, "Warning: --kubeconfig is accepted but instances do not boot into the cluster yet")
	}
	seed := state.DefaultSeed()
	seed.ClusterName = *cluster
	seed.NodeRole = "KarpenterNodeRole-" + *cluster
	st, err := awsemu.NewState(clock.RealClock{}, seed, boot.NewBooter())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s, %w", *listen, err)
	}
	srv := &http.Server{Handler: awsemu.New(st), ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	log.New(os.Stderr, "", 0).Printf("awsemu listening on http://%s", ln.Addr())
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
