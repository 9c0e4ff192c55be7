// Package e2e runs Joiner end to end on the local stack: a real etcd, kube-apiserver,
// kube-scheduler and kube-controller-manager, the AWS emulator booting instances and registering
// their Nodes, and `joiner controller` as a separate process, as an operator runs it. The tests
// drive the cluster only through the API server and read the cloud only through the emulator's
// inspection endpoint.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/internal/testenv"
)

// programs are the joiner and awsemu binaries built once for the package.
var programs struct {
	assets, joiner, awsemu string
	// helm renders the chart whose RBAC the controller runs with: $HELM, else bin/helm, else
	// built from hack/tools; chart is charts/joiner.
	helm, chart string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	log.SetLogger(logr.Discard()) // envtest logs through controller-runtime; the programs log to files
	assets, err := testenv.AssetsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "joiner-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	programs.assets = assets
	programs.joiner, programs.awsemu = filepath.Join(dir, "joiner"), filepath.Join(dir, "awsemu")
	for out, pkg := range map[string]string{programs.joiner: "./cmd/joiner", programs.awsemu: "./cmd/awsemu"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s, %v\n%s", pkg, err, msg)
			return 1
		}
	}
	programs.chart = filepath.Join(root, "charts", "joiner")
	if programs.helm, err = helm(root, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// helm returns $HELM, else the repository's bin/helm (`make helm`), else the pinned helm built
// into dir.
func helm(root, dir string) (string, error) {
	if h := os.Getenv("HELM"); h != "" {
		return h, nil
	}
	if h := filepath.Join(root, "bin", "helm"); fileExists(h) {
		return h, nil
	}
	out := filepath.Join(dir, "helm")
	cmd := exec.Command("go", "build", "-modfile=hack/tools/go.mod", "-o", out, "helm.sh/helm/v3/cmd/helm")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building helm, %w\n%s", err, msg)
	}
	return out, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
