package state

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
}

func newFaults() *Faults {
	return &Faults{InsufficientCapacity: map[Pool]bool{}}
}
