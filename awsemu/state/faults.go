package state

import (
	"math"
	"time"
)

// Pool is where capacity comes from: an instance type in a zone with a capacity type.
type Pool struct {
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	CapacityType string `json:"capacityType"`
}

// Faults are the failures injected into the world.
type Faults struct {
	// InsufficientCapacity lists the pools that answer InsufficientInstanceCapacity.
	InsufficientCapacity map[Pool]bool
	// ThrottleRate is the share (0..1) of API requests refused as throttled, spread evenly and
	// deterministically over the requests.
	ThrottleRate float64
	// ErrorRate is the share (0..1) of the API requests not throttled answered with a 500
	// internal error, spread like ThrottleRate over those requests (spread over all of them, the
	// two rates would pick the same requests: at 0.3 and 0.02 every 50th is throttled, and no
	// error would ever be injected).
	ErrorRate float64
	// DescribeInstancesLag hides instances from DescribeInstances and DescribeInstanceStatus for
	// this long after launch, as EC2's eventual consistency does.
	DescribeInstancesLag time.Duration
	// Latency delays every API response by this long.
	Latency time.Duration
	// SlowRate is the share (0..1) of API requests delayed by SlowLatency on top of Latency.
	SlowRate    float64
	SlowLatency time.Duration

	// Injected counts the faults injected so far, for a test to report.
	Injected FaultCounts

	requests, unthrottled uint64
}

// FaultCounts are how many requests each fault hit.
type FaultCounts struct {
	Requests, Throttled, Errors, Slowed uint64
	// InsufficientCapacity counts the launches refused for a pool out of capacity.
	InsufficientCapacity uint64
	// Hidden counts the instance reads the DescribeInstancesLag hid an instance from.
	Hidden uint64
}

// Fault is what happens to one API request.
type Fault struct {
	Throttle bool
	Error    bool
	// Delay is the extra time before the request is served.
	Delay time.Duration
}

// Next counts one API request and decides its faults.
func (f *Faults) Next() Fault {
	f.requests++
	f.Injected.Requests++
	n := f.requests
	out := Fault{Throttle: spread(n, f.ThrottleRate), Delay: f.Latency}
	if !out.Throttle {
		f.unthrottled++
		out.Error = spread(f.unthrottled, f.ErrorRate)
	}
	if f.SlowLatency > 0 && spread(n, f.SlowRate) {
		out.Delay += f.SlowLatency
		f.Injected.Slowed++
	}
	if out.Throttle {
		f.Injected.Throttled++
	}
	if out.Error {
		f.Injected.Errors++
	}
	return out
}

// Throttle counts one API request and reports whether it is to be refused as throttled.
func (f *Faults) Throttle() bool {
	return f.Next().Throttle
}

// spread reports whether the nth request is one of the share rate, spread evenly: exactly
// floor(n*rate) of the first n requests are.
func spread(n uint64, rate float64) bool {
	if rate <= 0 {
		return false
	}
	x := float64(n)
	return math.Floor(x*rate) > math.Floor((x-1)*rate)
}

func newFaults() *Faults {
	return &Faults{InsufficientCapacity: map[Pool]bool{}}
}

// Set replaces the fault knobs with next's, keeping the counts injected so far and the request
// sequence the rates are spread over.
func (f *Faults) Set(next Faults) {
	next.Injected, next.requests, next.unthrottled = f.Injected, f.requests, f.unthrottled
	if next.InsufficientCapacity == nil {
		next.InsufficientCapacity = map[Pool]bool{}
	}
	*f = next
}
