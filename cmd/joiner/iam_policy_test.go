package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
)

func TestIAMPolicyCommand(t *testing.T) {
	base := []string{"iam-policy", "--cluster", "demo", "--region", "us-west-2", "--account", "111122223333"}
	tests := []struct {
		name string
		args []string
		// wantResources are substrings the output must hold.
		want    []string
		wantErr string
	}{
		{name: "json with the default node role", args: base, want: []string{`"arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"`, `"aws:RequestTag/kubernetes.io/cluster/demo": [`}},
		{name: "node roles and a queue", args: append(base, "--node-role", "NodesA", "--node-role", "NodesB", "--interruption-queue", "demo-q"),
			want: []string{"role/NodesA", "role/NodesB", "arn:aws:sqs:us-west-2:111122223333:demo-q"}},
		{name: "cloudformation", args: append(base, "-o", "cloudformation"), want: []string{"Type: AWS::IAM::ManagedPolicy", "ManagedPolicyName: JoinerControllerPolicy-demo"}},
		{name: "missing account", args: []string{"iam-policy", "--cluster", "demo", "--region", "us-west-2"}, wantErr: "--account"},
		{name: "unknown format", args: append(base, "-o", "terraform"), wantErr: "use json or cloudformation"},
		{name: "capture", args: []string{"iam-policy", "--capture"}, want: []string{`"Sid": "JoinerWorldCaptureReadOnly"`, `"ec2:DescribeVpcs"`, `"iam:GetRolePolicy"`}},
		{name: "capture takes no other flag", args: []string{"iam-policy", "--capture", "--cluster", "demo"}, wantErr: "takes no other flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runJoiner(t, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(tt.name, "json") {
				var doc iampolicy.Document
				if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Statement) == 0 {
					t.Errorf("output is not a policy document: %v", err)
				}
			}
		})
	}
}
