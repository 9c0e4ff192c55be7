package charts

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/pkg/manifest"
)

var env *testenv.Environment

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// helm returns the pinned helm binary: $HELM, else bin/helm of the repository.
func helm(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	h := filepath.Join(root, "bin", "helm")
	if _, err := os.Stat(h); err != nil {
		t.Fatalf("no helm at %s: build it with `make helm` (pinned in hack/tools/go.mod) or set $HELM", h)
	}
	return h
}

// render runs helm template on the joiner chart in kube-system with the CRDs and the values.
func render(t *testing.T, set ...string) []*unstructured.Unstructured {
	t.Helper()
	return renderWithValues(t, "", set...)
}

// renderWithValues is render with a values file first, when valuesFile is not "".
func renderWithValues(t *testing.T, valuesFile string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", "joiner", "joiner", "--namespace", "kube-system", "--include-crds", "--kube-version", "1.33.0"}
	if valuesFile != "" {
		args = append(args, "--values", valuesFile)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(t.Context(), helm(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	docs, err := manifest.DecodeBytes(out)
	if err != nil {
		t.Fatalf("decoding the rendered chart: %v", err)
	}
	return docs
}

func kinds(docs []*unstructured.Unstructured) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.GetKind()+"/"+d.GetName())
	}
	slices.Sort(out)
	return out
}

// TestChartAppliesToTheAPIServer renders the chart and applies every object to the API server
// with server-side apply in dry-run mode: each passes the server's schema (unknown fields are
// errors), defaulting and validation, CRDs included.
func TestChartAppliesToTheAPIServer(t *testing.T) {
	docs := render(t, "settings.clusterName=demo", "settings.region=us-west-2", "settings.interruptionQueue=demo",
		"serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::111122223333:role/JoinerControllerRole")
	want := []string{
		"ClusterRole/joiner", "ClusterRoleBinding/joiner",
		"CustomResourceDefinition/ec2nodeclasses.karpenter.k8s.aws", "CustomResourceDefinition/nodeclaims.karpenter.sh", "CustomResourceDefinition/nodepools.karpenter.sh",
		"Deployment/joiner", "PodDisruptionBudget/joiner", "Role/joiner", "Role/joiner-aws-auth", "RoleBinding/joiner", "RoleBinding/joiner-aws-auth", "Service/joiner", "ServiceAccount/joiner",
	}
	if got := kinds(docs); !slices.Equal(got, want) {
		t.Fatalf("rendered %v, want %v", got, want)
	}
	for _, d := range docs {
		t.Run(d.GetKind()+"/"+d.GetName(), func(t *testing.T) {
			err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(d),
				client.DryRunAll, client.FieldOwner("chart-test"), client.ForceOwnership)
			if err != nil {
				t.Fatalf("server-side dry-run apply: %v", err)
			}
		})
	}
}

// TestChartCRDsAreTheGenerated fails when charts/joiner/crds drifts from config/crd/bases (make
// generate copies them).
func TestChartCRDsAreTheGenerated(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	generated, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(generated) != 3 {
		t.Fatalf("config/crd/bases holds %v (%v), want the three CRDs", generated, err)
	}
	for _, g := range generated {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, "charts", "joiner", "crds", filepath.Base(g)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("charts/joiner/crds/%s differs from config/crd/bases (err %v): run make generate", filepath.Base(g), err)
		}
	}
}

// TestRBACHasNoWildcards checks the chart's ClusterRole and Role: every rule names its API
// groups, resources and verbs; the Lease rule is bound to the Lease's name.
func TestRBACHasNoWildcards(t *testing.T) {
	for _, d := range render(t, "settings.clusterName=demo", "settings.region=us-west-2") {
		if d.GetKind() != "ClusterRole" && d.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole // Role has the same rules
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, &role); err != nil {
			t.Fatal(err)
		}
		if len(role.Rules) == 0 {
			t.Errorf("%s has no rules", d.GetKind())
		}
		for _, r := range role.Rules {
			for _, s := range slices.Concat(r.APIGroups, r.Resources, r.Verbs, r.ResourceNames) {
				if strings.Contains(s, "*") {
					t.Errorf("%s rule %v has a wildcard %q", d.GetKind(), r, s)
				}
			}
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("%s rule %v grants non-resource URLs", d.GetKind(), r)
			}
			if slices.Contains(r.Resources, "leases") && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "create" }) &&
				!slices.Equal(r.ResourceNames, []string{"joiner-leader-election"}) {
				t.Errorf("Lease rule %v is not limited to the Lease joiner-leader-election", r)
			}
		}
	}
}

func TestChartValues(t *testing.T) {
	find := func(docs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
		for _, d := range docs {
			if d.GetKind() == kind {
				return d
			}
		}
		return nil
	}
	tests := []struct {
		name  string
		set   []string
		check func(docs []*unstructured.Unstructured) string
	}{
		{
			name: "image digest wins over the tag",
			set:  []string{"controller.image.digest=sha256:0123"},
			check: func(docs []*unstructured.Unstructured) string {
				c, _, _ := unstructured.NestedSlice(find(docs, "Deployment").Object, "spec", "template", "spec", "containers")
				if img := c[0].(map[string]any)["image"]; img != "ghcr.io/joinerhq/joiner@sha256:0123" {
					return fmt.Sprintf("image %v", img)
				}
				return ""
			},
		},
		{
			name: "serviceMonitor",
			set:  []string{"serviceMonitor.enabled=true", "serviceMonitor.additionalLabels.release=prom"},
			check: func(docs []*unstructured.Unstructured) string {
				sm := find(docs, "ServiceMonitor")
				if sm == nil || sm.GetLabels()["release"] != "prom" {
					return "no ServiceMonitor labelled release=prom"
				}
				return ""
			},
		},
		{
			name: "replicas, logLevel and the existing service account",
			set:  []string{"replicas=3", "logLevel=debug", "serviceAccount.create=false", "serviceAccount.name=mine"},
			check: func(docs []*unstructured.Unstructured) string {
				dep := find(docs, "Deployment")
				n, _, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "replicas")
				sa, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "spec", "serviceAccountName")
				if fmt.Sprint(n) != "3" || sa != "mine" || find(docs, "ServiceAccount") != nil || !strings.Contains(fmt.Sprint(dep.Object), "debug") {
					return fmt.Sprintf("replicas %v, serviceAccountName %q", n, sa)
				}
				return ""
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if msg := tt.check(render(t, append([]string{"settings.clusterName=demo", "settings.region=us-west-2"}, tt.set...)...)); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestChartRequiresTheClusterName: without settings.clusterName helm fails, naming the value.
func TestChartRequiresTheClusterName(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out, err := exec.CommandContext(ctx, helm(t), "template", "joiner", "joiner", "--kube-version", "1.33.0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "settings.clusterName is required") {
		t.Errorf("helm template without settings.clusterName: err %v, output %s", err, out)
	}
	// Without IRSA nothing injects AWS_REGION (EKS Pod Identity does not): the region is required.
	out, err = exec.CommandContext(ctx, helm(t), "template", "joiner", "joiner", "--kube-version", "1.33.0", "--set", "settings.clusterName=demo").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "settings.region is required") {
		t.Errorf("helm template without settings.region or IRSA: err %v, output %s", err, out)
	}
}
