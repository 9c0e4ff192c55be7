package instance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// fakeEC2 launches at most fulfil instances per fleet (all when negative), answering the
// shortfall with errs; it knows the instances in known, and records its calls.
type fakeEC2 struct {
	EC2API
	fulfil int
	errs   []ec2types.CreateFleetError
	known  map[string]bool

	mu         sync.Mutex
	fleets     []int32
	describes  [][]string
	terminates [][]string
	next       int
}

func (f *fakeEC2) CreateFleet(_ context.Context, in *ec2.CreateFleetInput, _ ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := aws.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity)
	f.fleets = append(f.fleets, want)
	n := int(want)
	if f.fulfil >= 0 {
		n = min(n, f.fulfil)
	}
	ov := in.LaunchTemplateConfigs[0].Overrides[0]
	out := &ec2.CreateFleetOutput{}
	var ids []string
	for range n {
		f.next++
		ids = append(ids, fmt.Sprintf("i-%017d", f.next))
	}
	out.Instances = []ec2types.CreateFleetInstance{{InstanceIds: ids, InstanceType: ov.InstanceType,
		LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{Overrides: &ec2types.FleetLaunchTemplateOverrides{
			InstanceType: ov.InstanceType, SubnetId: ov.SubnetId, AvailabilityZone: ov.AvailabilityZone,
		}}}}
	if n < int(want) {
		out.Errors = f.errs
	}
	return out, nil
}

func notFound(ids ...string) error {
	return &smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound", Message: fmt.Sprintf("The instance IDs '%v' do not exist", ids)}
}

func (f *fakeEC2) DescribeInstances(_ context.Context, in *ec2.DescribeInstancesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes = append(f.describes, slices.Clone(in.InstanceIds))
	out := &ec2.DescribeInstancesOutput{}
	for _, id := range in.InstanceIds {
		if !f.known[id] {
			return nil, notFound(id)
		}
		out.Reservations = append(out.Reservations, ec2types.Reservation{Instances: []ec2types.Instance{{
			InstanceId: aws.String(id), State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameRunning},
		}}})
	}
	return out, nil
}

func (f *fakeEC2) TerminateInstances(_ context.Context, in *ec2.TerminateInstancesInput, _ ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.terminates = append(f.terminates, slices.Clone(in.InstanceIds))
	for _, id := range in.InstanceIds {
		if !f.known[id] {
			return nil, notFound(id)
		}
	}
	return &ec2.TerminateInstancesOutput{}, nil
}

type marks struct {
	mu  sync.Mutex
	got []string
}

func (m *marks) MarkUnavailable(instanceType, zone, capacityType string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, instanceType+"/"+zone+"/"+capacityType)
}

func launchFor(name string) Launch {
	return Launch{
		CapacityType: v1.CapacityTypeOnDemand, NodeClaim: name, NodeClaimUID: "uid-" + name,
		Overrides: []Override{{InstanceType: "m5.large", Zone: "us-west-2a", SubnetID: "subnet-a", LaunchTemplate: "lt"}},
		Tags:      map[string]string{"karpenter.sh/nodepool": "general"},
	}
}

