//go:build !nolocalstack

package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

// The fake cloud provider is for tests and for trying the wiring with the local stack's joiner;
// the image's build (-tags nolocalstack, cloudprovider_aws.go) ships the AWS provider only.

const (
	fakeProviderHelp = `--cloud-provider fake runs
an in-memory fake that launches nothing real: it offers the instance types of
--fake-instance-types (a file in the shared/bench schema, as joiner simulate reads), or none, so
that pods stay pending with a FailedScheduling event. It exists for trying the operator only, and
the controller image's build (-tags nolocalstack) does not have it.`
	cloudProviderUsage = "aws (EC2 instances) or fake (in-memory, launches nothing real; for trying the wiring)"
)

func addFakeFlags(cmd *cobra.Command, fakeInstanceTypes *string) {
	cmd.Flags().StringVar(fakeInstanceTypes, "fake-instance-types", "", "With --cloud-provider fake: the instance types it offers, a file in the shared/bench schema")
}

// newCloudProvider returns the fake cloud provider, or nil for aws: that one needs the manager's
// client and is built by newAWS.
func newCloudProvider(name, fakeInstanceTypes string) (cloudprovider.CloudProvider, error) {
	if fakeInstanceTypes != "" && name != cloudProviderFake {
		return nil, errors.New("--fake-instance-types needs --cloud-provider fake")
	}
	switch name {
	case cloudProviderAWS:
		return nil, nil
	case cloudProviderFake:
		cp := &fake.CloudProvider{}
		if fakeInstanceTypes != "" {
			file, err := workload.Load(fakeInstanceTypes)
			if err != nil {
				return nil, fmt.Errorf("reading --fake-instance-types, %w", err)
			}
			for _, it := range file.Catalogue() {
				cp.InstanceTypes = append(cp.InstanceTypes, fakeInstanceType(it))
			}
		}
		return cp, nil
	}
	return nil, fmt.Errorf("--cloud-provider %q is not a provider: use aws or fake", name)
}

// fakeInstanceType turns a catalogue entry into what the fake offers: labels become
// single-valued requirements, and what capacity has beyond allocatable becomes kube-reserved.
func fakeInstanceType(it *scheduling.InstanceType) *cloudprovider.InstanceType {
	out := &cloudprovider.InstanceType{
		Name:         it.Name,
		Requirements: map[string][]string{corev1.LabelInstanceTypeStable: {it.Name}},
		Capacity:     it.Capacity.DeepCopy(),
		Overhead:     cloudprovider.Overhead{KubeReserved: corev1.ResourceList{}},
	}
	if len(out.Capacity) == 0 {
		out.Capacity = it.Allocatable.DeepCopy()
	}
	for k, v := range it.Labels {
		out.Requirements[k] = []string{v}
	}
	for res, capacity := range out.Capacity {
		if alloc, ok := it.Allocatable[res]; ok && capacity.Cmp(alloc) > 0 {
			reserved := capacity.DeepCopy()
			reserved.Sub(alloc)
			out.Overhead.KubeReserved[res] = reserved
		}
	}
	for _, o := range it.Offerings {
		out.Offerings = append(out.Offerings, &cloudprovider.Offering{Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price, Available: o.Available})
		for _, kv := range [][2]string{{corev1.LabelTopologyZone, o.Zone}, {v1.CapacityTypeLabelKey, o.CapacityType}} {
			if !slices.Contains(out.Requirements[kv[0]], kv[1]) {
				out.Requirements[kv[0]] = append(out.Requirements[kv[0]], kv[1])
			}
		}
	}
	return out
}
