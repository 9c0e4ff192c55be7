package localstack

import (
	"fmt"
	"os"

	"github.com/joinerhq/joiner/awsemu/inspect"
)

// RateLimitsEnv names the environment variable that sets the emulator's rate limits when
// Options.EmulatorRateLimits is empty: off, aws (the default) or a factor of AWS's limits, so that
// a measurement can be taken without them (JOINER_EMU_RATE_LIMITS=off go test ./test/e2e/ ...).
const RateLimitsEnv = "JOINER_EMU_RATE_LIMITS"

// emulatorRateLimits is the mode the emulator is started with: Options.EmulatorRateLimits, else
// $JOINER_EMU_RATE_LIMITS, else aws, checked before anything starts.
func emulatorRateLimits(o Options) (string, error) {
	mode, from := o.EmulatorRateLimits, "EmulatorRateLimits"
	if mode == "" {
		mode, from = os.Getenv(RateLimitsEnv), "$"+RateLimitsEnv
	}
	if mode == "" {
		return "aws", nil
	}
	if err := inspect.CheckRateLimits(mode); err != nil {
		return "", fmt.Errorf("%s: %w", from, err)
	}
	return mode, nil
}
