package apis_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/internal/testenv"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/manifest"
)

// env is the package's one control plane, started in TestMain.
var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

// typedFor returns an empty typed object for the Joiner kinds, so that decoding a manifest into
// it proves the Go types carry every field an operator may write.
func typedFor(obj *unstructured.Unstructured) kruntime.Object {
	switch obj.GroupVersionKind() {
	case v1.SchemeGroupVersion.WithKind("NodePool"):
		return &v1.NodePool{}
	case v1.SchemeGroupVersion.WithKind("NodeClaim"):
		return &v1.NodeClaim{}
	case awsv1.SchemeGroupVersion.WithKind("EC2NodeClass"):
		return &awsv1.EC2NodeClass{}
	}
	return nil
}

func readManifests(t *testing.T, pattern string) map[string][]*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests match %s (err %v)", pattern, err)
	}
	out := map[string][]*unstructured.Unstructured{}
	for _, f := range files {
		if strings.HasSuffix(f, ".world.yaml") { // the emulator's world beside a scenario, not a manifest
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objects, err := manifest.DecodeBytes(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = objects
	}
	return out
}

// TestValidManifestsApply applies the field scenarios, the samples and a set of manifests in the
// style of Karpenter's published examples. Each must be admitted, and each Joiner object must
// decode strictly into the Go types (no field the API accepts is unknown to the code).
func TestValidManifestsApply(t *testing.T) {
	sets := map[string][]*unstructured.Unstructured{}
	for _, pattern := range []string{"testdata/valid/*.yaml", "../../test/scenarios/*.yaml", "../../config/samples/*.yaml"} {
		for f, objects := range readManifests(t, pattern) {
			sets[f] = objects
		}
	}
	applied := map[string]int{}
	for file, objects := range sets {
		t.Run(filepath.Base(file), func(t *testing.T) {
			// Cleanups run after t.Context() is cancelled; they delete with a live context.
			ctx := context.WithoutCancel(t.Context())
			for _, obj := range objects {
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Errorf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
					continue
				}
				t.Cleanup(func() {
					if err := env.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
						t.Errorf("deleting %s %s: %v", obj.GetKind(), obj.GetName(), err)
					}
				})
				applied[obj.GetKind()]++
				typed := typedFor(obj)
				if typed == nil {
					continue
				}
				if err := kruntime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, typed, true); err != nil {
					t.Errorf("%s %s does not decode strictly into %T: %v", obj.GetKind(), obj.GetName(), typed, err)
				}
			}
		})
	}
	for _, kind := range []string{"NodePool", "NodeClaim", "EC2NodeClass"} {
		if applied[kind] < 3 {
			t.Errorf("only %d valid %s manifests applied, want at least 3", applied[kind], kind)
		}
	}
}

// TestDefaults checks the defaults an operator relies on when a field is left out.
func TestDefaults(t *testing.T) {
	ctx := context.WithoutCancel(t.Context())
	nodePool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}},
			NodeClassRef: &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "default"},
		}}},
	}
	nodeClass := &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: awsv1.EC2NodeClassSpec{
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			Role:                       "KarpenterNodeRole-demo",
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		},
	}
	for _, obj := range []client.Object{nodePool, nodeClass} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T: %v", obj, err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}

	got := &v1.NodePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(nodePool), got); err != nil {
		t.Fatal(err)
	}
	if s := got.Spec.Template.Spec.ExpireAfter.String(); s != "720h" {
		t.Errorf("expireAfter = %q, want 720h", s)
	}
	if d := got.Spec.Template.Spec.ExpireAfter.Duration; d == nil || d.Hours() != 720 {
		t.Errorf("expireAfter duration = %v, want 720h", d)
	}
	wantDisruption := v1.Disruption{
		ConsolidateAfter:    v1.MustParseNillableDuration("0s"),
		ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
		Budgets:             []v1.Budget{{Nodes: "10%"}},
	}
	if diff := cmp.Diff(wantDisruption, got.Spec.Disruption); diff != "" {
		t.Errorf("disruption defaults (-want +got):\n%s", diff)
	}

	gotClass := &awsv1.EC2NodeClass{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(nodeClass), gotClass); err != nil {
		t.Fatal(err)
	}
	wantMetadata := &awsv1.MetadataOptions{
		HTTPEndpoint:            ptr.To("enabled"),
		HTTPProtocolIPv6:        ptr.To("disabled"),
		HTTPPutResponseHopLimit: ptr.To[int64](1),
		HTTPTokens:              ptr.To("required"),
	}
	if diff := cmp.Diff(wantMetadata, gotClass.Spec.MetadataOptions); diff != "" {
		t.Errorf("metadataOptions defaults (-want +got):\n%s", diff)
	}
}

// admissionCase is one object (or one update) that the API server must refuse, with the field
// the refusal must name and a distinctive part of its message.
type admissionCase struct {
	Name        string         `json:"name"`
	WantField   string         `json:"wantField"`
	WantMessage string         `json:"wantMessage"`
	Object      map[string]any `json:"object,omitempty"`
	Before      map[string]any `json:"before,omitempty"`
	After       map[string]any `json:"after,omitempty"`
}

