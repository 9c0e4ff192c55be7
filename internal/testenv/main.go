package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Main runs a test package against one Environment, for TestMain to hand to os.Exit: it starts
// the control plane, stores it in *env for the tests, runs each setup step in order, runs the
// tests and stops everything (managers first).
//
// The context the setup steps get is cancelled once the tests are done. Main returns 1 when the
// control plane does not start, a setup step fails or a manager stops with an error, else m.Run's
// code; it reports failures on stderr, and a control plane that does not stop cleanly only there.
func Main(m *testing.M, env **Environment, setup ...func(ctx context.Context, env *Environment) error) (code int) {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test control plane:", err)
		return 1
	}
	*env = e
	defer func() {
		if err := e.stopManagers(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if err := e.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test control plane:", err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, step := range setup {
		if err := step(ctx, e); err != nil {
			fmt.Fprintln(os.Stderr, "setting up the tests:", err)
			return 1
		}
	}
	return m.Run()
}

// CreateDefaultServiceAccount creates the "default" service account in the "default" namespace,
// which pods default to: no kube-controller-manager runs to create it. It is a setup step for Main.
func CreateDefaultServiceAccount(ctx context.Context, env *Environment) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}}
	if err := env.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the default service account, %w", err)
	}
	return nil
}
