package authz_test

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
	"github.com/joinerhq/joiner/pkg/catalog"
)

const inEastOnly = `{"Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}}]}`

func TestAuthorize(t *testing.T) {
	st := state.New(clocktesting.NewFakeClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), &catalog.Catalog{}, "111122223333")
	_ = st.Update(func(w *state.World) error {
		w.PutRole("east", map[string]string{"p": inEastOnly})
		w.PutRole("nodes", nil).ManagedPolicyARNs = []string{"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/Unknown"}
		w.PutRole("denied", map[string]string{"p": `{"Statement":[{"Effect":"Deny","Action":"*","Resource":"*"}]}`})
		w.IAM.AccessKeys["AKIDEAST"], w.IAM.AccessKeys["AKIDNODES"], w.IAM.AccessKeys["AKIDDENIED"] = "east", "nodes", "denied"
		return nil
	})
	describe := policy.Request{Action: "ec2:DescribeSubnets", Resource: "*"}
	tests := []struct {
		name, key, region string
		req               policy.Request
		wantCode          string // "" allowed
	}{
		{"aws:RequestedRegion matches", "AKIDEAST", "us-east-1", describe, ""},
		{"aws:RequestedRegion differs", "AKIDEAST", "us-west-2", describe, "UnauthorizedOperation"},
		{"a service's own context is kept", "AKIDEAST", "us-west-2",
			policy.Request{Action: "ec2:DescribeSubnets", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}}, ""},
		{"an attached AWS managed policy allows", "AKIDNODES", "eu-west-1", describe, ""},
		{"an attached AWS managed policy allows only its actions", "AKIDNODES", "eu-west-1", policy.Request{Action: "ec2:RunInstances", Resource: "*"}, "UnauthorizedOperation"},
		{"the administrator is allowed everything", authz.AdminAccessKey, "ap-southeast-1", policy.Request{Action: "iam:PutRolePolicy", Resource: "*"}, ""},
		{"an explicit deny", "AKIDDENIED", "us-east-1", describe, "UnauthorizedOperation"},
		{"an unknown key", "AKIDNOBODY", "us-east-1", describe, "AuthFailure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			_ = st.Update(func(w *state.World) error {
				var p authz.Principal
				if p, err = authz.Identify(w, wire.Call{AccessKey: tt.key, Region: tt.region}); err == nil {
					err = authz.Authorize(w, p, authz.EC2, tt.req)
				}
				return nil
			})
			code := ""
			if err != nil {
				code = wire.AsError(err).Code
			}
			if code != tt.wantCode {
				t.Errorf("got %q (%v), want %q", code, err, tt.wantCode)
			}
		})
	}
}

// TestPoliciesAreReadLive: the role Identify returns is the world's, so a policy put after the
// caller was identified applies to its next request.
func TestPoliciesAreReadLive(t *testing.T) {
	st := state.New(clocktesting.NewFakeClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), &catalog.Catalog{}, "111122223333")
	_ = st.Update(func(w *state.World) error {
		w.PutRole("ctrl", nil)
		w.IAM.AccessKeys["AKIDCTRL"] = "ctrl"
		p, err := authz.Identify(w, wire.Call{AccessKey: "AKIDCTRL", Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		req := policy.Request{Action: "ec2:DescribeSubnets", Resource: "*"}
		if authz.Authorize(w, p, authz.EC2, req) == nil {
			t.Error("allowed without a policy")
		}
		w.IAM.Roles["ctrl"].Policies["JoinerControllerPolicy"] = state.AllowAllPolicy
		if err := authz.Authorize(w, p, authz.EC2, req); err != nil {
			t.Errorf("the new policy does not apply: %v", err)
		}
		return nil
	})
}
