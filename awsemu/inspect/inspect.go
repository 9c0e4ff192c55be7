package inspect

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/joinerhq/joiner/awsemu/ratelimit"
	"github.com/joinerhq/joiner/awsemu/state"
)

// Prefix is the path prefix the endpoint serves.
const Prefix = "/_awsemu/"

// Handler serves the inspection endpoint over a State.
type Handler struct {
	state  *state.State
	limits *ratelimit.Limiter
}

// New returns the inspection handler over st and the server's rate limiter.
func New(st *state.State, limits *ratelimit.Limiter) *Handler {
	return &Handler{state: st, limits: limits}
}

// Instance is an instance as the endpoint reports it.
type Instance struct {
	ID                 string            `json:"id"`
	Region             string            `json:"region"`
	Zone               string            `json:"zone"`
	InstanceType       string            `json:"instanceType"`
	CapacityType       string            `json:"capacityType"`
	State              string            `json:"state"`
	BootPhase          string            `json:"bootPhase,omitempty"`
	BootReason         string            `json:"bootReason,omitempty"`
	BootMessage        string            `json:"bootMessage,omitempty"`
	BootRetryAt        *time.Time        `json:"bootRetryAt,omitempty"`
	NodeName           string            `json:"nodeName,omitempty"`
	PrivateDNSName     string            `json:"privateDNSName"`
	ImageID            string            `json:"imageID"`
	InstanceProfileARN string            `json:"instanceProfileARN,omitempty"`
	LaunchTime         time.Time         `json:"launchTime"`
	Tags               map[string]string `json:"tags"`
	Console            []string          `json:"console"`
	// PricePerHour is what the instance costs per hour in USD now: its type's on-demand price
	// in its region, or for spot its type's spot price in its zone (state.World.HourlyPrice);
	// 0 where the catalogue has no price.
	PricePerHour float64 `json:"pricePerHour"`
}

// Faults is the injected faults as the endpoint reads and writes them. A PUT replaces every knob
// (one it leaves out is off) but RateLimits, and leaves Injected alone; a GET reports the knobs
// and Injected.
type Faults struct {
	// RateLimits is how the emulator meters requests against AWS's published limits: "off",
	// "aws", or a factor of AWS's capacities and refill rates ("0.5", "10"). Not a fault but AWS's
	// own behaviour, so a PUT that leaves it out leaves it as it is; GET /_awsemu/limits reports
	// the buckets.
	RateLimits           string       `json:"rateLimits,omitempty"`
	InsufficientCapacity []state.Pool `json:"insufficientCapacity"`
	// ThrottleRate is the share (0..1) of API requests refused as throttled.
	ThrottleRate float64 `json:"throttleRate,omitempty"`
	// ErrorRate is the share (0..1) of API requests answered with a 500 internal error; a
	// request both rates would hit is throttled.
	ErrorRate float64 `json:"errorRate,omitempty"`
	// DescribeInstancesLag is how long new instances stay invisible to DescribeInstances, as a
	// Go duration ("5s").
	DescribeInstancesLag string `json:"describeInstancesLag,omitempty"`
	// Latency delays every API response, as a Go duration ("200ms").
	Latency string `json:"latency,omitempty"`
	// SlowRate is the share (0..1) of API requests delayed by SlowLatency on top of Latency
	// (a Go duration; required with SlowRate).
	SlowRate    float64 `json:"slowRate,omitempty"`
	SlowLatency string  `json:"slowLatency,omitempty"`
	// Injected counts the faults injected since the emulator started; read only.
	Injected *Injected `json:"injected,omitempty"`
}

// Injected counts the faults the emulator injected.
type Injected struct {
	// Requests counts every API request the faults were decided for.
	Requests uint64 `json:"requests"`
	// Throttled, Errors and Slowed count the requests throttled, answered with a 500 and
	// delayed by SlowLatency.
	Throttled uint64 `json:"throttled"`
	Errors    uint64 `json:"errors"`
	Slowed    uint64 `json:"slowed"`
	// InsufficientCapacity counts the launches refused for a pool out of capacity.
	InsufficientCapacity uint64 `json:"insufficientCapacity"`
	// Hidden counts the instance reads DescribeInstancesLag hid an instance from.
	Hidden uint64 `json:"hidden"`
}

