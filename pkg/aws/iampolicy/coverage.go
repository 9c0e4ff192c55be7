package iampolicy

import (
	"slices"
	"strings"
)

// Decision is one authorization AWS (or the emulator) decided for the controller's principal
// during a run: the action, the resource and whether the policy allowed it.
type Decision struct {
	Action   string
	Resource string
	Allowed  bool
}

// UnusedExceptions are the actions of the policy that an end-to-end run may leave unused, each
// with the reason it is granted all the same. Coverage does not report them.
var UnusedExceptions = map[string]string{
	"ec2:GetConsoleOutput":              "called only to diagnose an instance whose Node has not joined in time: a run where every node joins never calls it",
	"sts:DecodeAuthorizationMessage":    "called only to explain a denied launch: a run without denials never calls it",
	"ec2:DescribeLaunchTemplates":       "called only by launch-template garbage collection, every housekeeping.LaunchTemplateGCInterval (an hour), longer than a test run",
	"ec2:DeleteLaunchTemplate":          "launch templates are garbage-collected after launchtemplate.UnusedTTL without use, longer than a test run",
	"iam:RemoveRoleFromInstanceProfile": "called only when an EC2NodeClass changes its role or is deleted",
	"iam:DeleteInstanceProfile":         "called only when an EC2NodeClass with spec.role is deleted",
}

// Coverage compares a run's decisions with the policy: unused are the policy's actions no
// allowed decision used (exceptions aside), sorted; denied are the decisions the policy refused,
// in order. A run that proves the policy exact has neither. Actions compare case-insensitively,
// as IAM does.
func Coverage(doc Document, decisions []Decision, exceptions map[string]string) (unused []string, denied []Decision) {
	used := map[string]bool{}
	for _, d := range decisions {
		if d.Allowed {
			used[strings.ToLower(d.Action)] = true
		} else {
			denied = append(denied, d)
		}
	}
	for _, a := range doc.Actions() {
		if _, ok := exceptions[a]; ok || used[strings.ToLower(a)] {
			continue
		}
		unused = append(unused, a)
	}
	slices.Sort(unused)
	return unused, denied
}
