package boot

import (
	"flag"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
)

// env is the package's API server, started once in TestMain and read-only afterwards.
var env *testenv.Environment

// TestMain starts the API server, except in a fuzzing worker: it runs only a fuzz target, which
// needs none, and the fuzzing engine restarts workers, which would leave API servers behind.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	os.Exit(testenv.Main(m, &env))
}

func apiClient() client.Client { return env.Client }
