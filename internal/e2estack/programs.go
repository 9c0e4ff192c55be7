package e2estack

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/joinerhq/joiner/internal/testenv"
)

// Programs are the binaries a suite runs, built once per test binary.
type Programs struct {
	// Assets holds etcd, kube-apiserver, kube-scheduler and kube-controller-manager.
	Assets string
	// Joiner and Awsemu are the programs built from ./cmd/joiner and ./cmd/awsemu.
	Joiner, Awsemu string
	// Controller is ./cmd/joiner built as the image ships it (-tags nolocalstack: without
	// `joiner dev`, half the size): the stacks run it as the controller, so that its memory is
	// the production controller's.
	Controller string
	// Helm renders the chart whose RBAC the controller runs with: $HELM, else bin/helm, else
	// built from hack/tools; Chart is charts/joiner.
	Helm, Chart string
}

// Build builds joiner, joiner-controller and awsemu (and helm when neither $HELM nor bin/helm exists) into dir,
// which the caller removes after the tests.
func Build(dir string) (*Programs, error) {
	assets, err := testenv.AssetsDir()
	if err != nil {
		return nil, err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	p := &Programs{
		Assets: assets, Joiner: filepath.Join(dir, "joiner"), Awsemu: filepath.Join(dir, "awsemu"),
		Controller: filepath.Join(dir, "joiner-controller"),
		Chart:      filepath.Join(root, "charts", "joiner"),
	}
	for _, b := range []struct{ out, pkg, tags string }{
		{p.Joiner, "./cmd/joiner", ""}, {p.Controller, "./cmd/joiner", "nolocalstack"}, {p.Awsemu, "./cmd/awsemu", ""},
	} {
		cmd := exec.Command("go", "build", "-tags", b.tags, "-o", b.out, b.pkg)
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s (tags %q), %w\n%s", b.pkg, b.tags, err, msg)
		}
	}
	if p.Helm, err = helm(root, dir); err != nil {
		return nil, err
	}
	return p, nil
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
