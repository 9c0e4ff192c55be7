package chartrbac_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joinerhq/joiner/config/crd"
	"github.com/joinerhq/joiner/pkg/chartrbac"
)

// TestAuditShowsWhatTheChartGrantsAndUses runs the operator as the chart's ServiceAccount
// (runOperator: a missing permission fails there) against a second API server that writes an
// audit log with AuditPolicy, and reads the log with Unused: no request was refused, and the grants the scenario needs (NodeClaim
// create, NodePool status patch, events, the Lease) are among the used ones. The end-to-end
// suite reads its own log the same way to find grants nothing used.
func TestAuditShowsWhatTheChartGrantsAndUses(t *testing.T) {
	dir := t.TempDir()
	policy, log := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(chartrbac.AuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	audited := &envtest.Environment{BinaryAssetsDirectory: env.AssetsDir, Scheme: env.Scheme, CRDs: crds, ErrorIfCRDPathMissing: true}
	audited.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).Set("audit-log-path", log).Set("audit-log-format", "json")
	cfg, err := audited.Start()
	if err != nil {
		t.Fatalf("starting an audited API server: %v", err)
	}
	t.Cleanup(func() { _ = audited.Stop() })
	admin, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	_, kubeconfig := asChart(t, admin, cfg)
	runOperator(t, admin, kubeconfig)

	grants, err := chartrbac.Grants(renderChart(t))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unused, forbidden, err := chartrbac.Unused(f, chartrbac.ServiceAccountUser("kube-system", "joiner"), grants)
	if err != nil {
		t.Fatal(err)
	}
	if len(forbidden) > 0 {
		t.Errorf("the API server refused the chart's ServiceAccount: %v", forbidden)
	}
	for _, need := range []string{
		"ClusterRole: create karpenter.sh/nodeclaims",
		"ClusterRole: patch karpenter.sh/nodepools/status",
		"ClusterRole: list karpenter.sh/nodepools",
		"ClusterRole: watch core/pods",
		"ClusterRole: create events.k8s.io/events",
		"Role: create coordination.k8s.io/leases in kube-system",
		"Role: update coordination.k8s.io/leases joiner-leader-election in kube-system",
	} {
		for _, g := range unused {
			if g.String() == need {
				t.Errorf("grant %q was used by the scenario, but Unused reports it unused", need)
			}
		}
		if !slices.ContainsFunc(grants, func(g chartrbac.Grant) bool { return g.String() == need }) {
			t.Errorf("the chart does not grant %q", need)
		}
	}
	var names []string
	for _, g := range unused {
		names = append(names, g.String())
	}
	t.Logf("grants this short scenario leaves unused (the end-to-end run must use them or list them as exceptions):\n%s", strings.Join(names, "\n"))
}
