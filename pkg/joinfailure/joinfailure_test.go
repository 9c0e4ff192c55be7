package joinfailure_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

func TestRecordJoinFailure(t *testing.T) {
	now := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	first := &joinfailure.Failure{Reason: "NodeRoleNotAuthorized", Message: "m", NodeClaims: []string{"a"}, Fingerprint: "fp1", Time: metav1.NewTime(now)}
	tests := []struct {
		name                      string
		prev                      *joinfailure.Failure
		nodeClaim, reason, finger string
		wantNodeClaims            []string
	}{
		{name: "first failure", nodeClaim: "a", reason: "NodeRoleNotAuthorized", finger: "fp1", wantNodeClaims: []string{"a"}},
		{name: "same cause, same inputs", prev: first, nodeClaim: "b", reason: "NodeRoleNotAuthorized", finger: "fp1", wantNodeClaims: []string{"a", "b"}},
		{name: "same NodeClaim again is not counted twice", prev: first, nodeClaim: "a", reason: "NodeRoleNotAuthorized", finger: "fp1", wantNodeClaims: []string{"a"}},
		{name: "inputs changed starts over", prev: first, nodeClaim: "b", reason: "NodeRoleNotAuthorized", finger: "fp2", wantNodeClaims: []string{"b"}},
		{name: "another cause starts over", prev: first, nodeClaim: "b", reason: "InvalidKubeletArguments", finger: "fp1", wantNodeClaims: []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, f := joinfailure.Record(tt.prev, tt.nodeClaim, tt.reason, "msg", tt.finger, now)
			if diff := cmp.Diff(tt.wantNodeClaims, f.NodeClaims); diff != "" {
				t.Errorf("NodeClaims (-want +got):\n%s", diff)
			}
			np := &v1.NodePool{}
			np.Annotations = map[string]string{v1.JoinFailureAnnotationKey: raw}
			read := joinfailure.Read(np)
			if diff := cmp.Diff(f, read); diff != "" {
				t.Errorf("ReadJoinFailure of Record's annotation (-want +got):\n%s", diff)
			}
		})
	}
	for _, raw := range []string{"", "not json", `{"nodeClaims":["a"]}`} {
		np := &v1.NodePool{}
		np.Annotations = map[string]string{v1.JoinFailureAnnotationKey: raw}
		if f := joinfailure.Read(np); f != nil {
			t.Errorf("ReadJoinFailure(%q) = %+v, want nil", raw, f)
		}
	}
}
