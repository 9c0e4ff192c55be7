package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
)

// emulatedNodeClass is the EC2NodeClass whose NodeClaims launch through the AWS provider on the
// emulator; every other NodeClaim launches on the fake.
const emulatedNodeClass = "emulated"

// emulator is the AWS side of the suite: the emulator's state and clock, and the kubelets that
// boot its instances into the suite's API server (driven by the tests through Sync).
type emulator struct {
	state    *state.State
	clock    *clocktesting.FakeClock
	kubelets *kubelets.Kubelets
	aws      *provider.AWS
}

// startEmulator serves the emulator on loopback, builds the AWS provider on it through the SDK,
// and creates the EC2NodeClass emulatedNodeClass, resolved and Ready.
func startEmulator(ctx context.Context, kube client.Client) (*emulator, error) {
	e, err := emutest.New(ctx) // lives as long as the test binary
	if err != nil {
		return nil, err
	}
	clk, st := e.Clock, e.State
	cluster, err := e.ClusterWithCA()
	if err != nil {
		return nil, err
	}
	a := provider.Build(kube, e.Clients, provider.Options{Cluster: cluster, Region: "us-west-2", KubernetesVersion: "1.33"}, clk)
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		Role:                       state.DefaultSeed().NodeRole,
	}}
	nc.Name = emulatedNodeClass
	if err := a.NodeClasses.Resolve(ctx, nc); err != nil {
		return nil, fmt.Errorf("resolving the emulated node class, %w", err)
	}
	resolved := nc.Status
	if err := kube.Create(ctx, nc); err != nil {
		return nil, err
	}
	nc.Status = resolved
	if err := kube.Status().Update(ctx, nc); err != nil {
		return nil, err
	}
	if err := a.Prices.Refresh(ctx); err != nil {
		return nil, err
	}
	return &emulator{state: st, clock: clk, aws: a, kubelets: kubelets.New(st, clk, kubelets.Options{Client: kube})}, nil
}

// routed is the suite's CloudProvider: NodeClaims of emulatedNodeClass (and instances with aws://
// provider IDs) go to the AWS provider on the emulator, everything else to the fake.
type routed struct {
	*fake.CloudProvider
	aws *provider.CloudProvider
	// awsDiagnoses counts DiagnoseJoin calls that went to the AWS provider.
	awsDiagnoses atomic.Int64
}

var (
	_ cloudprovider.CloudProvider = (*routed)(nil)
	_ cloudprovider.JoinDiagnoser = (*routed)(nil)
)

func isAWS(providerID string) bool { return strings.HasPrefix(providerID, "aws://") }

func emulated(nc *v1.NodeClaim) bool {
	return nc.Spec.NodeClassRef != nil && nc.Spec.NodeClassRef.Name == emulatedNodeClass
}

func (r *routed) Create(ctx context.Context, nc *v1.NodeClaim) (*v1.NodeClaim, error) {
	if emulated(nc) {
		return r.aws.Create(ctx, nc)
	}
	return r.CloudProvider.Create(ctx, nc)
}

func (r *routed) Delete(ctx context.Context, nc *v1.NodeClaim) error {
	if isAWS(nc.Status.ProviderID) {
		return r.aws.Delete(ctx, nc)
	}
	return r.CloudProvider.Delete(ctx, nc)
}

func (r *routed) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	if isAWS(providerID) {
		return r.aws.Get(ctx, providerID)
	}
	return r.CloudProvider.Get(ctx, providerID)
}

func (r *routed) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	a, err1 := r.aws.List(ctx)
	b, err2 := r.CloudProvider.List(ctx)
	return append(a, b...), errors.Join(err1, err2)
}

func (r *routed) GetInstanceTypes(ctx context.Context, np *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == emulatedNodeClass {
		return r.aws.GetInstanceTypes(ctx, np)
	}
	return r.CloudProvider.GetInstanceTypes(ctx, np)
}

func (r *routed) IsDrifted(ctx context.Context, nc *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	if isAWS(nc.Status.ProviderID) {
		return r.aws.IsDrifted(ctx, nc)
	}
	return r.CloudProvider.IsDrifted(ctx, nc)
}

func (r *routed) DiagnoseJoin(ctx context.Context, nc *v1.NodeClaim) (cloudprovider.Diagnosis, error) {
	if isAWS(nc.Status.ProviderID) {
		defer r.awsDiagnoses.Add(1)
		return r.aws.DiagnoseJoin(ctx, nc)
	}
	return r.CloudProvider.DiagnoseJoin(ctx, nc)
}
