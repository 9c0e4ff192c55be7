package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/operator"
)

// interruptionHandledWithin is how soon after a spot interruption warning the demo stack must
// have tainted and drained the node and run its pods elsewhere: well inside the two minutes
// before EC2 reclaims the instance.
const interruptionHandledWithin = 30 * time.Second

// TestDevDemoWorldOutOfTheBox runs `joiner dev` as a new user does, without a world file (the
// demo world, the sample Deployment applied), and uses only what it prints:
//   - `joiner explain node` with the printed kubeconfig, AWS_ENDPOINT_URL and credentials and no
//     region anywhere finds the region on the node, says so, and explains why the node stays;
//   - a spot interruption warning sent through the emulator gets the node tainted and drained,
//     and its pods Running on other nodes, within interruptionHandledWithin: the controller
//     reads the demo world's interruption queue.
func TestDevDemoWorldOutOfTheBox(t *testing.T) {
	kubeconfig, env, work := startDev(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	eventually(t, 3*time.Minute, "the sample Deployment's 5 pods Running on initialized nodes", func(ctx context.Context) (bool, string, error) {
		running, nodes, err := inflatePods(ctx, kube, "")
		if err != nil {
			return false, "", err
		}
		initialized, msg, err := allInitialized(ctx, kube)
		return running == 5 && initialized, fmt.Sprintf("%d/5 Running on %v; %s", running, nodes, msg), err
	})
	victim := pickVictim(t, ctx, kube)
	t.Logf("victim: nodeclaim %s, node %s, %s", victim.Name, victim.Status.NodeName, victim.Status.ProviderID)
	explainWithoutRegion(t, ctx, kubeconfig, env, work, victim.Status.NodeName)

	// The spot interruption warning, as `joiner dev`'s user sends it.
	watch := &cordonWatch{node: victim.Status.NodeName}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { watch.run(watchCtx, kube) })
	defer func() { stopWatch(); wg.Wait() }()
	instance := victim.Status.ProviderID[strings.LastIndex(victim.Status.ProviderID, "/")+1:]
	warned := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env["AWS_ENDPOINT_URL"]+"/_awsemu/events",
		strings.NewReader(`{"instanceID": "`+instance+`", "kind": "spot-interruption"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST event: %s", resp.Status)
	}
	eventually(t, interruptionHandledWithin, "the interrupted node tainted and drained, its pods Running elsewhere", func(ctx context.Context) (bool, string, error) {
		elsewhere, nodes, err := inflatePods(ctx, kube, victim.Status.NodeName)
		if err != nil {
			return false, "", err
		}
		interrupted, err := spotInterruptedEvent(ctx, kube, victim.Name)
		return elsewhere == 5 && watch.cordoned() && interrupted,
			fmt.Sprintf("%d/5 Running off %s (on %v), tainted %v, SpotInterrupted event %v", elsewhere, victim.Status.NodeName, nodes, watch.cordoned(), interrupted), err
	})
	t.Logf("interruption handled in %s", time.Since(warned).Round(time.Second))
}

// startDev runs `joiner dev` on the demo world with the suite's emulator timings until the test
// ends, and returns the kubeconfig and the variables it prints to export, and its work
// directory (whose logs are dumped if the test fails).
func startDev(t *testing.T) (kubeconfig string, env map[string]string, work string) {
	t.Helper()
	work = t.TempDir()
	cmd := exec.Command(programs.joiner, "dev", "--assets", programs.assets, "--workdir", work,
		"--awsemu", programs.awsemu, "--awsemu-args="+strings.Join(fastEmulator, ","))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, filepath.Join(work, "logs"))
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("joiner dev exited with %v after an interrupt", err)
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Errorf("joiner dev did not exit within a minute of an interrupt")
		}
	})
	kubeconfig, _, output := waitReady(t, lines, exited)
	env = readExports(t, lines, output)
	go func() {
		for range lines { // keep reading so the program can write while it runs and stops
		}
	}()
	if env["AWS_REGION"] == "" || env["AWS_ENDPOINT_URL"] == "" || env["AWS_ACCESS_KEY_ID"] == "" {
		t.Fatalf("joiner dev printed no region, endpoint or credentials to export: %v\n%s", env, strings.Join(output, "\n"))
	}
	return kubeconfig, env, work
}

// explainWithoutRegion runs `joiner explain node` with what joiner dev prints, and no region:
// not the flag, not the environment, not a shared config. It must find the region on the node,
// say so, and explain why the node stays.
func explainWithoutRegion(t *testing.T, ctx context.Context, kubeconfig string, env map[string]string, work, node string) {
	t.Helper()
	explain := exec.CommandContext(ctx, programs.joiner, "explain", "node", node, "-o", "json")
	explain.Env = append(withoutAWS(os.Environ()), "KUBECONFIG="+kubeconfig, "AWS_ENDPOINT_URL="+env["AWS_ENDPOINT_URL"],
		"AWS_ACCESS_KEY_ID="+env["AWS_ACCESS_KEY_ID"], "AWS_SECRET_ACCESS_KEY="+env["AWS_SECRET_ACCESS_KEY"],
		"AWS_CONFIG_FILE="+filepath.Join(work, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(work, "no-aws-credentials"),
		"AWS_EC2_METADATA_DISABLED=true")
	var explained, explainErr bytes.Buffer
	explain.Stdout, explain.Stderr = &explained, &explainErr
	if err := explain.Run(); err != nil {
		t.Fatalf("joiner explain node %s: %v\n%s%s", node, err, explainErr.String(), explained.String())
	}
	wantSource := fmt.Sprintf("Region %s (from node %s's %s label)", env["AWS_REGION"], node, corev1.LabelTopologyRegion)
	if !strings.Contains(explainErr.String(), wantSource) {
		t.Errorf("explain node did not say where it found the region (%q):\n%s", wantSource, explainErr.String())
	}
	var report struct {
		State  string   `json:"state"`
		Reason string   `json:"reason"`
		Price  *float64 `json:"price"`
	}
	if err := json.Unmarshal(explained.Bytes(), &report); err != nil {
		t.Fatalf("explain node -o json: %v\n%s", err, explained.String())
	}
	if (report.State != "kept" && report.State != "candidate") || report.Reason == "" || report.Price == nil {
		t.Errorf("explain node: state %q, reason %q, price %v; want the node kept (or a candidate) with its reason and price from AWS:\n%s",
			report.State, report.Reason, report.Price, explained.String())
	}
	t.Logf("explain node %s: %s: %s (stderr %q)", node, report.State, report.Reason, strings.TrimSpace(explainErr.String()))
}

// readExports reads the lines `joiner dev` prints after "The stack runs until interrupted" up to
// its explain hint, and returns the variables its export lines set.
func readExports(t *testing.T, lines <-chan string, output []string) map[string]string {
	t.Helper()
	assignment := regexp.MustCompile(`([A-Z_]+)=(\S+)`)
	env := map[string]string{}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("joiner dev stopped printing before its hints:\n%s", strings.Join(output, "\n"))
			}
			output = append(output, line)
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "export "); ok {
				for _, m := range assignment.FindAllStringSubmatch(rest, -1) {
					env[m[1]] = m[2]
				}
			}
			if strings.Contains(line, "joiner explain node") {
				return env
			}
		case <-deadline:
			t.Fatalf("joiner dev printed no explain hint within 30s:\n%s", strings.Join(output, "\n"))
		}
	}
}

// withoutAWS is environ without AWS_ and KUBECONFIG variables.
func withoutAWS(environ []string) []string {
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "KUBECONFIG=")
	})
}

// inflatePods counts the sample Deployment's pods Running and not deleting on a node other than
// except, and lists the nodes they run on.
func inflatePods(ctx context.Context, c client.Client, except string) (int, []string, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{"app": "inflate"}); err != nil {
		return 0, nil, err
	}
	running := 0
	var nodes []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == except {
			continue
		}
		running++
		if !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return running, nodes, nil
}

// pickVictim is a spot NodeClaim whose node runs a sample pod (any node running one when none is
// spot: the warning is handled the same way).
func pickVictim(t *testing.T, ctx context.Context, c client.Client) v1.NodeClaim {
	t.Helper()
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	_, nodes, err := inflatePods(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	var withPods []v1.NodeClaim
	for _, nc := range claims.Items {
		if nc.DeletionTimestamp == nil && slices.Contains(nodes, nc.Status.NodeName) && nc.Status.ProviderID != "" {
			withPods = append(withPods, nc)
		}
	}
	if len(withPods) == 0 {
		t.Fatalf("no NodeClaim runs a sample pod (pods on %v)", nodes)
	}
	for _, nc := range withPods {
		if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeSpot {
			return nc
		}
	}
	t.Logf("no spot node runs a sample pod; interrupting %s (%s)", withPods[0].Name, withPods[0].Labels[v1.CapacityTypeLabelKey])
	return withPods[0]
}

// spotInterruptedEvent reports whether the interruption controller recorded its SpotInterrupted
// event on the NodeClaim: the node was taken for the warning, not for consolidation.
func spotInterruptedEvent(ctx context.Context, c client.Client, nodeClaim string) (bool, error) {
	var events corev1.EventList
	if err := c.List(ctx, &events); err != nil {
		return false, err
	}
	return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
		return e.Reason == "SpotInterrupted" && e.InvolvedObject.Name == nodeClaim
	}), nil
}
