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

// TestCreateIsIdempotent: a second Create for the same NodeClaim (its status write failed)
// returns the instance the first launched, without a call; once that instance is terminated,
// Create launches a new one.
func TestCreateIsIdempotent(t *testing.T) {
	e := newEnv(t)
	claim := nodeClaim("twice", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large", "c5.large"))
	claim.UID = "5d0f3c9a-7b1e-4c2a-9f6d-2e8b1a4c7d30"
	first, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Minute) // running now
	fleets := e.calls("CreateFleet")
	second, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(first, second) {
		t.Errorf("second Create differs from the first:\nfirst  %+v\nsecond %+v", first, second)
	}
	if got := e.calls("CreateFleet") - fleets; got != 0 {
		t.Errorf("the second Create made %d CreateFleet calls, want none", got)
	}
	if got := e.live(); len(got) != 1 {
		t.Errorf("live instances %v, want one", got)
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
		t.Errorf("Create returned the terminated instance %s", first.Status.ProviderID)
	}
	if diff := cmp.Diff(map[string]string{instance.InstanceID(third.Status.ProviderID): state.InstancePending}, e.live()); diff != "" {
		t.Errorf("live instances (-want +got):\n%s", diff)
	}
}

// TestCreateAfterRestart: a controller killed between CreateFleet and the NodeClaim's status
// write left an instance with no NodeClaim's tag and no NodeClaim naming it. Started again, a
// launch it fits adopts it instead of launching, whichever waiting NodeClaim asks first; one
// that a NodeClaim names, one that does not fit, and one older than AdoptionMaxAge are never
// adopted, and garbage collection takes the last once its grace is over.
func TestCreateAfterRestart(t *testing.T) {
	m5 := req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")
	c5 := req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "c5.large")
	tests := []struct {
		name string
		// before launches before the kill, and named records its providerID on a NodeClaim.
		before *v1.NodeClaim
		named  bool
		// age is how long after the launch the controller starts again.
		age time.Duration
		// after launches after it.
		after   *v1.NodeClaim
		adopted bool
	}{
		{name: "the same NodeClaim adopts its instance", before: nodeClaim("x", m5), age: 5 * time.Second, after: nodeClaim("x", m5), adopted: true},
		{name: "another NodeClaim it fits adopts it", before: nodeClaim("x", m5), age: 5 * time.Second, after: nodeClaim("y", m5), adopted: true},
		{name: "an instance a NodeClaim names is not adopted", before: nodeClaim("x", m5), named: true, age: 5 * time.Second, after: nodeClaim("y", m5)},
		{name: "an instance the launch does not fit is not adopted", before: nodeClaim("x", m5), age: 5 * time.Second, after: nodeClaim("y", c5)},
		{name: "an instance past AdoptionMaxAge is not adopted", before: nodeClaim("x", m5), age: instance.AdoptionMaxAge + time.Second, after: nodeClaim("x", m5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			first, err := e.provider.Create(t.Context(), tt.before)
			if err != nil {
				t.Fatal(err)
			}
			if tt.named {
				stored := tt.before.DeepCopy()
				stored.Status.ProviderID = first.Status.ProviderID
				if err := e.kube.Create(t.Context(), stored); err != nil {
					t.Fatal(err)
				}
			}
			e.clock.Step(tt.age)
			e.restart(t)
			fleets := e.calls("CreateFleet")
			got, err := e.provider.Create(t.Context(), tt.after)
			if err != nil {
				t.Fatal(err)
			}
			if adopted := got.Status.ProviderID == first.Status.ProviderID; adopted != tt.adopted {
				t.Errorf("adopted %t (got %s, the earlier launch %s), want %t", adopted, got.Status.ProviderID, first.Status.ProviderID, tt.adopted)
			}
			wantFleets, wantLive := 1, 2
			if tt.adopted {
				wantFleets, wantLive = 0, 1
			}
			if n := e.calls("CreateFleet") - fleets; n != wantFleets {
				t.Errorf("%d CreateFleet calls after the restart, want %d", n, wantFleets)
			}
			if n := len(e.live()); n != wantLive {
				t.Errorf("%d live instances, want %d", n, wantLive)
			}
			if tt.adopted || tt.named {
				return
			}
			// The orphan is garbage collection's once its grace is over, even while the NodeClaims
			// launch (they do not own it).
			launching := []string{tt.before.Name, tt.after.Name}
			leaked, err := e.instances.Leaked(t.Context(), []string{got.Status.ProviderID}, launching, e.clock.Now().Add(instance.GarbageCollectionGrace))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{instance.InstanceID(first.Status.ProviderID)}, leaked); diff != "" {
				t.Errorf("Leaked (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLaunchesBatch: NodeClaims alike launched at once go out as one CreateFleet with a target
// capacity of one each, and each gets its own instance; a NodeClaim whose cheapest option is
// another goes in a fleet of its own. Until tagged, a launched instance is its NodeClaim's in the ledger, so
// garbage collection spares it while the NodeClaim launches.
func TestLaunchesBatch(t *testing.T) {
	e := newEnv(t)
	const n = 12
	fleets := e.calls("CreateFleet")
	type launched struct {
		name, providerID string
		err              error
	}
	out := make(chan launched, n+1)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("alike-%d", i)
			got, err := e.provider.Create(t.Context(), nodeClaim(name, req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large", "c5.large")))
			if err != nil {
				out <- launched{name: name, err: err}
				return
			}
			out <- launched{name: name, providerID: got.Status.ProviderID}
		})
	}
	wg.Go(func() {
		// m5.large costs more than c5.large, the others' cheapest: another fleet.
		got, err := e.provider.Create(t.Context(), nodeClaim("other", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
		out <- launched{name: "other", providerID: func() string {
			if got == nil {
				return ""
			}
			return got.Status.ProviderID
		}(), err: err}
	})
	wg.Wait()
	close(out)
	seen := map[string]string{}
	var names []string
	for l := range out {
		if l.err != nil {
			t.Errorf("%s: %v", l.name, l.err)
			continue
		}
		if other, dup := seen[l.providerID]; dup {
			t.Errorf("%s and %s got the same instance %s", l.name, other, l.providerID)
		}
		seen[l.providerID] = l.name
		names = append(names, l.name)
	}
	if got := e.calls("CreateFleet") - fleets; got != 2 {
		t.Errorf("%d launches of two shapes made %d CreateFleet calls, want 2", n+1, got)
	}
	if got := len(e.live()); got != n+1 {
		t.Errorf("%d live instances, want %d", got, n+1)
	}
	leaked, err := e.instances.Leaked(t.Context(), nil, names, e.clock.Now().Add(instance.GarbageCollectionGrace))
	if err != nil {
		t.Fatal(err)
	}
	if len(leaked) != 0 {
		t.Errorf("Leaked = %v while their NodeClaims launch, want none", leaked)
	}
}

// TestReadsShareOneList: a launch describes its instance from what it launched, not with a
// DescribeInstances; the launches of the first AdoptionMaxAge list the cluster's instances once
// per AdoptionRefresh, to adopt what an earlier controller left. Get and IsDrifted of many NodeClaims, as garbage collection and drift
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
	if got := describes() - launching; got != 1 {
		t.Errorf("%d launches made %d DescribeInstances calls, want 1", n, got)
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
