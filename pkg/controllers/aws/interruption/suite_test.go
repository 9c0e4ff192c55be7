package interruption_test

import (
	"os"
	"testing"

	"github.com/joinerhq/joiner/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}
