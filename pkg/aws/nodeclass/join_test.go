package nodeclass

import (
	"testing"

	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
)

// TestJoinCondition: only an Error about the class turns NodeJoinReady False; a NodePool's error,
// warnings and advice leave it True with the top finding's reason.
func TestJoinCondition(t *testing.T) {
	classError := nodejoin.Finding{Severity: nodejoin.SeverityError, Object: "EC2NodeClass/default", Reason: "NodeRoleNotMapped", Message: "m", Fix: "f"}
	poolError := nodejoin.Finding{Severity: nodejoin.SeverityError, Object: "NodePool/arm", Reason: "AMIArchitectureMismatch", Message: "m", Fix: "f"}
	advice := nodejoin.Finding{Severity: nodejoin.SeverityAdvice, Object: "NodePool/default", Reason: "AgentTaintNotInStartupTaints", Message: "m", Fix: "f"}
	warning := nodejoin.Finding{Severity: nodejoin.SeverityWarning, Object: "EC2NodeClass/default", Reason: "NodeRoleMappingUnverified", Message: "m", Fix: "f"}
	for _, tc := range []struct {
		name     string
		findings []nodejoin.Finding
		ok       bool
		reason   string
	}{
		{"none", nil, true, ReasonNodesCanJoin},
		{"class error", []nodejoin.Finding{classError, advice}, false, "NodeRoleNotMapped"},
		{"pool error first, class error after", []nodejoin.Finding{poolError, classError}, false, "NodeRoleNotMapped"},
		{"pool error only", []nodejoin.Finding{poolError, advice}, true, "AMIArchitectureMismatch"},
		{"warning", []nodejoin.Finding{warning}, true, "NodeRoleMappingUnverified"},
		{"advice", []nodejoin.Finding{advice}, true, "AgentTaintNotInStartupTaints"},
	} {
		ok, reason, _ := JoinCondition(tc.findings)
		if ok != tc.ok || reason != tc.reason {
			t.Errorf("%s: got %v %s, want %v %s", tc.name, ok, reason, tc.ok, tc.reason)
		}
	}
}
