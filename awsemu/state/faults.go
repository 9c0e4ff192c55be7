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
	// DescribeInstancesLag hides instances from DescribeInstances and DescribeInstanceStatus for
	// this long after launch, as EC2's eventual consistency does.
	DescribeInstancesLag time.Duration
	// Latency delays every API response by this long.
	Latency time.Duration

	requests uint64
}

// Throttle counts one API request and reports whether it is to be refused as throttled.
func (f *Faults) Throttle() bool {
	f.requests++
	if f.ThrottleRate <= 0 {
		return false
	}
	n := float64(f.requests)
	return math.Floor(n*f.ThrottleRate) > math.Floor((n-1)*f.ThrottleRate)
}

func newFaults() *Faults {
	return &Faults{InsufficientCapacity: map[Pool]bool{}}
}
