package localstack

import (
	"strings"
	"testing"
)

// TestEmulatorRateLimits: the option wins over $JOINER_EMU_RATE_LIMITS, which wins over aws; a
// bad mode is refused naming where it came from, before anything starts.
func TestEmulatorRateLimits(t *testing.T) {
	for _, tt := range []struct {
		option, env, want, wantErr string
	}{
		{want: "aws"},
		{env: "off", want: "off"},
		{env: "0.5", want: "0.5"},
		{option: "10", env: "off", want: "10"},
		{option: "aws", env: "bogus", want: "aws"},
		{env: "bogus", wantErr: "$JOINER_EMU_RATE_LIMITS: rate limits \"bogus\": give off, aws, or a positive factor"},
		{option: "-1", wantErr: "EmulatorRateLimits: rate limits \"-1\""},
	} {
		t.Setenv(RateLimitsEnv, tt.env)
		got, err := emulatorRateLimits(Options{EmulatorRateLimits: tt.option})
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("option %q, env %q: error %v, want it to say %q", tt.option, tt.env, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("option %q, env %q: %q, %v; want %q", tt.option, tt.env, got, err, tt.want)
		}
	}
}
