package awsemu

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/joinerhq/joiner/awsemu/ec2"
	"github.com/joinerhq/joiner/awsemu/eks"
	"github.com/joinerhq/joiner/awsemu/iam"
	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/awsemu/pricing"
	"github.com/joinerhq/joiner/awsemu/sqs"
	"github.com/joinerhq/joiner/awsemu/ssm"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/sts"
	"github.com/joinerhq/joiner/awsemu/wire"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// DefaultAccountID is the account the default world lives in.
const DefaultAccountID = "111122223333"

// Server routes signed AWS requests to the emulated services.
type Server struct {
	clock    clock.Clock
	state    *state.State
	ec2      *ec2.Handler
	iam      *iam.Handler
	sts      *sts.Handler
	ssm      *ssm.Handler
	eks      *eks.Handler
	pricing  *pricing.Handler
	sqs      *sqs.Handler
	inspect  *inspect.Handler
	requests atomic.Uint64
}

// New returns a Server over st whose injected latency waits on clk.
func New(st *state.State, clk clock.Clock) *Server {
	return &Server{clock: clk, state: st, ec2: ec2.New(st), iam: iam.New(st), sts: sts.New(st), ssm: ssm.New(st), eks: eks.New(st), pricing: pricing.New(st), sqs: sqs.New(st, clk), inspect: inspect.New(st)}
}

// NewState returns a world over the embedded catalogue, seeded with seed. Its instances boot
// when a Kubelets drives them.
func NewState(clk clock.PassiveClock, seed state.SeedOptions) (*state.State, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the instance-type catalogue, %w", err)
	}
	st := state.New(clk, cat, DefaultAccountID)
	if err := st.Update(func(w *state.World) error { return w.Seed(seed) }); err != nil {
		return nil, fmt.Errorf("seeding the world, %w", err)
	}
	return st, nil
}

// State returns the world the server serves, for tests and the inspection endpoint.
func (s *Server) State() *state.State { return s.state }

// ServeHTTP routes one request by the service named in its SigV4 credential scope.
// Unsigned requests under /_awsemu/ go to the inspection endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, inspect.Prefix) && r.Header.Get("Authorization") == "" {
		s.inspect.ServeHTTP(w, r)
		return
	}
	call, ok := wire.ParseCall(r)
	n := s.requests.Add(1)
	call.RequestID = fmt.Sprintf("%08x-0000-4000-8000-%012x", n>>16, n)
	if !ok {
		wire.WriteQueryError(w, call.RequestID, wire.NewError(http.StatusForbidden, "MissingAuthenticationToken",
			"Request is missing Authentication Token"))
		return
	}
	if !s.delay(r) || s.throttled(w, call) {
		return
	}
	switch call.Service {
	case "ec2":
		s.ec2.Serve(w, r, call)
	case "iam":
		s.iam.Serve(w, r, call)
	case "sts":
		s.sts.Serve(w, r, call)
	case "ssm":
		s.ssm.Serve(w, r, call)
	case "eks":
		s.eks.Serve(w, r, call)
	case "pricing":
		s.pricing.Serve(w, r, call)
	case "sqs":
		s.sqs.Serve(w, r, call)
	default:
		wire.WriteQueryError(w, call.RequestID, wire.NewError(http.StatusBadRequest, "UnknownService",
			"The emulator does not serve %q", call.Service))
	}
}

// throttled answers the request with the service's throttling error when the injected throttle
// rate says so.
func (s *Server) throttled(w http.ResponseWriter, call wire.Call) bool {
	var throttle bool
	_ = s.state.Update(func(world *state.World) error {
		throttle = world.Faults.Throttle()
		return nil
	})
	if !throttle {
		return false
	}
	switch call.Service {
	case "ec2":
		wire.WriteEC2Error(w, call.RequestID, wire.NewError(http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded."))
	case "ssm", "pricing", "sqs":
		wire.WriteJSONError(w, call.RequestID, wire.NewError(http.StatusBadRequest, "ThrottlingException", "Rate exceeded"))
	default:
		wire.WriteQueryError(w, call.RequestID, wire.NewError(http.StatusBadRequest, "Throttling", "Rate exceeded"))
	}
	return true
}

// delay waits out the injected latency; it reports false when the caller gave up meanwhile.
func (s *Server) delay(r *http.Request) bool {
	var latency time.Duration
	s.state.View(func(world *state.World) { latency = world.Faults.Latency })
	if latency <= 0 {
		return true
	}
	select {
	case <-s.clock.After(latency):
		return true
	case <-r.Context().Done():
		return false
	}
}
