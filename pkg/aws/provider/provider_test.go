package provider

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

func nodeClaim(name string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	nc := &v1.NodeClaim{Spec: v1.NodeClaimSpec{
		Requirements: reqs,
		NodeClassRef: &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "default"},
		Taints:       []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}},
	}}
	nc.Name = name
	nc.Labels = map[string]string{v1.NodePoolLabelKey: "general", "team": "infra"}
	return nc
}

func req(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

func TestCreate(t *testing.T) {
	e := newEnv(t)
	claim := nodeClaim("general-abc12",
		req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large", "m6g.large", "c5.large"),
		req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpIn, "on-demand"),
		req(corev1.LabelTopologyZone, v1.NodeSelectorOpIn, "us-west-2b"))
	got, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	id := instance.InstanceID(got.Status.ProviderID)
	if id == "" || !strings.HasPrefix(got.Status.ProviderID, "aws:///us-west-2b/i-") {
		t.Fatalf("providerID %q", got.Status.ProviderID)
	}
	inst := e.instance(id)
	// On-demand lowest-price: c5.large is the cheapest of the three in the catalogue.
	wantLabels := map[string]string{
		corev1.LabelInstanceTypeStable: inst.InstanceType, corev1.LabelTopologyZone: "us-west-2b", corev1.LabelTopologyRegion: "us-west-2",
		v1.CapacityTypeLabelKey: "on-demand", v1.NodePoolLabelKey: "general", corev1.LabelArchStable: map[string]string{"x86_64": "amd64", "arm64": "arm64"}[inst.Architecture],
		"team": "infra",
	}
	for k, v := range wantLabels {
		if got.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, got.Labels[k], v)
		}
	}
	if got.Status.ImageID != inst.ImageID {
		t.Errorf("imageID %s, instance has %s", got.Status.ImageID, inst.ImageID)
	}
	var imageArch string
	e.state.View(func(w *state.World) { imageArch = w.Regions["us-west-2"].Images[inst.ImageID].Architecture })
	if imageArch != inst.Architecture {
		t.Errorf("instance %s (%s) launched with an %s AMI", inst.InstanceType, inst.Architecture, imageArch)
	}
	if got.Status.Capacity.Cpu().IsZero() || got.Status.Allocatable.Memory().IsZero() {
		t.Errorf("capacity %v allocatable %v", got.Status.Capacity, got.Status.Allocatable)
	}
	// Launched with the tags its NodePool's NodeClaims share, so that launches alike are one
	// fleet; its own follow once its node is known.
	for k, v := range map[string]string{
		"kubernetes.io/cluster/demo": "owned", awsv1.TagKeyNodePool: "general", awsv1.TagKeyNodeClaim: "",
		awsv1.TagKeyNodeClass: "default", awsv1.TagKeyName: "", "team": "infra", awsv1.TagKeyEKSClusterName: "demo",
	} {
		if inst.Tags[k] != v {
			t.Errorf("instance tag %s = %q at launch, want %q", k, inst.Tags[k], v)
		}
	}
	registered := got.DeepCopy()
	registered.Status.NodeName = "ip-10-0-1-17.us-west-2.compute.internal"
	if _, err := e.provider.IsDrifted(t.Context(), registered); err != nil {
		t.Fatal(err)
	}
	inst = e.instance(instance.InstanceID(got.Status.ProviderID))
	for k, v := range map[string]string{awsv1.TagKeyNodeClaim: "general-abc12", awsv1.TagKeyName: registered.Status.NodeName} {
		if inst.Tags[k] != v {
			t.Errorf("instance tag %s = %q once the node registered, want %q", k, inst.Tags[k], v)
		}
	}
	if inst.InstanceProfileARN == "" {
		t.Error("instance launched without the instance profile")
	}
	if !strings.Contains(decode(t, inst.UserData), "karpenter.sh/unregistered") {
		t.Error("userData lacks the karpenter.sh/unregistered taint")
	}
	if claim.Status.ProviderID != "" {
		t.Error("Create modified its input")
	}
	checkGetListDelete(t, e, got, inst.InstanceType)
}

