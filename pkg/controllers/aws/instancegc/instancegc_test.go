package instancegc

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/testkit"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
)

// env is an emulated AWS, the instance provider over it as the operator builds it, and a fake
// API server client holding NodeClaims.
type env struct {
	clock     *clocktesting.FakeClock
	state     *state.State
	ec2       *ec2.Client
	kube      client.Client
	instances *instance.Provider
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := emutest.Start(t)
	clk, st, c := e.Clock, e.State, e.Clients
	scheme := runtime.NewScheme()
	_ = v1.AddToScheme(scheme)
	return &env{clock: clk, state: st, ec2: c.EC2, kube: fake.NewClientBuilder().WithScheme(scheme).Build(),
		instances: instance.NewProvider(c.EC2, nil, nil, state.DefaultSeed().ClusterName, clk)}
}

// launch runs one instance tagged as Joiner tags the instances it launches for the cluster.
func (e *env) launch(t *testing.T) *instance.Instance {
	t.Helper()
	discovery := []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"demo"}}}
	subnets, err := e.ec2.DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{Filters: discovery})
	if err != nil {
		t.Fatal(err)
	}
	images, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-x86_64-standard-1.33-v20251101"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: images.Images[0].ImageId,
		InstanceType: ec2types.InstanceTypeM5Large, SubnetId: subnets.Subnets[0].SubnetId,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{
			{Key: aws.String(awsv1.TagKeyPrefixCluster + state.DefaultSeed().ClusterName), Value: aws.String("owned")},
			{Key: aws.String(awsv1.TagKeyNodePool), Value: aws.String("default")},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := e.instances.Get(t.Context(), aws.ToString(out.Instances[0].InstanceId))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func (e *env) nodeClaim(t *testing.T, name string, inst *instance.Instance) {
	t.Helper()
	nc := &v1.NodeClaim{}
	nc.Name = name
	nc.Status.ProviderID = inst.ProviderID()
	if err := e.kube.Create(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
}

func (e *env) instanceState(id string) string {
	var s string
	e.state.View(func(w *state.World) { s = w.Regions["us-west-2"].Instances[id].State })
	return s
}

func TestTerminatesOnlyLeakedInstancesAfterTheGrace(t *testing.T) {
	e := newEnv(t)
	leaked, owned := e.launch(t), e.launch(t)
	e.nodeClaim(t, "owned", owned)
	c := NewController(e.kube, e.instances, e.clock)

	// Within the grace a NodeClaim may be being created for the instance: nothing is leaked.
	e.clock.Step(instance.GarbageCollectionGrace - time.Second)
	if got, err := c.Collect(t.Context()); err != nil || len(got) != 0 {
		t.Fatalf("within the grace: terminated %v, %v", got, err)
	}

	e.clock.Step(2 * time.Second)
	young := e.launch(t)
	got, err := c.Collect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != leaked.ID {
		t.Fatalf("terminated %v, want only the leaked %s", got, leaked.ID)
	}
	for id, want := range map[string]bool{leaked.ID: true, owned.ID: false, young.ID: false} {
		s := e.instanceState(id)
		if terminating := s == "shutting-down" || s == "terminated"; terminating != want {
			t.Errorf("instance %s is %s, terminated want %v", id, s, want)
		}
	}

	// Once terminating, the leaked instance is not terminated again.
	if got, err := c.Collect(t.Context()); err != nil || len(got) != 0 {
		t.Fatalf("second collection: terminated %v, %v", got, err)
	}
}

func TestStartCollectsOnTheClock(t *testing.T) {
	e := newEnv(t)
	leaked := e.launch(t)
	c := NewController(e.kube, e.instances, e.clock)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = c.Start(ctx); close(done) }()
	testkit.Poll(t, 5*time.Second, "the ticker", e.clock.HasWaiters)
	e.clock.Step(Interval)
	testkit.Poll(t, 5*time.Second, "the leaked instance terminated", func() bool {
		s := e.instanceState(leaked.ID)
		return s == "shutting-down" || s == "terminated"
	})
	cancel()
	<-done
	if !c.NeedLeaderElection() {
		t.Error("runs on every replica")
	}
}
