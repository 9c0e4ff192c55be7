package provider

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/drift"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// TestLeakedInstances: an instance no NodeClaim names is leaked once the grace period has
// passed; one that a NodeClaim names never is; terminated ones are not listed.
func TestLeakedInstances(t *testing.T) {
	e := newEnv(t)
	kept, err := e.provider.Create(t.Context(), nodeClaim("kept"))
	if err != nil {
		t.Fatal(err)
	}
	leaked, err := e.provider.Create(t.Context(), nodeClaim("leaked"))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := e.provider.Create(t.Context(), nodeClaim("gone"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.provider.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	owned := []string{kept.Status.ProviderID}
	got, err := e.instances.Leaked(t.Context(), owned, nil, e.clock.Now().Add(instance.GarbageCollectionGrace-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("within the grace period Leaked = %v, want none", got)
	}
	got, err = e.instances.Leaked(t.Context(), owned, nil, e.clock.Now().Add(instance.GarbageCollectionGrace))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{instance.InstanceID(leaked.Status.ProviderID)}, got); diff != "" {
		t.Errorf("Leaked (-want +got):\n%s", diff)
	}
}

func TestIsDrifted(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(nc *awsv1.EC2NodeClass, claim *v1.NodeClaim)
		want   cloudprovider.DriftReason
	}{
		{name: "unchanged", mutate: func(*awsv1.EC2NodeClass, *v1.NodeClaim) {}},
		{name: "new AMI", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			for i := range nc.Status.AMIs {
				nc.Status.AMIs[i].ID = "ami-newer" + nc.Status.AMIs[i].ID
			}
		}, want: drift.ReasonAMI},
		{name: "subnet no longer selected", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			nc.Status.Subnets = []awsv1.Subnet{{ID: "subnet-other", Zone: "us-west-2a"}}
		}, want: drift.ReasonSubnet},
		{name: "security groups changed", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			nc.Status.SecurityGroups = append(nc.Status.SecurityGroups, awsv1.SecurityGroup{ID: "sg-extra"})
		}, want: drift.ReasonSecurityGroup},
		{name: "static field changed", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			nc.Spec.Tags = map[string]string{"team": "platform"}
			hash, _ := drift.NodeClassHash(nc)
			nc.Annotations = map[string]string{awsv1.AnnotationEC2NodeClassHash: hash, awsv1.AnnotationEC2NodeClassHashVersion: drift.HashVersion}
		}, want: drift.ReasonNodeClass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			claim, err := e.provider.Create(t.Context(), nodeClaim("drift", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
			if err != nil {
				t.Fatal(err)
			}
			nc := &awsv1.EC2NodeClass{}
			if err := e.kube.Get(t.Context(), clientKey("default"), nc); err != nil {
				t.Fatal(err)
			}
			hash, _ := drift.NodeClassHash(nc)
			nc.Annotations = map[string]string{awsv1.AnnotationEC2NodeClassHash: hash, awsv1.AnnotationEC2NodeClassHashVersion: drift.HashVersion}
			tt.mutate(nc, claim)
			want := nc.DeepCopy()
			if err := e.kube.Status().Update(t.Context(), nc); err != nil {
				t.Fatal(err)
			}
			nc.Spec, nc.Annotations = want.Spec, want.Annotations
			if err := e.kube.Update(t.Context(), nc); err != nil {
				t.Fatal(err)
			}
			got, err := e.provider.IsDrifted(t.Context(), claim)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("IsDrifted = %q, want %q", got, tt.want)
			}
		})
	}
}

// instancesOf returns the emulator's instances tagged for the NodeClaim, by ID, with their state
// at the emulator's clock.
func (e *env) instancesOf(name string) map[string]string {
	out := map[string]string{}
	e.state.View(func(w *state.World) {
		for id, inst := range w.Regions["us-west-2"].Instances {
			if inst.Tags[awsv1.TagKeyNodeClaim] == name {
				out[id] = inst.State
			}
		}
	})
	return out
}

