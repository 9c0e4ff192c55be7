package pod_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/joinerhq/joiner/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
