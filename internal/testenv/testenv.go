// Package testenv starts the real control plane that Joiner's tests run against: etcd and
// kube-apiserver built by hack/install-testenv.sh, with Joiner's CRDs installed.
//
// It never downloads anything and never skips: when the binaries are missing, Start fails with
// the command that builds them. Start one Environment per test package, in TestMain; Main does
// that and stops it when the tests are done:
//
//	var env *testenv.Environment
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, &env, testenv.CreateDefaultServiceAccount, startControllers))
//	}
//
// A setup step such as startControllers runs the package's controllers in a manager from
// StartManager, which Stop shuts down before the control plane.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joinerhq/joiner/config/crd"
	"github.com/joinerhq/joiner/pkg/operator"
)

// Environment is a running etcd and kube-apiserver with Joiner's CRDs installed.
type Environment struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a direct (uncached) client whose scheme knows core and Joiner types.
	Client client.Client
	// Scheme knows the client-go types and Joiner's API types.
	Scheme *kruntime.Scheme
	// AssetsDir holds etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kubectl.
	AssetsDir string

	env *envtest.Environment

	mu sync.Mutex
	// managers are the managers StartManager started, which Stop stops first.
	managers []*runningManager
}

// Start starts etcd and kube-apiserver and installs Joiner's CRDs, waiting until they are served.
func Start() (*Environment, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		return nil, err
	}
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		Scheme:                scheme,
		CRDs:                  crds,
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver from %s, %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("building client, %w", err), env.Stop())
	}
	return &Environment{Config: cfg, Client: c, Scheme: scheme, AssetsDir: assets, env: env}, nil
}

// Stop stops the managers StartManager started (waiting for each to return), then kube-apiserver
// and etcd, and removes their data. Its error joins every manager's and the control plane's.
func (e *Environment) Stop() error {
	return errors.Join(e.stopManagers(), e.env.Stop())
}

// WriteKubeconfig writes a kubeconfig for a cluster-admin user to path, for kubectl.
func (e *Environment) WriteKubeconfig(path string) error {
	user, err := e.env.AddUser(envtest.User{Name: "joiner-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding admin user, %w", err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("rendering kubeconfig, %w", err)
	}
	return os.WriteFile(path, raw, 0o600)
}

// AssetsDir finds the control-plane binaries: $KUBEBUILDER_ASSETS if set, else the newest
// bin/testenv/k8s/<version>-<os>-<arch> under the repository root. It fails with the command to
// run when neither holds a kube-apiserver.
func AssetsDir() (string, error) {
	const fix = "run `make testenv` (hack/install-testenv.sh bin/testenv) to build them, or set KUBEBUILDER_ASSETS"
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		if !isFile(filepath.Join(dir, "kube-apiserver")) {
			return "", fmt.Errorf("KUBEBUILDER_ASSETS=%s holds no kube-apiserver: %s", dir, fix)
		}
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("control-plane binaries not found (%w): %s", err, fix)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "bin", "testenv", "k8s", "*-"+runtime.GOOS+"-"+runtime.GOARCH))
	if err != nil {
		return "", fmt.Errorf("looking for control-plane binaries, %w", err)
	}
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return !isFile(filepath.Join(d, "kube-apiserver")) })
	if len(dirs) == 0 {
		return "", fmt.Errorf("no kube-apiserver under %s: %s", filepath.Join(root, "bin", "testenv"), fix)
	}
	slices.Sort(dirs)
	return dirs[len(dirs)-1], nil
}

// RepoRoot walks up from the working directory to the directory holding Joiner's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("reading working directory, %w", err)
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) && isFile(filepath.Join(dir, "hack", "install-testenv.sh")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the Joiner repository")
		}
		dir = parent
	}
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}