// ServeHTTP answers one inspection request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == Prefix+"instances" && r.Method == http.MethodGet:
		h.instances(w)
	case r.URL.Path == Prefix+"faults" && r.Method == http.MethodGet:
		h.faults(w)
	case r.URL.Path == Prefix+"faults" && r.Method == http.MethodPut:
		h.putFaults(w, r)
	case r.URL.Path == Prefix+"limits" && r.Method == http.MethodGet:
		h.rateLimits(w)
	case r.URL.Path == Prefix+"calls" && r.Method == http.MethodGet:
		h.calls(w)
	case r.URL.Path == Prefix+"authorizations" && r.Method == http.MethodGet:
		h.authorizations(w, r)
	case r.URL.Path == Prefix+"events" && r.Method == http.MethodPost:
		h.postEvent(w, r)
	default:
		http.Error(w, fmt.Sprintf("no inspection resource %s %s", r.Method, r.URL.Path), http.StatusNotFound)
	}
}

func (h *Handler) instances(w http.ResponseWriter) {
	out := []Instance{}
	h.state.View(func(world *state.World) {
		for _, rn := range state.SortedKeys(world.Regions) {
			r := world.Regions[rn]
			for _, id := range state.SortedKeys(r.Instances) {
				i := r.Instances[id]
				price, _ := world.HourlyPrice(i.InstanceType, i.Region, i.Zone, i.CapacityType)
				out = append(out, Instance{
					ID: i.ID, Region: i.Region, Zone: i.Zone, InstanceType: i.InstanceType, CapacityType: i.CapacityType,
					State: i.State, BootPhase: i.BootPhase, BootReason: i.BootReason, BootMessage: i.BootMessage, BootRetryAt: i.BootRetryAt, NodeName: i.NodeName,
					PrivateDNSName: i.PrivateDNSName, ImageID: i.ImageID, InstanceProfileARN: i.InstanceProfileARN,
					LaunchTime: i.LaunchTime, Tags: i.Tags, Console: append([]string{}, i.Console...), PricePerHour: price,
				})
			}
		}
	})
	writeJSON(w, out)
}

// calls answers the EC2 calls that succeeded, by action (state.World.Calls), such as
// {"CreateFleet": 3, "TerminateInstances": 1}.
func (h *Handler) calls(w http.ResponseWriter) {
	out := map[string]int{}
	h.state.View(func(world *state.World) {
		maps.Copy(out, world.Calls)
	})
	writeJSON(w, out)
}

func (h *Handler) faults(w http.ResponseWriter) {
	out := Faults{InsufficientCapacity: []state.Pool{}}
	h.state.View(func(world *state.World) {
		f := world.Faults
		for p := range f.InsufficientCapacity {
			out.InsufficientCapacity = append(out.InsufficientCapacity, p)
		}
		slices.SortFunc(out.InsufficientCapacity, func(a, b state.Pool) int {
			return cmp.Or(cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.CapacityType, b.CapacityType))
		})
		out.ThrottleRate, out.ErrorRate, out.SlowRate = f.ThrottleRate, f.ErrorRate, f.SlowRate
		out.DescribeInstancesLag, out.Latency, out.SlowLatency = durationString(f.DescribeInstancesLag), durationString(f.Latency), durationString(f.SlowLatency)
		n := f.Injected
		out.Injected = &Injected{Requests: n.Requests, Throttled: n.Throttled, Errors: n.Errors, Slowed: n.Slowed,
			InsufficientCapacity: n.InsufficientCapacity, Hidden: n.Hidden}
	})
	out.RateLimits = h.limits.Mode().String()
	writeJSON(w, out)
}

func (h *Handler) putFaults(w http.ResponseWriter, r *http.Request) {
	var in Faults
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, fmt.Sprintf("decoding faults, %v", err), http.StatusBadRequest)
		return
	}
	f, err := in.state()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if in.RateLimits != "" {
		mode, err := ratelimit.ParseMode(in.RateLimits)
		if err != nil {
			http.Error(w, fmt.Sprintf("rateLimits: %v", err), http.StatusBadRequest)
			return
		}
		h.limits.SetMode(mode)
	}
	_ = h.state.Update(func(world *state.World) error {
		world.Faults.Set(*f)
		return nil
	})
	h.faults(w)
}

