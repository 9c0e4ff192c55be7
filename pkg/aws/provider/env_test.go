package provider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
)

// env is an emulated AWS, a resolved EC2NodeClass in a fake API server client, and the cloud
// provider wired as the operator wires it.
type env struct {
	emu         *emutest.Emulator
	url         string
	clock       *clocktesting.FakeClock
	state       *state.State
	clients     *sdk.Clients
	unavailable *instancetype.UnavailableOfferings
	nodeClass   *awsv1.EC2NodeClass
	kube        client.Client
	instances   *instance.Provider
	provider    *CloudProvider
	// opts built the provider; restart builds another from them.
	opts Options
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, func(*awsv1.EC2NodeClass) {})
}

// newEnvWith is newEnvAnyStatus requiring the node class to resolve Ready.
func newEnvWith(t *testing.T, mutate func(*awsv1.EC2NodeClass)) *env {
	t.Helper()
	e := newEnvAnyStatus(t, mutate)
	if !meta.IsStatusConditionTrue(e.nodeClass.Status.Conditions, awsv1.ConditionTypeReady) {
		t.Fatalf("EC2NodeClass not Ready: %+v", e.nodeClass.Status.Conditions)
	}
	return e
}

// newEnvAnyStatus lets mutate change the node class before it is resolved, whatever status it
// resolves to. Instances boot only when a test drives kubelets.Kubelets over e.state.
func newEnvAnyStatus(t *testing.T, mutate func(*awsv1.EC2NodeClass)) *env {
	t.Helper()
	return newEnvUnder(t, "", mutate)
}

// newEnvUnder is newEnvAnyStatus with policy, when not "", as the controller role's only policy
// from the first call on.
func newEnvUnder(t *testing.T, policy string, mutate func(*awsv1.EC2NodeClass)) *env {
	t.Helper()
	emu := emutest.Start(t)
	// The userData Joiner renders must name the cluster the instances boot into, as on EKS, where
	// every cluster has a CA bundle.
	cluster, err := emu.ClusterWithCA()
	if err != nil {
		t.Fatal(err)
	}
	if policy != "" {
		emu.SetControllerPolicy(t, policy)
	}
	clk, c := emu.Clock, emu.Clients
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		Role:                       "KarpenterNodeRole-demo",
		Tags:                       map[string]string{"team": "infra"},
	}}
	nc.Name = "default"
	mutate(nc)
	scheme := runtime.NewScheme()
	_ = awsv1.AddToScheme(scheme)
	_ = v1.AddToScheme(scheme)
	kube := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&awsv1.EC2NodeClass{}).Build()
	opts := Options{
		Cluster:           cluster,
		Region:            "us-west-2",
		KubernetesVersion: "1.33",
	}
	a := Build(kube, c, opts, clk)
	if err := a.NodeClasses.Resolve(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	status := nc.Status
	if err := kube.Create(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	nc.Status = status
	if err := kube.Status().Update(t.Context(), nc); err != nil {
		t.Fatal(err)
	}
	if err := a.Prices.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := &env{emu: emu, url: emu.URL, clock: clk, state: emu.State, clients: c, unavailable: a.Unavailable, nodeClass: nc, kube: kube,
		instances: a.Instances, provider: a.CloudProvider, opts: opts}
	return e
}

// restart replaces the provider with one built afresh over the same emulator and API server: a
// controller killed and started again, which remembers nothing of its launches.
func (e *env) restart(t *testing.T) {
	t.Helper()
	a := Build(e.kube, e.clients, e.opts, e.clock)
	if err := a.Prices.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.instances, e.provider, e.unavailable = a.Instances, a.CloudProvider, a.Unavailable
}

// calls is how many calls of the EC2 action the emulator answered.
func (e *env) calls(action string) int {
	got := 0
	e.state.View(func(w *state.World) { got = w.Calls[action] })
	return got
}

// live is the emulator's pending and running instances, by ID, with their state.
func (e *env) live() map[string]string {
	out := map[string]string{}
	e.state.View(func(w *state.World) {
		for id, inst := range w.Regions["us-west-2"].Instances {
			if inst.State == state.InstancePending || inst.State == state.InstanceRunning {
				out[id] = inst.State
			}
		}
	})
	return out
}

// putFaults replaces the emulator's injected faults through its inspection endpoint.
func (e *env) putFaults(t *testing.T, pools ...state.Pool) {
	t.Helper()
	e.putFaultsJSON(t, map[string]any{"insufficientCapacity": pools})
}

// putFaultsJSON PUTs a faults document as the inspection endpoint reads it.
func (e *env) putFaultsJSON(t *testing.T, faults map[string]any) {
	t.Helper()
	body, _ := json.Marshal(faults)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, e.url+"/_awsemu/faults", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT faults: %s", resp.Status)
	}
}

// instance returns the emulator's record of an instance.
func (e *env) instance(id string) state.Instance {
	var out state.Instance
	e.state.View(func(w *state.World) { out = *w.Regions["us-west-2"].Instances[id] })
	return out
}

func (e *env) setControllerPolicy(t *testing.T, doc string) { e.emu.SetControllerPolicy(t, doc) }

func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }
