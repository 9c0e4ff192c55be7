// Package dashboards_test checks Karpenter's Grafana dashboards against a running Joiner
// controller. It is a package of its own so that its operator is the only one in the process:
// controller-runtime refuses two controllers of one name in a process.
package dashboards_test

import (
	"net"
	"os"
	"testing"

	"github.com/joinerhq/joiner/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}