// checkGetListDelete: Get and List see a launched NodeClaim's instance; Delete terminates it,
// then reports it gone.
func checkGetListDelete(t *testing.T, e *env, got *v1.NodeClaim, instanceType string) {
	t.Helper()
	fetched, err := e.provider.Get(t.Context(), got.Status.ProviderID)
	if err != nil {
		t.Fatal(err)
	}
	if fetched.Name != got.Name || fetched.Labels[corev1.LabelInstanceTypeStable] != instanceType {
		t.Errorf("Get: name %q labels %v", fetched.Name, fetched.Labels)
	}
	for _, l := range []string{corev1.LabelTopologyZone, v1.CapacityTypeLabelKey, corev1.LabelArchStable, v1.NodePoolLabelKey} {
		if fetched.Labels[l] != got.Labels[l] {
			t.Errorf("Get: label %s = %q, Create said %q", l, fetched.Labels[l], got.Labels[l])
		}
	}
	if !equality.Semantic.DeepEqual(fetched.Status.Allocatable, got.Status.Allocatable) || fetched.Status.ImageID != got.Status.ImageID {
		t.Errorf("Get: allocatable %v image %s, Create said %v %s", fetched.Status.Allocatable, fetched.Status.ImageID, got.Status.Allocatable, got.Status.ImageID)
	}
	list, err := e.provider.List(t.Context())
	if err != nil || len(list) != 1 || list[0].Status.ProviderID != got.Status.ProviderID {
		t.Fatalf("List: %v, %v", list, err)
	}
	if err := e.provider.Delete(t.Context(), got); err != nil {
		t.Fatalf("first Delete: %v", err)
	}
	if err := e.provider.Delete(t.Context(), got); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("second Delete: %v, want NodeClaimNotFound", err)
	}
}

