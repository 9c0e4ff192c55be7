package unavailableofferings_test

import (
	"os"
	"testing"

	"github.com/joinerhq/joiner/internal/testenv"
)

// The package's one control plane; each test uses a namespace of its own.
var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}
