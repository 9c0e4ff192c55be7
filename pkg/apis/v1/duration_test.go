package v1

import (
	"encoding/json"
	"testing"
	"time"
)

func TestNillableDurationJSON(t *testing.T) {
	tests := []struct {
		in       string
		wantNil  bool
		wantDur  time.Duration
		wantOut  string
		wantFail bool
	}{
		{in: `"720h"`, wantDur: 720 * time.Hour, wantOut: `"720h"`},
		{in: `"1h30m"`, wantDur: 90 * time.Minute, wantOut: `"1h30m"`},
		{in: `"0s"`, wantDur: 0, wantOut: `"0s"`},
		{in: `"Never"`, wantNil: true, wantOut: `"Never"`},
		{in: `"soon"`, wantFail: true},
		{in: `42`, wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d NillableDuration
			err := json.Unmarshal([]byte(tt.in), &d)
			if tt.wantFail {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %v, want an error", tt.in, d)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s) error = %v", tt.in, err)
			}
			if (d.Duration == nil) != tt.wantNil || (d.Duration != nil && *d.Duration != tt.wantDur) {
				t.Errorf("Duration = %v, want nil=%v %v", d.Duration, tt.wantNil, tt.wantDur)
			}
			out, err := json.Marshal(d)
			if err != nil || string(out) != tt.wantOut {
				t.Errorf("Marshal() = %s, %v; want %s", out, err, tt.wantOut)
			}
		})
	}
}

// TestNillableDurationOmitZero checks that an unset duration is left out of an encoding, so the
// API server's default applies instead of "Never".
func TestNillableDurationOmitZero(t *testing.T) {
	out, err := json.Marshal(NodeClaimTemplateSpec{})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(out, &fields); err != nil {
		t.Fatal(err)
	}
	if v, ok := fields["expireAfter"]; ok {
		t.Errorf("unset expireAfter encoded as %v, want it left out", v)
	}
	built := NillableDuration{Duration: new(time.Duration)}
	if got := built.String(); got != "0s" {
		t.Errorf("String() of a duration built in code = %q, want 0s", got)
	}
}
