package launchtemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// NamePrefix starts the name of every launch template Joiner creates.
const NamePrefix = "joiner/"

// Options are the resolved contents of a launch template.
type Options struct {
	// ClusterName is part of the identity, so two clusters in one account never share templates.
	ClusterName              string
	ImageID                  string
	UserData                 string
	InstanceProfile          string
	SecurityGroupIDs         []string
	BlockDeviceMappings      []awsv1.BlockDeviceMapping
	MetadataOptions          *awsv1.MetadataOptions
	AssociatePublicIPAddress *bool
	DetailedMonitoring       bool
	Tags                     map[string]string
	CapacityReservationID    string
}

// Name is the launch template name for the options: NamePrefix and 32 hex digits of a SHA-256
// of the options, with security groups in any order hashing the same. EC2 allows 128 characters;
// this is 39.
func Name(o Options) (string, error) {
	o.SecurityGroupIDs = slices.Sorted(slices.Values(o.SecurityGroupIDs))
	b, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("naming launch template, %w", err)
	}
	sum := sha256.Sum256(b)
	return NamePrefix + hex.EncodeToString(sum[:16]), nil
}
