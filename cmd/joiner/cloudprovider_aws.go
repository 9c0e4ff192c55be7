//go:build nolocalstack

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// The controller image's build (-tags nolocalstack) ships the AWS provider only: the fake is for
// tests and the local stack's joiner (cloudprovider_fake.go).

const (
	fakeProviderHelp   = `This build (-tags nolocalstack, the controller image's) has the AWS provider only.`
	cloudProviderUsage = "aws (EC2 instances); the only provider of this build"
)

func addFakeFlags(*cobra.Command, *string) {}

// newCloudProvider returns nil for aws, which needs the manager's client and is built by newAWS.
func newCloudProvider(name, _ string) (cloudprovider.CloudProvider, error) {
	if name == cloudProviderAWS {
		return nil, nil
	}
	if name == cloudProviderFake {
		return nil, fmt.Errorf("--cloud-provider fake is not in this build (-tags nolocalstack, the controller image's): it is for tests and the local stack; use --cloud-provider aws, or bin/joiner from make build")
	}
	return nil, fmt.Errorf("--cloud-provider %q is not a provider: use aws", name)
}
