package awsemu

import (
	"net/http"
	"strings"

	"github.com/joinerhq/joiner/awsemu/ratelimit"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// throttled meters one request against AWS's published limits (awsemu/ratelimit) before it is
// served: in the world's account and the SigV4 scope's Region, one token of the action's request
// bucket and, for RunInstances, TerminateInstances, StartInstances and StopInstances, one token of
// the resource bucket per instance. A request a bucket refuses is answered with the service's
// throttling error, as AWS answers it, and reports true. With the limits off it reads nothing.
func (s *Server) throttled(w http.ResponseWriter, r *http.Request, call wire.Call) bool {
	if !s.limits.Mode().On() {
		return false
	}
	req := ratelimit.Request{Region: call.Region, Service: call.Service}
	s.state.View(func(world *state.World) { req.Account = world.AccountID })
	switch call.Service {
	case "ec2":
		form, err := wire.ParseForm(r)
		if err != nil {
			// The handler would say the same; net/http reports a body's parse error once only.
			writeError(w, call, wire.NewError(http.StatusBadRequest, "MalformedQueryString", "%v", err))
			return true
		}
		req.Action = form.String("Action")
		req.Unfiltered = unfiltered(r)
		switch req.Action {
		case "RunInstances":
			// The instances it launches: MaxCount when the capacity is there, as the emulator
			// launches. A malformed count is the handler's to refuse.
			if n, err := form.Int("MaxCount", 0); err == nil && n > 0 {
				req.Instances = n
			}
		case "TerminateInstances", "StartInstances", "StopInstances":
			req.Instances = len(form.List("InstanceId"))
		}
	case "ssm", "pricing":
		req.Action = wire.Target(r)
	default:
		// IAM, STS, SQS and EKS publish no request limits: apilimits leaves them unmetered.
		return false
	}
	if refusal := s.limits.Admit(req); refusal != nil {
		writeError(w, call, throttleError(call.Service))
		return true
	}
	return false
}

// unfiltered reports whether an EC2 request names neither a filter (Filter.N.Name) nor pagination
// (MaxResults, NextToken): the EC2 throttling page's "unfiltered and unpaginated" call. Resource
// IDs (InstanceId.N) are neither, as the page reads.
func unfiltered(r *http.Request) bool {
	for k := range r.Form {
		if strings.HasPrefix(k, "Filter.") || k == "MaxResults" || k == "NextToken" {
			return false
		}
	}
	return true
}
