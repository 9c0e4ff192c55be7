// Package e2e runs Joiner end to end on the local stack: a real etcd, kube-apiserver,
// kube-scheduler and kube-controller-manager, the AWS emulator booting instances and registering
// their Nodes, and `joiner controller` as a separate process, as an operator runs it. The tests
// drive the cluster only through the API server and read the cloud only through the emulator's
// inspection endpoint. The harness is internal/e2estack, shared with test/chaos.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/internal/e2estack"
)

// bins are the programs built once for the package; programs names them as the tests read
// them.
var (
	bins     *e2estack.Programs
	programs struct {
		assets, joiner, controller, awsemu string
	}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	log.SetLogger(logr.Discard()) // envtest logs through controller-runtime; the programs log to files
	dir, err := os.MkdirTemp("", "joiner-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if bins, err = e2estack.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	programs.assets, programs.joiner, programs.controller, programs.awsemu = bins.Assets, bins.Joiner, bins.Controller, bins.Awsemu
	return m.Run()
}
