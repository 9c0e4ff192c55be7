package state

import (
	"time"
)

// Instance states as EC2 names them, with their codes.
const (
	InstancePending      = "pending"
	InstanceRunning      = "running"
	InstanceShuttingDown = "shutting-down"
	InstanceTerminated   = "terminated"
)

// StateCode returns EC2's numeric code for an instance state.
func StateCode(state string) int {
	switch state {
	case InstancePending:
		return 0
	case InstanceRunning:
		return 16
	case InstanceShuttingDown:
		return 32
	case InstanceTerminated:
		return 48
	}
	return -1
}

// Capacity types.
const (
	CapacityOnDemand = "on-demand"
	CapacitySpot     = "spot"
)

// Instance is an EC2 instance and what it was launched with.
type Instance struct {
	ID               string
	Region           string
	Zone             string
	ZoneID           string
	SubnetID         string
	VPCID            string
	InstanceType     string
	Architecture     string
	Hypervisor       string
	ImageID          string
	LaunchTemplateID string
	ReservationID    string
	FleetID          string
	CapacityType     string
	PrivateIP        string
	PrivateDNSName   string
	SecurityGroupIDs []string
	// InstanceProfileARN is the profile the instance runs with, "" for none.
	InstanceProfileARN string
	InstanceProfileID  string
	UserData           string // base64, as sent
	Tags               Tags
	LaunchTime         time.Time
	State              string
	StateChangedAt     time.Time
	StateReason        string
	// Console is what the instance printed, as GetConsoleOutput returns it.
	Console []string
	// InterruptAt is when EC2 reclaims the spot instance after an interruption warning.
	InterruptAt *time.Time
	// BootPhase is how far the boot got: "" (not yet booted), BootJoined or BootNotJoined.
	BootPhase string
	// BootReason says why the instance has not joined (awsemu/boot's Reason* values:
	// Unauthorized, KubeletFailed, ...); "" when it joined or has not booted.
	BootReason string
	// BootMessage is the boot's one-line summary: why it did not join, or how it joined.
	BootMessage string
	// BootRetryAt is when the kubelet tries to register again; nil when it joined or never
	// will (the boot cannot succeed as launched).
	BootRetryAt *time.Time
	// NodeName is the Node the instance's kubelet registered; "" until it joins.
	NodeName string
}

// Boot phases of an instance.
const (
	// BootJoined: the kubelet registered the Node.
	BootJoined = "joined"
	// BootNotJoined: no Node appeared; BootReason says why and BootRetryAt when the kubelet
	// tries again, if it does.
	BootNotJoined = "not-joined"
)

// advance moves the instance along its lifecycle to now, spending t in each step.
func (i *Instance) advance(now time.Time, t Timings) {
	switch i.State {
	case InstancePending:
		if now.Sub(i.StateChangedAt) >= t.PendingFor {
			i.State, i.StateChangedAt = InstanceRunning, i.StateChangedAt.Add(t.PendingFor)
		}
	case InstanceShuttingDown:
		if now.Sub(i.StateChangedAt) >= t.ShuttingDownFor {
			i.State, i.StateChangedAt = InstanceTerminated, i.StateChangedAt.Add(t.ShuttingDownFor)
		}
	}
}

// Terminate starts the instance's shutdown and returns its previous state.
func (i *Instance) Terminate(now time.Time, reason string) string {
	prev := i.State
	if prev == InstanceShuttingDown || prev == InstanceTerminated {
		return prev
	}
	i.State, i.StateChangedAt, i.StateReason = InstanceShuttingDown, now, reason
	return prev
}
