package state

import (
	"time"
)

// IAM is the account's identities.
type IAM struct {
	Roles            map[string]*Role
	InstanceProfiles map[string]*InstanceProfile
	// AccessKeys maps an access key id to the name of the role whose session it stands for.
	AccessKeys map[string]string
	// AuthorizationMessages maps an encoded authorization failure message to its decoded JSON.
	AuthorizationMessages map[string]string
}

func newIAM() *IAM {
	return &IAM{
		Roles: map[string]*Role{}, InstanceProfiles: map[string]*InstanceProfile{},
		AccessKeys: map[string]string{}, AuthorizationMessages: map[string]string{},
	}
}

// Role is an IAM role with its inline policies (name → JSON policy document).
type Role struct {
	Name                     string
	ID                       string
	ARN                      string
	Path                     string
	AssumeRolePolicyDocument string
	Policies                 map[string]string
	// ManagedPolicyARNs are the managed policies attached to the role, in attachment order.
	ManagedPolicyARNs []string
	CreatedAt         time.Time
	Tags              Tags
}

// InstanceProfile is an IAM instance profile; AWS allows at most one role in it.
type InstanceProfile struct {
	Name      string
	ID        string
	ARN       string
	Path      string
	RoleName  string // "" when it holds no role
	CreatedAt time.Time
	Tags      Tags
}