// state checks the faults as written and returns them as the world holds them; an error names
// the field and what it accepts.
func (in Faults) state() (*state.Faults, error) {
	f := &state.Faults{InsufficientCapacity: map[state.Pool]bool{}, ThrottleRate: in.ThrottleRate, ErrorRate: in.ErrorRate, SlowRate: in.SlowRate}
	for name, rate := range map[string]float64{"throttleRate": in.ThrottleRate, "errorRate": in.ErrorRate, "slowRate": in.SlowRate} {
		if rate < 0 || rate > 1 || math.IsNaN(rate) {
			return nil, fmt.Errorf("%s %v is not a share: give a number from 0 to 1", name, rate)
		}
	}
	var err error
	for name, d := range map[string]struct {
		in  string
		out *time.Duration
	}{"describeInstancesLag": {in.DescribeInstancesLag, &f.DescribeInstancesLag}, "latency": {in.Latency, &f.Latency}, "slowLatency": {in.SlowLatency, &f.SlowLatency}} {
		if *d.out, err = duration(d.in); err != nil {
			return nil, fmt.Errorf("decoding %s, %w", name, err)
		}
		if *d.out < 0 {
			return nil, fmt.Errorf("%s %s is negative: give a Go duration of 0 or more (\"2s\")", name, d.in)
		}
	}
	if f.SlowRate > 0 && f.SlowLatency == 0 {
		return nil, fmt.Errorf("slowRate %v delays requests by slowLatency, which is not set: give it as a Go duration (\"3s\")", f.SlowRate)
	}
	for _, p := range in.InsufficientCapacity {
		f.InsufficientCapacity[p] = true
	}
	return f, nil
}

// Limits is the answer of GET /_awsemu/limits: the rate-limit mode and every bucket a request
// was charged to since the mode was set, per account and Region.
type Limits struct {
	// RateLimits is the mode, as Faults.RateLimits.
	RateLimits string `json:"rateLimits"`
	// Buckets are sorted by account, Region and name.
	Buckets []ratelimit.BucketState `json:"buckets"`
	// Throttled totals the requests the buckets refused.
	Throttled uint64 `json:"throttled"`
}

func (h *Handler) rateLimits(w http.ResponseWriter) {
	out := Limits{RateLimits: h.limits.Mode().String(), Buckets: h.limits.Buckets()}
	for _, b := range out.Buckets {
		out.Throttled += b.Throttled
	}
	writeJSON(w, out)
}

func durationString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Event asks the emulator to send an EC2 event about an instance to the interruption queues.
type Event struct {
	InstanceID string `json:"instanceID"`
	// Kind is spot-interruption, rebalance-recommendation, scheduled-change or state-change.
	Kind string `json:"kind"`
}

func (h *Handler) postEvent(w http.ResponseWriter, r *http.Request) {
	var in Event
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, fmt.Sprintf("decoding the event, %v", err), http.StatusBadRequest)
		return
	}
	err := h.state.Update(func(world *state.World) error {
		for _, reg := range world.Regions {
			if i := reg.Instances[in.InstanceID]; i != nil {
				return world.Event(reg, i, in.Kind)
			}
		}
		return fmt.Errorf("no instance %s", in.InstanceID)
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("parsing duration %q, %w", s, err)
	}
	return d, nil
}

// Authorizations is the emulator's authorization log as GET /_awsemu/authorizations reports it.
type Authorizations struct {
	// Decisions are the logged decisions, oldest first, of the role asked for (?role=ARN) or of
	// every principal.
	Decisions []state.Decision `json:"decisions"`
	// Dropped counts the oldest decisions the log no longer holds (state.MaxDecisions) of the
	// role asked for, or of every principal: a coverage check of a role whose decisions were
	// dropped is incomplete; one whose log lost only other principals' decisions is not.
	Dropped int `json:"dropped"`
}

func (h *Handler) authorizations(w http.ResponseWriter, r *http.Request) {
	role := r.URL.Query().Get("role")
	out := Authorizations{Decisions: []state.Decision{}}
	h.state.View(func(world *state.World) {
		out.Dropped = world.IAM.DroppedDecisions
		if role != "" {
			out.Dropped = world.IAM.DroppedByRole[role]
		}
		for _, d := range world.IAM.Decisions {
			if role == "" || d.Role == role {
				out.Decisions = append(out.Decisions, d)
			}
		}
	})
	writeJSON(w, out)
}

// CheckRateLimits reports whether s is a rate-limit mode the emulator takes (off, aws, or a
// positive factor), for callers that check it before starting one.
func CheckRateLimits(s string) error {
	_, err := ratelimit.ParseMode(s)
	return err
}