// TestFleetBatches: concurrent launches alike make one CreateFleet asking for all of them; each
// launch gets its own instance, and when EC2 launches fewer, the launches left without one get
// an InsufficientCapacityError with the pools EC2 refused marked unavailable, or the fleet's
// other error.
func TestFleetBatches(t *testing.T) {
	ice := ec2types.CreateFleetError{ErrorCode: aws.String("InsufficientInstanceCapacity"), LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{
		Overrides: &ec2types.FleetLaunchTemplateOverrides{InstanceType: "m5.large", SubnetId: aws.String("subnet-a")},
	}}
	tests := []struct {
		name     string
		fulfil   int
		errs     []ec2types.CreateFleetError
		launched int
		// ice: the launches left without an instance got an InsufficientCapacityError (else
		// another error).
		ice   bool
		marks []string
	}{
		{name: "all launched", fulfil: -1, launched: 5},
		{name: "partial, capacity errors", fulfil: 3, errs: []ec2types.CreateFleetError{ice}, launched: 3, ice: true, marks: []string{"m5.large/us-west-2a/on-demand"}},
		{name: "partial, no error given", fulfil: 2, launched: 2, ice: true},
		{name: "partial, another error", fulfil: 1, errs: []ec2types.CreateFleetError{{ErrorCode: aws.String("InvalidParameterValue"), ErrorMessage: aws.String("bad")}}, launched: 1},
	}
	const n = 5
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeEC2{fulfil: tt.fulfil, errs: tt.errs}
			m := &marks{}
			p := NewProvider(api, m, nil, "demo", clocktesting.NewFakeClock(time.Unix(1e9, 0)))
			insts := make([]*Instance, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { insts[i], errs[i] = p.Create(t.Context(), launchFor(fmt.Sprintf("nc-%d", i))) })
			}
			wg.Wait()
			if !slices.Equal(api.fleets, []int32{n}) {
				t.Errorf("CreateFleet target capacities %v, want one call for %d", api.fleets, n)
			}
			seen := map[string]bool{}
			launched := 0
			for i := range n {
				switch {
				case errs[i] == nil:
					launched++
					if seen[insts[i].ID] {
						t.Errorf("%s handed twice", insts[i].ID)
					}
					seen[insts[i].ID] = true
					if got := p.Launched("uid-"+fmt.Sprintf("nc-%d", i), ""); got == nil || got.ID != insts[i].ID {
						t.Errorf("ledger of nc-%d: %v, want %s", i, got, insts[i].ID)
					}
				case cloudprovider.IsInsufficientCapacityError(errs[i]) != tt.ice:
					t.Errorf("nc-%d: %v, want insufficient capacity %t", i, errs[i], tt.ice)
				}
			}
			if launched != tt.launched {
				t.Errorf("%d launched, want %d", launched, tt.launched)
			}
			if !slices.Equal(m.got, tt.marks) {
				t.Errorf("marked unavailable %v, want %v", m.got, tt.marks)
			}
			// A retried launch gets its instance again, without a call; the others (one at a time)
			// launch anew.
			for i := range n {
				again, err := p.Create(t.Context(), launchFor(fmt.Sprintf("nc-%d", i)))
				if errs[i] == nil && (err != nil || again.ID != insts[i].ID) {
					t.Errorf("retried nc-%d: %v %v, want %s", i, again, err, insts[i].ID)
				}
			}
			if want := 1 + n - tt.launched; len(api.fleets) != want {
				t.Errorf("%d CreateFleet calls after the retries, want %d", len(api.fleets), want)
			}
		})
	}
}

// TestIDsBatch: concurrent Gets and Deletes share DescribeInstances and TerminateInstances calls,
// and an unknown ID fails only its own caller.
func TestIDsBatch(t *testing.T) {
	api := &fakeEC2{fulfil: -1, known: map[string]bool{"i-1": true, "i-2": true, "i-3": true}}
	p := NewProvider(api, &marks{}, nil, "demo", clocktesting.NewFakeClock(time.Unix(1e9, 0)))
	ids := []string{"i-1", "i-2", "i-3", "i-missing"}
	getErrs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { _, getErrs[i] = p.Get(t.Context(), id) })
	}
	wg.Wait()
	for i, id := range ids {
		if missing := id == "i-missing"; cloudprovider.IsNodeClaimNotFoundError(getErrs[i]) != missing || (!missing && getErrs[i] != nil) {
			t.Errorf("Get %s: %v", id, getErrs[i])
		}
	}
	// One call for the four, then each alone after EC2 refused it for the unknown one.
	if len(api.describes) != 5 || len(api.describes[0]) != 4 {
		t.Errorf("DescribeInstances calls %v, want one for all four, then one each", api.describes)
	}
	api.describes = nil
	delErrs := make([]error, 3)
	for i, id := range ids[:3] {
		wg.Go(func() { delErrs[i] = p.Delete(t.Context(), id) })
	}
	wg.Wait()
	for i, err := range delErrs {
		if err != nil {
			t.Errorf("Delete %s: %v", ids[i], err)
		}
	}
	if len(api.describes) != 1 || len(api.terminates) != 1 || len(api.terminates[0]) != 3 {
		t.Errorf("Deletes of three made DescribeInstances %v and TerminateInstances %v, want one of each", api.describes, api.terminates)
	}
}
