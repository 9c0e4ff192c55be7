package ratelimit

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Mode
		ok   bool
	}{
		{"off", Off, true},
		{"aws", AWS, true},
		{" AWS ", AWS, true},
		{"1", AWS, true},
		{"0.5", Mode{Scale: 0.5}, true},
		{"10", Mode{Scale: 10}, true},
		{"0", Off, false},
		{"-2", Off, false},
		{"NaN", Off, false},
		{"Inf", Off, false},
		{"on", Off, false},
		{"", Off, false},
	} {
		got, err := ParseMode(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, ok %t", tt.in, got, err, tt.want, tt.ok)
		}
		if err == nil {
			if back, _ := ParseMode(got.String()); back != got {
				t.Errorf("ParseMode(%q).String() = %q does not read back", tt.in, got.String())
			}
		}
	}
}

// TestAdmit: a request takes from its request and resource buckets together or from neither;
// buckets are per account and Region; setting another mode starts them afresh.
func TestAdmit(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	l := New(clk, AWS)
	term := func(account, region string, n int) *Refusal {
		return l.Admit(Request{Account: account, Region: region, Service: "ec2", Action: "TerminateInstances", Instances: n})
	}
	if r := term("1", "us-west-2", 1000); r != nil {
		t.Fatalf("1000 instances refused by %s", r.Bucket)
	}
	if r := term("1", "us-west-2", 1); r == nil || r.Bucket != "ec2/TerminateInstances/instances" {
		t.Errorf("refusal %+v, want the resource bucket", r)
	}
	if r := term("1", "us-east-1", 1); r != nil {
		t.Errorf("another Region refused by %s", r.Bucket)
	}
	if r := term("2", "us-west-2", 1); r != nil {
		t.Errorf("another account refused by %s", r.Bucket)
	}
	got := map[string]BucketState{}
	for _, b := range l.Buckets() {
		if b.Account == "1" && b.Region == "us-west-2" {
			got[b.Name] = b
		}
	}
	// The refused request took nothing from the request bucket it passed.
	if req := got["ec2/TerminateInstances"]; req.Tokens != 99 || req.Requests != 2 || req.Throttled != 0 || req.Taken != 1 {
		t.Errorf("request bucket %+v", req)
	}
	if res := got["ec2/TerminateInstances/instances"]; res.Tokens != 0 || res.Requests != 2 || res.Throttled != 1 || res.Taken != 1000 {
		t.Errorf("resource bucket %+v", res)
	}
}

// TestSetMode: setting the mode it has keeps the buckets; another mode starts them afresh, and
// off meters nothing.
func TestSetMode(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	l := New(clk, AWS)
	term := func(account, region string, n int) *Refusal {
		return l.Admit(Request{Account: account, Region: region, Service: "ec2", Action: "TerminateInstances", Instances: n})
	}
	if r := term("1", "us-west-2", 1000); r != nil {
		t.Fatalf("1000 instances refused by %s", r.Bucket)
	}
	l.SetMode(AWS)
	if len(l.Buckets()) != 2 {
		t.Errorf("setting the same mode dropped the buckets: %+v", l.Buckets())
	}
	l.SetMode(Mode{Scale: 2})
	if len(l.Buckets()) != 0 || term("1", "us-west-2", 2000) != nil {
		t.Errorf("a new mode did not start full buckets of twice AWS's: %+v", l.Buckets())
	}
	l.SetMode(Off)
	if r := term("1", "us-west-2", 5000); r != nil || len(l.Buckets()) != 0 {
		t.Errorf("off: refusal %+v, buckets %+v", r, l.Buckets())
	}
	if r := l.Admit(Request{Account: "1", Region: "us-west-2", Service: "iam", Action: "GetRole"}); r != nil {
		t.Errorf("IAM refused by %s", r.Bucket)
	}
}
