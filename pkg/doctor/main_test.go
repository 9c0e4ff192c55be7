package doctor

import (
	"os"
	"testing"

	"github.com/joinerhq/joiner/internal/testenv"
)

// env is the control plane of the live test.
var env *testenv.Environment

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
