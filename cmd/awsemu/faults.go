package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/awsemu/state"
)

// faultsUsage is the faults subcommand's help.
const faultsUsage = `awsemu faults --endpoint URL [knobs]

Without knobs, prints the running emulator's injected faults and the counts injected so far
(GET /_awsemu/faults). With any knob, replaces every knob (one left out is off) and prints the
result (PUT /_awsemu/faults):

  awsemu faults --endpoint http://127.0.0.1:4566 --throttle-rate 0.3 --error-rate 0.02 \
    --slow-rate 0.05 --slow-latency 2s --describe-instances-lag 2s \
    --insufficient-capacity m7i.large:us-west-2a:spot,m7i.large:us-west-2b:on-demand
  awsemu faults --endpoint http://127.0.0.1:4566 --off

--rate-limits (off, aws, or a factor of AWS's limits such as 0.5 or 10) changes how the emulator
meters requests against AWS's published limits; it is AWS's behaviour rather than a fault, so the
other knobs and --off leave it alone, and given alone it leaves the faults as they are. The
buckets' tokens and throttles are at GET /_awsemu/limits.

`

// runFaults runs `awsemu faults`, writing the emulator's answer (JSON) to out.
func runFaults(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("awsemu faults", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, faultsUsage); fs.PrintDefaults() }
	var endpoint, ice string
	var off bool
	var f inspect.Faults
	fs.StringVar(&endpoint, "endpoint", "", "the emulator's URL, as its ready line prints it (required)")
	fs.Float64Var(&f.ThrottleRate, "throttle-rate", 0, "share (0..1) of API requests refused as throttled")
	fs.Float64Var(&f.ErrorRate, "error-rate", 0, "share (0..1) of API requests answered with a 500")
	fs.Float64Var(&f.SlowRate, "slow-rate", 0, "share (0..1) of API requests delayed by --slow-latency")
	fs.StringVar(&f.SlowLatency, "slow-latency", "", "delay of the slowed requests, a Go duration (\"2s\")")
	fs.StringVar(&f.Latency, "latency", "", "delay of every API response, a Go duration")
	fs.StringVar(&f.DescribeInstancesLag, "describe-instances-lag", "", "how long new instances stay invisible to DescribeInstances, a Go duration")
	fs.StringVar(&ice, "insufficient-capacity", "", "pools that answer InsufficientInstanceCapacity, comma-separated TYPE:ZONE:CAPACITY-TYPE")
	fs.BoolVar(&off, "off", false, "turn every fault off (not --rate-limits)")
	fs.StringVar(&f.RateLimits, "rate-limits", "", "meter requests against AWS's published limits: off, aws, or a factor of AWS's capacities and refill rates (0.5, 10)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("awsemu faults takes no arguments, got %q: give the knobs as flags (--help)", fs.Args())
	}
	if endpoint == "" {
		return errors.New("--endpoint is required: give the emulator's URL, as its ready line prints it")
	}
	set, limitsOnly := off, f.RateLimits != ""
	fs.Visit(func(fl *flag.Flag) {
		set = set || fl.Name != "endpoint"
		limitsOnly = limitsOnly && (fl.Name == "endpoint" || fl.Name == "rate-limits")
	})
	if off && fs.NFlag() > 2 {
		return errors.New("--off turns every fault off: give it alone with --endpoint")
	}
	var err error
	if f.InsufficientCapacity, err = pools(ice); err != nil {
		return err
	}
	url := strings.TrimSuffix(endpoint, "/") + inspect.Prefix + "faults"
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if limitsOnly {
		// A PUT replaces every fault: keep the ones set by sending them back.
		current, err := exchange(ctx, endpoint, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		rateLimits := f.RateLimits
		if err := json.Unmarshal(current, &f); err != nil {
			return fmt.Errorf("the emulator's faults are not JSON, %w", err)
		}
		f.RateLimits, f.Injected = rateLimits, nil
	}
	method, body := http.MethodGet, []byte(nil)
	if set {
		method = http.MethodPut
		if body, err = json.Marshal(f); err != nil {
			return err
		}
	}
	answer, err := exchange(ctx, endpoint, method, url, body)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, answer, "", "  "); err != nil {
		return fmt.Errorf("the emulator's answer is not JSON, %w", err)
	}
	_, err = fmt.Fprintln(out, pretty.String())
	return err
}

// exchange sends one request to the faults endpoint and returns the answer of a 200.
func exchange(ctx context.Context, endpoint, method, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("--endpoint %q, %w", endpoint, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching the emulator at %s, %w", endpoint, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the emulator's answer, %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the emulator refused the faults (%s): %s", resp.Status, strings.TrimSpace(string(answer)))
	}
	return answer, nil
}

// pools reads --insufficient-capacity.
func pools(s string) ([]state.Pool, error) {
	var out []state.Pool
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		parts := strings.Split(item, ":")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return nil, fmt.Errorf("--insufficient-capacity %q: give TYPE:ZONE:CAPACITY-TYPE, such as m7i.large:us-west-2a:spot", item)
		}
		out = append(out, state.Pool{InstanceType: parts[0], Zone: parts[1], CapacityType: parts[2]})
	}
	return out, nil
}
