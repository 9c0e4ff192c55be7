package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const passRoleDenied = `{"allowed":false,"explicitDeny":false,"matchedStatements":{"items":[]},"failures":{"items":[]},
"context":{"principal":{"id":"AROAEXAMPLE:joiner","arn":"arn:aws:sts::111122223333:assumed-role/JoinerControllerRole/joiner"},
"action":"iam:PassRole","resource":"arn:aws:iam::111122223333:role/KarpenterNodeRole-demo",
"conditions":{"items":[{"key":"aws:Region","values":{"items":[{"value":"us-west-2"}]}}]}}}`

const runInstancesTagDenied = `{"allowed":false,"explicitDeny":false,"matchedStatements":{"items":[]},"failures":{"items":[]},
"context":{"principal":{"id":"AROAEXAMPLE:joiner","arn":"arn:aws:sts::111122223333:assumed-role/JoinerControllerRole/joiner"},
"action":"RunInstances","resource":"arn:aws:ec2:us-west-2:111122223333:instance/*",
"conditions":{"items":[{"key":"aws:RequestTag/team","values":{"items":[{"value":"batch"}]}},{"key":"aws:RequestTag/karpenter.sh/nodepool","values":{"items":[{"value":"default"}]}}]}}}`

const explicitDeny = `{"allowed":false,"explicitDeny":true,"matchedStatements":{"items":[{"statementId":"DenyBigInstances","effect":"DENY",
"principals":{"items":[{"value":"AROAEXAMPLE"}]},"principalGroups":{"items":[]},"actions":{"items":[{"value":"ec2:RunInstances"}]},
"resources":{"items":[{"value":"*"}]},"conditions":{"items":[]}}]},"failures":{"items":[]},
"context":{"principal":{"id":"AIDAEXAMPLE","arn":"arn:aws:iam::111122223333:user/ci"},"action":"ec2:RunInstances",
"resource":"arn:aws:ec2:us-west-2:111122223333:instance/*","conditions":{"items":[]}}}`

func TestDecodeDenial(t *testing.T) {
	tests := []struct {
		name        string
		decoded     string
		want        *Denial
		wantMessage string
		wantFix     string
	}{
		{
			name:    "PassRole on the node role (S4)",
			decoded: passRoleDenied,
			want: &Denial{Action: "iam:PassRole", Resource: "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo",
				PrincipalARN: "arn:aws:iam::111122223333:role/JoinerControllerRole", Conditions: map[string][]string{"aws:Region": {"us-west-2"}}},
			wantMessage: "arn:aws:iam::111122223333:role/JoinerControllerRole is not authorized to perform iam:PassRole on arn:aws:iam::111122223333:role/KarpenterNodeRole-demo: no statement of its policies allows it",
			wantFix:     `add this statement to a policy of arn:aws:iam::111122223333:role/JoinerControllerRole: {"Effect":"Allow","Action":"iam:PassRole","Resource":"arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"}`,
		},
		{
			name:    "RunInstances under a tag condition (S4), bare action",
			decoded: runInstancesTagDenied,
			want: &Denial{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-west-2:111122223333:instance/*",
				PrincipalARN: "arn:aws:iam::111122223333:role/JoinerControllerRole",
				Conditions:   map[string][]string{"aws:RequestTag/team": {"batch"}, "aws:RequestTag/karpenter.sh/nodepool": {"default"}}},
			wantMessage: "arn:aws:iam::111122223333:role/JoinerControllerRole is not authorized to perform ec2:RunInstances on arn:aws:ec2:us-west-2:111122223333:instance/*: no statement of its policies allows it; " +
				"the request carried tags karpenter.sh/nodepool=default, team=batch, so a statement whose Condition requires other tag values does not match",
			wantFix: `add this statement to a policy of arn:aws:iam::111122223333:role/JoinerControllerRole: {"Effect":"Allow","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:us-west-2:111122223333:instance/*"}`,
		},
		{
			name:    "explicit deny",
			decoded: explicitDeny,
			want: &Denial{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-west-2:111122223333:instance/*", PrincipalARN: "arn:aws:iam::111122223333:user/ci",
				ExplicitDeny: true, DenyingStatements: []string{"DenyBigInstances"}, Conditions: map[string][]string{}},
			wantMessage: "arn:aws:iam::111122223333:user/ci is not authorized to perform ec2:RunInstances on arn:aws:ec2:us-west-2:111122223333:instance/*: an explicit Deny matched (statement DenyBigInstances)",
			wantFix:     "change statement DenyBigInstances in the policies of arn:aws:iam::111122223333:user/ci so that it no longer matches ec2:RunInstances on arn:aws:ec2:us-west-2:111122223333:instance/*",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeDenial(tt.decoded)
			if err != nil {
				t.Fatalf("DecodeDenial: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("denial (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMessage, got.Message()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFix, got.Fix()); diff != "" {
				t.Errorf("fix (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeDenialErrors(t *testing.T) {
	for _, decoded := range []string{"not json", `{"allowed":true}`} {
		if _, err := DecodeDenial(decoded); err == nil || !strings.HasPrefix(err.Error(), "reading decoded authorization message") {
			t.Errorf("DecodeDenial(%q) error = %v", decoded, err)
		}
	}
}
