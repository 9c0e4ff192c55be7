package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestExplainRefusesWhatCannotRun(t *testing.T) {
	kubeconfig := noRegionAnywhere(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "pod", "p", "-o", "yaml"}, "-o yaml is not an output format"},
		{[]string{"explain", "pod", "p", "--kubeconfig", kubeconfig}, "--aws-region"},
		{[]string{"explain", "pod"}, "accepts 1 arg"},
		{[]string{"explain", "nodeclaim", "nc", "-o", "wide"}, "-o wide is not an output format"},
	} {
		cmd := newRootCommand()
		cmd.SetArgs(tc.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

func TestExplainHasItsSubcommands(t *testing.T) {
	var out bytes.Buffer
	cmd := newRootCommand()
	cmd.SetArgs([]string{"explain", "--help"})
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"pod", "nodeclaim", "--kubeconfig"} {
		if !strings.Contains(out.String(), sub) {
			t.Errorf("explain --help does not list %s:\n%s", sub, out.String())
		}
	}
}
