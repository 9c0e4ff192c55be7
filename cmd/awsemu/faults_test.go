package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/awsemu/inspect"
)

// TestFaults: the faults subcommand sets every knob on a running emulator, reads them back with
// the injected counts, turns them off, and refuses bad input naming the flag or the field.
func TestFaults(t *testing.T) {
	url, stop := serve(t)
	defer stop()
	faults := func(args ...string) (inspect.Faults, error) {
		var out bytes.Buffer
		err := runFaults(t.Context(), append([]string{"--endpoint", url}, args...), &out)
		var f inspect.Faults
		if err == nil {
			if jerr := json.Unmarshal(out.Bytes(), &f); jerr != nil {
				t.Fatalf("output %q is not the faults: %v", out.String(), jerr)
			}
		}
		return f, err
	}
	set, err := faults("--throttle-rate", "0.3", "--error-rate", "0.02", "--slow-rate", "0.05", "--slow-latency", "2s",
		"--describe-instances-lag", "2s", "--insufficient-capacity", "m7i.large:us-west-2a:spot, c7i.large:us-west-2b:on-demand")
	if err != nil {
		t.Fatal(err)
	}
	got, err := faults()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []inspect.Faults{set, got} {
		if !allSet(f) {
			t.Errorf("faults %+v, want the knobs set and the injected counts", f)
		}
	}
	if off, err := faults("--off"); err != nil || off.ThrottleRate != 0 || len(off.InsufficientCapacity) != 0 || off.SlowLatency != "" {
		t.Errorf("--off gave %+v (%v), want every fault off", off, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{args: []string{"--throttle-rate", "2"}, want: "throttleRate 2 is not a share: give a number from 0 to 1"},
		{args: []string{"--slow-rate", "0.1"}, want: "slowLatency, which is not set"},
		{args: []string{"--insufficient-capacity", "m7i.large:us-west-2a"}, want: `--insufficient-capacity "m7i.large:us-west-2a": give TYPE:ZONE:CAPACITY-TYPE`},
		{args: []string{"--off", "--throttle-rate", "0.1"}, want: "give it alone"},
		{args: []string{"extra"}, want: "takes no arguments"},
		{args: []string{"--rate-limits", "fast"}, want: `rateLimits: rate limits "fast": give off, aws, or a positive factor`},
		{args: []string{"--rate-limits", "-1"}, want: "give off, aws, or a positive factor"},
	} {
		if _, err := faults(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("faults %v: error %v, want it to say %q", tt.args, err, tt.want)
		}
	}
	var out bytes.Buffer
	if err := runFaults(t.Context(), nil, &out); err == nil || !strings.Contains(err.Error(), "--endpoint is required") {
		t.Errorf("no endpoint: error %v, want it to ask for --endpoint", err)
	}
}

// TestFaultsRateLimits: --rate-limits alone changes the emulator's metering and keeps the
// faults; --off keeps the rate limits.
func TestFaultsRateLimits(t *testing.T) {
	url, stop := serve(t)
	defer stop()
	faults := func(args ...string) inspect.Faults {
		t.Helper()
		var out bytes.Buffer
		if err := runFaults(t.Context(), append([]string{"--endpoint", url}, args...), &out); err != nil {
			t.Fatalf("faults %v: %v", args, err)
		}
		var f inspect.Faults
		if err := json.Unmarshal(out.Bytes(), &f); err != nil {
			t.Fatalf("output %q is not the faults: %v", out.String(), err)
		}
		return f
	}
	if got := faults(); got.RateLimits != "aws" {
		t.Errorf("rateLimits %q, want the command's default aws", got.RateLimits)
	}
	faults("--throttle-rate", "0.3", "--error-rate", "0.02", "--slow-rate", "0.05", "--slow-latency", "2s",
		"--describe-instances-lag", "2s", "--insufficient-capacity", "m7i.large:us-west-2a:spot, c7i.large:us-west-2b:on-demand")
	if got := faults("--rate-limits", "0.5"); got.RateLimits != "0.5" || !allSet(got) {
		t.Errorf("--rate-limits 0.5 gave %+v, want rateLimits 0.5 and the faults kept", got)
	}
	if got := faults("--off"); got.ThrottleRate != 0 || len(got.InsufficientCapacity) != 0 || got.RateLimits != "0.5" {
		t.Errorf("--off gave %+v, want every fault off and the rate limits kept", got)
	}
	if got := faults("--throttle-rate", "0.1", "--rate-limits", "off"); got.ThrottleRate != 0.1 || got.RateLimits != "off" {
		t.Errorf("--throttle-rate 0.1 --rate-limits off gave %+v", got)
	}
}

// allSet reports whether f holds the knobs TestFaults sets, and the injected counts.
func allSet(f inspect.Faults) bool {
	return f.ThrottleRate == 0.3 && f.ErrorRate == 0.02 && f.SlowRate == 0.05 && f.SlowLatency == "2s" && f.DescribeInstancesLag == "2s" &&
		len(f.InsufficientCapacity) == 2 && f.InsufficientCapacity[0].InstanceType == "c7i.large" && f.Injected != nil
}
