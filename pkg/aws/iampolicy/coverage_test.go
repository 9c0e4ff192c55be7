package iampolicy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCoverage(t *testing.T) {
	doc := New(validOptions())
	var all []Decision
	for _, a := range doc.Actions() {
		all = append(all, Decision{Action: a, Resource: "*", Allowed: true})
	}
	if unused, denied := Coverage(doc, all, nil); len(unused) != 0 || len(denied) != 0 {
		t.Errorf("every action used: unused %v, denied %v", unused, denied)
	}

	// A run that never launched and hit one denial.
	var partial []Decision
	for _, d := range all {
		if d.Action != "ec2:CreateFleet" && d.Action != "ec2:RunInstances" {
			partial = append(partial, Decision{Action: strings.ToUpper(d.Action), Resource: d.Resource, Allowed: true})
		}
	}
	partial = append(partial, Decision{Action: "ec2:DescribeAvailabilityZones", Resource: "*"})
	unused, denied := Coverage(doc, partial, UnusedExceptions)
	if !slices.Equal(unused, []string{"ec2:CreateFleet", "ec2:RunInstances"}) {
		t.Errorf("unused = %v, want the two launch actions", unused)
	}
	if len(denied) != 1 || denied[0].Action != "ec2:DescribeAvailabilityZones" {
		t.Errorf("denied = %v, want DescribeAvailabilityZones", denied)
	}

	for a := range UnusedExceptions {
		if !slices.Contains(New(Options{ClusterName: "demo", Region: "us-west-2", AccountID: "111122223333", NodeRoles: []string{"r"}, InterruptionQueue: "q"}).Actions(), a) {
			t.Errorf("exception %s is not an action of the policy", a)
		}
	}
}

// TestExceptionsAreDocumented: the chart's README lists every action UnusedExceptions excuses.
func TestExceptionsAreDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "charts", "joiner", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for a, reason := range UnusedExceptions {
		if reason == "" {
			t.Errorf("exception %s has no reason", a)
		}
		if !strings.Contains(string(readme), "`"+a+"`") {
			t.Errorf("charts/joiner/README.md does not list the exception `%s`", a)
		}
	}
}
