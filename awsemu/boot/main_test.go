package boot

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
)

// env is the package's API server, started once in TestMain and read-only afterwards.
var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

func apiClient() client.Client { return env.Client }