// TestCreateFallsThroughInsufficientCapacity is the acceptance test: the first choice out of
// capacity (injected through the emulator's fault endpoint), the launch lands on the next
// offering and the first is remembered as unavailable.
func TestCreateFallsThroughInsufficientCapacity(t *testing.T) {
	e := newEnv(t)
	reqs := []v1.NodeSelectorRequirementWithMinValues{
		req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large", "m5.xlarge", "c5.large", "c5.xlarge"),
		req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpIn, "spot"),
	}
	first, err := e.provider.Create(t.Context(), nodeClaim("probe", reqs...))
	if err != nil {
		t.Fatal(err)
	}
	pool := state.Pool{InstanceType: first.Labels[corev1.LabelInstanceTypeStable], Zone: first.Labels[corev1.LabelTopologyZone], CapacityType: "spot"}
	if err := e.provider.Delete(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	e.putFaults(t, pool)
	got, err := e.provider.Create(t.Context(), nodeClaim("general-x", reqs...))
	if err != nil {
		t.Fatalf("Create with the first choice out of capacity: %v", err)
	}
	next := state.Pool{InstanceType: got.Labels[corev1.LabelInstanceTypeStable], Zone: got.Labels[corev1.LabelTopologyZone], CapacityType: got.Labels[v1.CapacityTypeLabelKey]}
	if next == pool || next.CapacityType != "spot" {
		t.Errorf("launched %+v, want a spot offering other than %+v", next, pool)
	}
	if !e.unavailable.IsUnavailable(pool.InstanceType, pool.Zone, pool.CapacityType) {
		t.Errorf("%+v not marked unavailable", pool)
	}
	its, err := e.provider.GetInstanceTypes(t.Context(), &v1.NodePool{Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{NodeClassRef: nodeClaim("x").Spec.NodeClassRef}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range its {
		if it.Name != pool.InstanceType {
			continue
		}
		for _, o := range it.Offerings {
			if o.Zone == pool.Zone && o.CapacityType == "spot" && o.Available {
				t.Error("GetInstanceTypes offers the pool that just ran out of capacity")
			}
		}
	}
}

func TestCreateAllOutOfCapacity(t *testing.T) {
	e := newEnv(t)
	var pools []state.Pool
	for _, z := range []string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"} {
		pools = append(pools, state.Pool{InstanceType: "m5.large", Zone: z, CapacityType: "on-demand"})
	}
	e.putFaults(t, pools...)
	_, err := e.provider.Create(t.Context(), nodeClaim("general-y", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
	if !cloudprovider.IsInsufficientCapacityError(err) {
		t.Fatalf("Create: %v, want InsufficientCapacityError", err)
	}
	for _, p := range pools {
		if !e.unavailable.IsUnavailable(p.InstanceType, p.Zone, p.CapacityType) {
			t.Errorf("%+v not marked unavailable", p)
		}
	}
	// Now every offering is known unavailable: Create fails before calling EC2.
	if _, err := e.provider.Create(t.Context(), nodeClaim("general-z", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large"))); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("second Create: %v, want InsufficientCapacityError", err)
	}
}

func TestCreateNeverCrossesArchitectures(t *testing.T) {
	e := newEnv(t)
	got, err := e.provider.Create(t.Context(), nodeClaim("arm",
		req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m6g.large", "m5.large", "t4g.medium", "t3.medium")))
	if err != nil {
		t.Fatal(err)
	}
	var fleetArchs []string
	inst := e.instance(instance.InstanceID(got.Status.ProviderID))
	e.state.View(func(w *state.World) {
		r := w.Regions["us-west-2"]
		for _, lt := range r.LaunchTemplates {
			fleetArchs = append(fleetArchs, lt.Name+"="+r.Images[lt.Data.ImageID].Architecture)
		}
		if img := r.Images[inst.ImageID]; img.Architecture != inst.Architecture {
			t.Errorf("instance %s (%s) runs image %s (%s)", inst.ID, inst.Architecture, img.ID, img.Architecture)
		}
	})
	if len(fleetArchs) != 2 {
		t.Errorf("launch templates %v, want one per architecture", fleetArchs)
	}
}

func TestCreateNodeClassNotReady(t *testing.T) {
	e := newEnv(t)
	claim := nodeClaim("x")
	claim.Spec.NodeClassRef.Name = "missing"
	if _, err := e.provider.Create(t.Context(), claim); !cloudprovider.IsNodeClassNotReadyError(err) {
		t.Errorf("Create with a missing node class: %v, want NodeClassNotReadyError", err)
	}
}

func TestAllowedCapacityTypes(t *testing.T) {
	tests := []struct {
		reqs []v1.NodeSelectorRequirementWithMinValues
		want []string
	}{
		{nil, []string{"on-demand"}},
		{[]v1.NodeSelectorRequirementWithMinValues{req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpIn, "spot", "on-demand")}, []string{"spot", "on-demand"}},
		{[]v1.NodeSelectorRequirementWithMinValues{req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpNotIn, "spot")}, []string{"reserved", "on-demand"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, allowedCapacityTypes(tt.reqs)); diff != "" {
			t.Errorf("allowedCapacityTypes(%v) (-want +got):\n%s", tt.reqs, diff)
		}
	}
}

func decode(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return s
	}
	return string(b)
}

// TestCreateDeniedPassRole: a launch refused for iam:PassRole is a CreateError whose message is
// the decoded denial.
func TestCreateDeniedPassRole(t *testing.T) {
	e := newEnv(t)
	e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":"iam:PassRole","Resource":"*"}]}`)
	_, err := e.provider.Create(t.Context(), nodeClaim("denied", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
	ce := cloudprovider.AsCreateError(err)
	if ce == nil {
		t.Fatalf("Create: %v, want a CreateError", err)
	}
	if ce.ConditionReason != "UnauthorizedOperation" || !strings.Contains(ce.ConditionMessage, "iam:PassRole") ||
		!strings.Contains(ce.ConditionMessage, "role/KarpenterNodeRole-demo") {
		t.Errorf("CreateError %s: %s", ce.ConditionReason, ce.ConditionMessage)
	}
}

// TestCreateWhileDescribeLags: EC2's eventual consistency hides the new instance from
// DescribeInstances; Create still returns the NodeClaim from what CreateFleet said, and Get
// answers from that launch while a current read does not find the instance yet.
func TestCreateWhileDescribeLags(t *testing.T) {
	e := newEnv(t)
	e.putFaultsJSON(t, map[string]any{"insufficientCapacity": []state.Pool{}, "describeInstancesLag": "1m"})
	got, err := e.provider.Create(t.Context(), nodeClaim("lagging", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large"),
		req(corev1.LabelTopologyZone, v1.NodeSelectorOpIn, "us-west-2c")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Status.ProviderID, "aws:///us-west-2c/i-") || got.Status.ImageID == "" || got.Labels[corev1.LabelInstanceTypeStable] != "m5.large" {
		t.Errorf("providerID %q imageID %q labels %v", got.Status.ProviderID, got.Status.ImageID, got.Labels)
	}
	if described, err := e.provider.Get(t.Context(), got.Status.ProviderID); err != nil || described.Status.ProviderID != got.Status.ProviderID {
		t.Errorf("Get during the lag: %v, %v; want the launched instance", described, err)
	}
	if _, err := e.instances.Get(t.Context(), instance.InstanceID(got.Status.ProviderID)); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("a current read during the lag: %v, want NodeClaimNotFound", err)
	}
}

// TestOverridesAtMost60: a NodeClaim allowing every instance type gets at most 60 overrides,
// cheapest first, each with the launch template of its own architecture's AMI.
func TestOverridesAtMost60(t *testing.T) {
	e := newEnv(t)
	all, err := e.provider.cfg.InstanceTypes.List(t.Context(), e.nodeClass)
	if err != nil {
		t.Fatal(err)
	}
	overrides, images, err := e.provider.overrides(t.Context(), e.nodeClass, nodeClaim("many"), all, "spot")
	if err != nil {
		t.Fatal(err)
	}
	if len(overrides) != instance.MaxOverrides {
		t.Errorf("%d overrides, want %d", len(overrides), instance.MaxOverrides)
	}
	archOf := map[string]string{}
	for _, it := range all {
		archOf[it.Name] = it.Requirements[corev1.LabelArchStable][0]
	}
	var imageArch map[string]string
	e.state.View(func(w *state.World) {
		imageArch = map[string]string{}
		for id, img := range w.Regions["us-west-2"].Images {
			imageArch[id] = map[string]string{"x86_64": "amd64", "arm64": "arm64"}[img.Architecture]
		}
	})
	for i, o := range overrides {
		if i > 0 && o.Price < overrides[i-1].Price {
			t.Errorf("override %d (%v) cheaper than the one before", i, o)
		}
		if got := imageArch[images[o.InstanceType]]; got != archOf[o.InstanceType] {
			t.Errorf("%s (%s) gets an %s image", o.InstanceType, archOf[o.InstanceType], got)
		}
	}
	if _, err := e.provider.Create(t.Context(), nodeClaim("many", req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpIn, "spot"))); err != nil {
		t.Errorf("Create allowing every type: %v", err)
	}
}

// TestCreateAfterLaunchTemplateDeleted: a cached launch template deleted behind Joiner's back is
// created again, and the launch succeeds.
func TestCreateAfterLaunchTemplateDeleted(t *testing.T) {
	e := newEnv(t)
	claim := func(name string) *v1.NodeClaim {
		return nodeClaim(name, req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large"))
	}
	if _, err := e.provider.Create(t.Context(), claim("first")); err != nil {
		t.Fatal(err)
	}
	var names []string
	e.state.View(func(w *state.World) {
		for _, lt := range w.Regions["us-west-2"].LaunchTemplates {
			names = append(names, lt.Name)
		}
	})
	for _, n := range names {
		if _, err := e.clients.EC2.DeleteLaunchTemplate(t.Context(), &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(n)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.provider.Create(t.Context(), claim("second")); err != nil {
		t.Fatalf("Create after the launch template was deleted: %v", err)
	}
}

// TestConcurrentCreates: the provider is safe for concurrent use (run with -race), and each
// launch gets its own instance.
func TestConcurrentCreates(t *testing.T) {
	e := newEnv(t)
	const n = 6
	ids := make(chan string, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			got, err := e.provider.Create(t.Context(), nodeClaim(fmt.Sprintf("c-%d", i), req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpIn, "spot", "on-demand")))
			if err != nil {
				errs <- err
				return
			}
			ids <- got.Status.ProviderID
		}()
	}
	seen := map[string]bool{}
	for range n {
		select {
		case err := <-errs:
			t.Error(err)
		case id := <-ids:
			if seen[id] {
				t.Errorf("%s returned twice", id)
			}
			seen[id] = true
		}
	}
}
