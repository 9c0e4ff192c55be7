package awsemu

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"k8s.io/utils/clock"

	"github.com/joinerhq/joiner/awsemu/ec2"
	"github.com/joinerhq/joiner/awsemu/eks"
	"github.com/joinerhq/joiner/awsemu/iam"
	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/awsemu/pricing"
	"github.com/joinerhq/joiner/awsemu/ratelimit"
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
	limits   *ratelimit.Limiter
	requests atomic.Uint64
}

// New returns a Server over st whose injected latency waits on clk. It meters no request: turn
// AWS's rate limits on with SetRateLimits or the faults endpoint.
func New(st *state.State, clk clock.Clock) *Server {
	limits := ratelimit.New(clk, ratelimit.Off)
	return &Server{clock: clk, state: st, ec2: ec2.New(st), iam: iam.New(st), sts: sts.New(st), ssm: ssm.New(st), eks: eks.New(st),
		pricing: pricing.New(st), sqs: sqs.New(st, clk), inspect: inspect.New(st, limits), limits: limits}
}

// SetRateLimits sets how the server meters requests (docs/design/awsemu.md, "Rate limits").
func (s *Server) SetRateLimits(m ratelimit.Mode) { s.limits.SetMode(m) }

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
	if s.throttled(w, r, call) || s.faulted(w, r, call) {
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

// faulted applies the injected faults to one request: it waits out the injected delay, then
// answers with the service's throttling error or a 500 internal error when the fault rates say
// so. It reports whether the request was answered (or abandoned by its caller) here.
func (s *Server) faulted(w http.ResponseWriter, r *http.Request, call wire.Call) bool {
	var fault state.Fault
	_ = s.state.Update(func(world *state.World) error {
		fault = world.Faults.Next()
		return nil
	})
	if fault.Delay > 0 {
		select {
		case <-s.clock.After(fault.Delay):
		case <-r.Context().Done():
			return true
		}
	}
	switch {
	case fault.Throttle:
		writeError(w, call, throttleError(call.Service))
	case fault.Error && call.Service == "ec2":
		writeError(w, call, wire.NewError(http.StatusInternalServerError, "InternalError", "An internal error has occurred"))
	case fault.Error:
		writeError(w, call, wire.NewError(http.StatusInternalServerError, "InternalFailure", "The request processing has failed because of an unknown error, exception or failure."))
	default:
		return false
	}
	return true
}

// throttleError is the error a service answers a throttled request with: EC2's
// RequestLimitExceeded (HTTP 503), the JSON services' ThrottlingException, the query services'
// Throttling.
func throttleError(service string) *wire.Error {
	switch service {
	case "ec2":
		return wire.NewError(http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
	case "eks":
		return wire.NewError(http.StatusTooManyRequests, "ThrottlingException", "Rate exceeded")
	case "ssm", "pricing", "sqs":
		return wire.NewError(http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
	}
	return wire.NewError(http.StatusBadRequest, "Throttling", "Rate exceeded")
}

// writeError answers err in the call's service's error envelope.
func writeError(w http.ResponseWriter, call wire.Call, err *wire.Error) {
	switch call.Service {
	case "ec2":
		wire.WriteEC2Error(w, call.RequestID, err)
	case "ssm", "pricing", "sqs", "eks":
		// EKS speaks REST-JSON: its SDK reads the error from X-Amzn-ErrorType and a JSON
		// body, and fails to decode an XML one (found by the chaos test: the controller
		// exited at startup on a throttled DescribeCluster).
		wire.WriteJSONError(w, call.RequestID, err)
	default:
		wire.WriteQueryError(w, call.RequestID, err)
	}
}