func readCases(t *testing.T, pattern string) []admissionCase {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files match %s (err %v)", pattern, err)
	}
	var all []admissionCase
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []admissionCase
		if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i := range cases {
			cases[i].Name = strings.TrimSuffix(filepath.Base(f), ".yaml") + ": " + cases[i].Name
		}
		all = append(all, cases...)
	}
	return all
}

// checkRefusal fails unless err is an Invalid error with a cause on wantField whose message holds
// wantMessage.
func checkRefusal(t *testing.T, err error, tc admissionCase) {
	t.Helper()
	if err == nil {
		t.Fatalf("admitted, want refusal naming %s", tc.WantField)
	}
	var status *apierrors.StatusError
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("error = %v, want an Invalid status error", err)
	}
	var causes []string
	if details := status.ErrStatus.Details; details != nil {
		for _, c := range details.Causes {
			if c.Field == tc.WantField && strings.Contains(c.Message, tc.WantMessage) {
				return
			}
			causes = append(causes, fmt.Sprintf("%s: %s", c.Field, c.Message))
		}
	}
	t.Errorf("no cause on field %q containing %q; causes:\n  %s", tc.WantField, tc.WantMessage, strings.Join(causes, "\n  "))
}

// TestInvalidObjectsRejected applies objects with one thing wrong each; every one must be refused
// with a message that names the offending field.
func TestInvalidObjectsRejected(t *testing.T) {
	cases := slices.DeleteFunc(readCases(t, "testdata/invalid/*.yaml"), func(tc admissionCase) bool { return tc.Object == nil })
	if len(cases) < 40 {
		t.Errorf("only %d invalid-object cases, want at least 40", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: tc.Object}
			err := env.Client.Create(t.Context(), obj)
			if err == nil {
				_ = env.Client.Delete(t.Context(), obj)
			}
			checkRefusal(t, err, tc)
		})
	}
}

// TestInvalidUpdatesRejected changes valid objects in ways that are refused (immutable fields).
func TestInvalidUpdatesRejected(t *testing.T) {
	cases := slices.DeleteFunc(readCases(t, "testdata/invalid/*.yaml"), func(tc admissionCase) bool { return tc.Before == nil })
	if len(cases) < 3 {
		t.Errorf("only %d invalid-update cases, want at least 3", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			ctx := context.WithoutCancel(t.Context())
			before := &unstructured.Unstructured{Object: tc.Before}
			if err := env.Client.Create(ctx, before); err != nil {
				t.Fatalf("creating the valid starting object: %v", err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, before) })
			after := &unstructured.Unstructured{Object: tc.After}
			after.SetResourceVersion(before.GetResourceVersion())
			checkRefusal(t, env.Client.Update(ctx, after), tc)
		})
	}
}

// TestKubectl checks what an operator sees with kubectl: the printer columns of the three kinds,
// and the field documentation that kubectl explain prints.
func TestKubectl(t *testing.T) {
	ctx := context.WithoutCancel(t.Context())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	for _, objects := range readManifests(t, "../../config/samples/*.yaml") {
		for _, obj := range objects {
			if typedFor(obj) == nil {
				continue
			}
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("creating %s: %v", obj.GetKind(), err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
		}
	}
	claims := readManifests(t, "testdata/valid/nodeclaims.yaml")
	for _, objects := range claims {
		obj := objects[0]
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating NodeClaim: %v", err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}

	kubectl := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(env.AssetsDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	tests := []struct {
		args        []string
		wantHeaders []string
	}{
		{args: []string{"get", "nodepools"}, wantHeaders: []string{"NAME", "NODECLASS", "NODES", "READY", "AGE"}},
		{args: []string{"get", "nodeclaims"}, wantHeaders: []string{"NAME", "TYPE", "CAPACITY", "ZONE", "NODE", "READY", "AGE"}},
		{args: []string{"get", "ec2nodeclasses"}, wantHeaders: []string{"NAME", "READY", "AGE", "ROLE"}},
		{args: []string{"get", "nodepools", "-o", "wide"}, wantHeaders: []string{"WEIGHT", "CPU", "MEMORY"}},
		{args: []string{"get", "nodeclaims", "-o", "wide"}, wantHeaders: []string{"ID", "NODEPOOL", "NODECLASS", "DRIFTED"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := kubectl(tt.args...)
			header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
			for _, want := range tt.wantHeaders {
				if !slices.Contains(header, want) {
					t.Errorf("header %v lacks column %s; output:\n%s", header, want, out)
				}
			}
		})
	}

	t.Run("all three kinds at once", func(t *testing.T) {
		out := kubectl("get", "nodepools,nodeclaims,ec2nodeclasses")
		for _, want := range []string{"nodepool.karpenter.sh/default", "ec2nodeclass.karpenter.k8s.aws/default", "KarpenterNodeRole-demo", "nodeclaim.karpenter.sh/"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("explain userData", func(t *testing.T) {
		out := kubectl("explain", "ec2nodeclass.spec.userData")
		for _, want := range []string{"FIELD: userData", "AL2023", "karpenter.sh/unregistered", "Bottlerocket"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain lacks %q:\n%s", want, out)
			}
		}
	})
}
