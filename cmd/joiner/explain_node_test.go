package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestExplainNodeRefusesWithoutInstanceTypes: the command is wired under explain and says what
// it needs: with no region anywhere and a cluster it cannot read the region from, --aws-region.
// (disruption.Explain itself is tested against a real API server in its package.)
func TestExplainNodeRefusesWithoutInstanceTypes(t *testing.T) {
	kubeconfig := noRegionAnywhere(t)
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"explain", "node", "n1", "--kubeconfig", kubeconfig})
	err := root.ExecuteContext(t.Context())
	if err == nil || !strings.Contains(err.Error(), "pass --aws-region") {
		t.Fatalf("error = %v, want one saying to pass --aws-region or --instance-types", err)
	}
	root.SetArgs([]string{"explain", "node", "n1", "--instance-types=x", "-o", "yaml"})
	if err := root.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), "-o yaml is not an output format") {
		t.Fatalf("error = %v, want the output format refused", err)
	}
	root.SetArgs([]string{"explain", "node", "n1", "--instance-types=x", "-o", "text", "--node-cost=-1"})
	if err := root.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), "--node-cost -1 is negative") {
		t.Fatalf("error = %v, want the negative node cost refused", err)
	}
}