// TestCreateIsIdempotent: a second Create for the same NodeClaim (a controller killed before it
// recorded the providerID) adopts the instance the first launched and returns the same NodeClaim;
// once that instance is terminated, Create launches a new one.
func TestCreateIsIdempotent(t *testing.T) {
	e := newEnv(t)
	claim := nodeClaim("twice", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large", "c5.large"))
	first, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Minute) // running now
	second, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(first, second) {
		t.Errorf("second Create differs from the first:\nfirst  %+v\nsecond %+v", first, second)
	}
	if got := e.instancesOf("twice"); len(got) != 1 {
		t.Errorf("instances of the nodeclaim %v, want one", got)
	}

	if err := e.provider.Delete(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(state.ShuttingDownFor + time.Second) // terminated, still listed by EC2
	third, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	if third.Status.ProviderID == first.Status.ProviderID {
		t.Errorf("Create adopted the terminated instance %s", first.Status.ProviderID)
	}
	want := map[string]string{
		instance.InstanceID(first.Status.ProviderID): state.InstanceTerminated,
		instance.InstanceID(third.Status.ProviderID): state.InstancePending,
	}
	if diff := cmp.Diff(want, e.instancesOf("twice")); diff != "" {
		t.Errorf("instances of the nodeclaim (-want +got):\n%s", diff)
	}
}

// TestCreateWithinTheLagLaunchesOnce: within DescribeInstances' lag a retried Create cannot see
// the instance just launched, but its CreateFleet carries the NodeClaim's UID as client token,
// and EC2 answers it with the first launch's instance: one instance, one providerID.
func TestCreateWithinTheLagLaunchesOnce(t *testing.T) {
	e := newEnv(t)
	e.putFaultsJSON(t, map[string]any{"insufficientCapacity": []state.Pool{}, "describeInstancesLag": "1m"})
	claim := nodeClaim("retried", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large", "c5.large"))
	claim.UID = "5d0f3c9a-7b1e-4c2a-9f6d-2e8b1a4c7d30"
	first, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Step(10 * time.Second)
	second, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	if second.Status.ProviderID != first.Status.ProviderID {
		t.Errorf("the retried Create returned %s, the first %s", second.Status.ProviderID, first.Status.ProviderID)
	}
	if got := e.instancesOf("retried"); len(got) != 1 {
		t.Errorf("instances of the nodeclaim %v, want one", got)
	}
}

// TestCreateAdoptsTheOldest: a NodeClaim without a UID launches without a client token: within
// DescribeInstances' lag a retried Create cannot see the instance just launched and launches
// another; once both are visible, Create adopts the oldest and leaves the other to garbage
// collection.
func TestCreateAdoptsTheOldest(t *testing.T) {
	e := newEnv(t)
	e.putFaultsJSON(t, map[string]any{"insufficientCapacity": []state.Pool{}, "describeInstancesLag": "1m"})
	claim := nodeClaim("lagged", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large"))
	oldest, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Step(10 * time.Second)
	duplicate, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	if duplicate.Status.ProviderID == oldest.Status.ProviderID {
		t.Fatalf("within the lag, Create found %s", oldest.Status.ProviderID)
	}
	e.clock.Step(2 * time.Minute)
	got, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ProviderID != oldest.Status.ProviderID {
		t.Errorf("adopted %s, want the oldest %s", got.Status.ProviderID, oldest.Status.ProviderID)
	}
	if got := e.instancesOf("lagged"); len(got) != 2 {
		t.Errorf("instances of the nodeclaim %v, want the two launched", got)
	}
}

// TestReadsShareOneList: a launch describes its instance from what it launched, making one
// DescribeInstances (the check for an instance launched before, to adopt), not a second to
// describe the new one. Get and IsDrifted of many NodeClaims, as garbage collection and drift
// make them at every NodeClaim change, answer from that, then share one DescribeInstances (a
// List of the cluster's instances) while its description is younger than DescribedMaxAge,
// instead of one call per NodeClaim and per read; an instance terminated behind Joiner's back
// is still described until then, and found gone by a current read after.
func TestReadsShareOneList(t *testing.T) {
	e := newEnv(t)
	describes := func() int {
		got := 0
		e.state.View(func(w *state.World) { got = w.Calls["DescribeInstances"] })
		return got
	}
	const n = 10
	var claims []*v1.NodeClaim
	launching := describes()
	for i := range n {
		claim, err := e.provider.Create(t.Context(), nodeClaim(fmt.Sprintf("shared-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, claim)
	}
	if got := describes() - launching; got != n {
		t.Errorf("%d launches made %d DescribeInstances calls, want %d", n, got, n)
	}
	readAll := func() {
		t.Helper()
		for range 3 {
			for _, claim := range claims {
				if _, err := e.provider.Get(t.Context(), claim.Status.ProviderID); err != nil {
					t.Fatalf("Get %s: %v", claim.Name, err)
				}
				if reason, err := e.provider.IsDrifted(t.Context(), claim); err != nil || reason != "" {
					t.Fatalf("IsDrifted %s = %q, %v", claim.Name, reason, err)
				}
			}
		}
	}
	// What Create described serves at once; then, once that is too old, one List serves all.
	for _, step := range []time.Duration{0, DescribedMaxAge + time.Second} {
		e.clock.Step(step)
		before := describes()
		readAll()
		want := 0
		if step > 0 {
			want = 1
		}
		if got := describes() - before; got != want {
			t.Errorf("%d reads of %d NodeClaims %v after they launched made %d DescribeInstances calls, want %d", 6*n, n, step, got, want)
		}
	}

	// Readers that find the descriptions too old at once wait for one List.
	e.clock.Step(DescribedMaxAge + time.Second)
	before := describes()
	var wg sync.WaitGroup
	for _, claim := range claims {
		wg.Go(func() {
			if _, err := e.provider.Get(t.Context(), claim.Status.ProviderID); err != nil {
				t.Errorf("Get %s: %v", claim.Name, err)
			}
		})
	}
	wg.Wait()
	if got := describes() - before; got != 1 {
		t.Errorf("%d concurrent Gets made %d DescribeInstances calls, want 1", n, got)
	}

	gone := claims[0]
	if _, err := e.clients.EC2.TerminateInstances(t.Context(), &ec2.TerminateInstancesInput{InstanceIds: []string{instance.InstanceID(gone.Status.ProviderID)}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(state.ShuttingDownFor + time.Second)
	if _, err := e.provider.Get(t.Context(), gone.Status.ProviderID); err != nil {
		t.Errorf("Get within DescribedMaxAge of the last List: %v, want the instance as listed", err)
	}
	e.clock.Step(DescribedMaxAge)
	if _, err := e.provider.Get(t.Context(), gone.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Get after DescribedMaxAge: %v, want NodeClaimNotFound", err)
	}
}
