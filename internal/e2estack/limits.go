package e2estack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// Limits reads the emulator's rate limits: the mode and every bucket charged, with its tokens,
// requests and throttles (GET /_awsemu/limits).
func Limits(ctx context.Context, stack *localstack.Stack) (inspect.Limits, error) {
	var out inspect.Limits
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.EmulatorURL+inspect.Prefix+"limits", nil)
	if err != nil {
		return out, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out, fmt.Errorf("reading the emulator's rate limits, %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("reading the emulator's rate limits: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("decoding the emulator's rate limits, %w", err)
	}
	return out, nil
}

// logLimits logs what the emulator's rate limits refused during the test and every bucket's
// throttled and charged requests, so that a run's figures say how hard the controller pressed on
// AWS's limits and how many calls of each action it made (CreateFleet calls per NodeClaim).
func logLimits(t *testing.T, ctx context.Context, stack *localstack.Stack) {
	t.Helper()
	l, err := Limits(ctx, stack)
	if err != nil {
		t.Logf("emulator rate limits: %v", err)
		return
	}
	var requests uint64
	var charged []string
	for _, b := range l.Buckets {
		requests += b.Requests
		if b.Requests > 0 {
			charged = append(charged, fmt.Sprintf("%s %d/%d", b.Name, b.Throttled, b.Requests))
		}
	}
	t.Logf("emulator rate limits %s: %d of %d metered requests throttled (throttled/requests by bucket: %s)", l.RateLimits, l.Throttled, requests, strings.Join(charged, ", "))
}
