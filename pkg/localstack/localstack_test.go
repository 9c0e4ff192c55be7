package localstack

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestStart runs the Kubernetes half of the local stack (no emulator, no controller) with the
// samples and checks what it promises: the sample objects, a usable kubeconfig, and a scheduler
// and controller manager at work (the sample Deployment's pods exist and were found
// unschedulable, as there are no nodes).
func TestStart(t *testing.T) {
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx := context.WithoutCancel(t.Context())
	stack, err := Start(ctx, Options{AssetsDir: assets, WorkDir: t.TempDir(), Out: &out, Samples: true})
	if err != nil {
		t.Fatalf("Start() error = %v\n%s", err, out.String())
	}
	defer func() {
		if err := stack.Stop(); err != nil {
			t.Errorf("Stop() error = %v", err)
		}
	}()

	if err := stack.Client.Get(ctx, client.ObjectKey{Name: "default"}, &v1.NodePool{}); err != nil {
		t.Errorf("sample NodePool: %v", err)
	}
	if err := stack.Client.Get(ctx, client.ObjectKey{Name: "default"}, &awsv1.EC2NodeClass{}); err != nil {
		t.Errorf("sample EC2NodeClass: %v", err)
	}
	raw, err := os.ReadFile(stack.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clientcmd.RESTConfigFromKubeConfig(raw); err != nil {
		t.Errorf("kubeconfig at %s does not load: %v", stack.KubeconfigPath, err)
	}
	for _, want := range []string{"Applied NodePool default", "Applied ConfigMap kube-system/aws-auth", "kube-scheduler and kube-controller-manager running", stack.KubeconfigPath} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := stack.Client.List(ctx, &pods, client.InNamespace("default")); err != nil {
			return false, nil
		}
		unschedulable := 0
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
					unschedulable++
				}
			}
		}
		return len(pods.Items) == 5 && unschedulable == 5, nil
	})
	if err != nil {
		t.Errorf("the sample Deployment's 5 pods were not created and found unschedulable: %v", err)
	}
	// Applying is re-runnable against a stack whose samples already exist.
	if err := stack.applySamples(ctx); err != nil {
		t.Errorf("applying samples twice: %v", err)
	}
	checkRestart(t, ctx, stack)
}

// checkRestart: a restarted control plane is the same cluster: the objects are kept and the same
// client, with the same certificates, writes to it again.
func checkRestart(t *testing.T, ctx context.Context, stack *Stack) {
	t.Helper()
	if err := stack.RestartControlPlane(ctx, time.Second); err != nil {
		t.Fatalf("RestartControlPlane() = %v", err)
	}
	if err := stack.Client.Get(ctx, client.ObjectKey{Name: "default"}, &v1.NodePool{}); err != nil {
		t.Errorf("sample NodePool after the restart: %v", err)
	}
	if err := stack.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "after-restart"}}); err != nil {
		t.Errorf("creating a namespace after the restart: %v", err)
	}
}

// TestStartRefusesMissingPrograms names the program and the fix.
func TestStartRefusesMissingPrograms(t *testing.T) {
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no assets", Options{AssetsDir: t.TempDir()}, "run `make testenv` first"},
		{"no emulator program", Options{AssetsDir: assets, EmulatorPath: "/nonexistent/awsemu"}, "run `make build` first"},
		{"controller without emulator", Options{AssetsDir: assets, JoinerPath: os.Args[0]}, "needs the emulator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.WorkDir = t.TempDir()
			_, err := Start(t.Context(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestProcessKillRestartAndPeakRSS: a killed process can start again, and its peak memory is
// remembered across runs.
func TestProcessKillRestartAndPeakRSS(t *testing.T) {
	p := &Process{Name: "sleep", Path: "/bin/sleep", Args: []string{"60"}, LogPath: t.TempDir() + "/sleep.log"}
	for run := 1; run <= 2; run++ {
		if err := p.Start(); err != nil {
			t.Fatalf("run %d: Start() = %v", run, err)
		}
		if !p.Running() || p.Pid() == 0 {
			t.Fatalf("run %d: not running after Start", run)
		}
		if err := p.Start(); err == nil {
			t.Errorf("run %d: a second Start of a running process succeeded", run)
		}
		if err := p.Kill(); err != nil {
			t.Fatalf("run %d: Kill() = %v", run, err)
		}
		if p.Running() {
			t.Fatalf("run %d: still running after Kill", run)
		}
	}
	if rss := p.PeakRSS(); rss <= 0 {
		t.Errorf("PeakRSS() = %d after two runs, want > 0", rss)
	}
	raw, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(raw), "==== sleep run"); got != 2 {
		t.Errorf("log records %d runs, want 2:\n%s", got, raw)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop() of a stopped process = %v", err)
	}
}
