package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/e2estack"
	"github.com/joinerhq/joiner/internal/testenv"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// TestConsoleInBrowser drives headless Chromium (hack/install-chromium.sh installs Debian's
// package; CHROMIUM names another) through the controller's console (--console-listen) on the
// local stack during a scale-up whose node fails to join: the node role's aws-auth mapping and
// access entry are removed after the instance is launched and before it boots, so its kubelet is refused
// (Unauthorized) and the NodeClaim is diagnosed Registered=False. A pod no NodePool can hold
// stays pending. The test checks the DOM of every page (the cost, the pending pods with their
// reason, the failed NodeClaim's diagnosis and its fix, the EC2NodeClass's findings), that a
// page updates itself by polling, saves a screenshot of each page under
// bin/console-screenshots/, and fails when a page logs an error in the browser's console.
func TestConsoleInBrowser(t *testing.T) {
	browser := chromiumPath(t)
	addr := freeAddr(t)
	stack := startConsoleStack(t, "--console-listen", addr)
	ctx := t.Context()

	// The scale-up: the sample NodePool and inflate (five pods of one CPU), and a pod that wants
	// a GPU node no NodePool offers.
	objects, err := localstack.SampleObjects("NodePool", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	gpu := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "wants-gpu", Namespace: "default"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"example.com/gpu": "a100"},
		Containers: []corev1.Container{{Name: "c", Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}}
	if err := stack.Apply(ctx, append(objects, gpu)...); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "a NodeClaim launched", func(ctx context.Context) (bool, string, error) {
		claims, err := claimsWith(ctx, stack, v1.ConditionTypeLaunched, metav1.ConditionTrue)
		return len(claims) > 0, fmt.Sprint(claims), err
	})
	b := newBrowser(t, browser)
	base := "http://" + addr
	shots, err := screenshotDir()
	if err != nil {
		t.Fatal(err)
	}
	// The operator watches the scale-up: the launched NodeClaims are priced.
	text, png := b.page(t, base+"/", []string{"#cost"})
	checkCost(t, text)
	if err := os.WriteFile(filepath.Join(shots, "overview-launched.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// The operator's mistake, before the instance boots: the node role's mappings removed (the
	// world's EC2_LINUX access entry and aws-auth's mapRoles entry).
	if _, err := eks.NewFromConfig(aws.Config{Region: localstack.DefaultRegion, BaseEndpoint: aws.String(stack.EmulatorURL),
		Credentials: credentials.NewStaticCredentialsProvider(adminAccessKey, "local-stack", "")}).DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{
		ClusterName: aws.String("demo"), PrincipalArn: aws.String("arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"),
	}); err != nil {
		t.Fatalf("deleting the node role's access entry as the administrator: %v", err)
	}
	var awsAuth corev1.ConfigMap
	if err := stack.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "aws-auth"}, &awsAuth); err != nil {
		t.Fatal(err)
	}
	awsAuth.Data["mapRoles"] = "[]\n"
	if err := stack.Client.Update(ctx, &awsAuth); err != nil {
		t.Fatal(err)
	}
	var failed string
	eventually(t, 3*time.Minute, "a NodeClaim whose node failed to join", func(ctx context.Context) (bool, string, error) {
		claims, err := claimsWith(ctx, stack, v1.ConditionTypeRegistered, metav1.ConditionFalse)
		if len(claims) > 0 {
			failed = claims[0]
		}
		return len(claims) > 0, "", err
	})
	t.Logf("NodeClaim %s failed to join", failed)

	for _, p := range []struct {
		path, name string
		// want are texts of <main>; each selector must match an element.
		want, selectors []string
	}{
		{"/", "overview", []string{"Cost per hour", "Failed joins", "Cost over the last hours", "default"}, []string{"#cost", "#cost-history", "dd.bad a[href='/nodeclaims']"}},
		{"/pending", "pending", []string{"default/wants-gpu", "does not fit", "example.com/gpu"}, []string{"article.pod"}},
		{"/nodeclaims", "nodeclaims", []string{failed, "join failed", "Diagnosis", "NodeRoleNotAuthorized", "kube-system/aws-auth", "EC2_LINUX", "role/KarpenterNodeRole-demo"}, []string{"article.claim.failed .diagnosis li"}},
		{"/nodes", "nodes", []string{"Nodes"}, nil},
		{"/nodeclasses", "nodeclasses", []string{"default", "NodeJoinReady", "Node role: KarpenterNodeRole-demo"}, []string{"main table tbody tr"}},
	} {
		text, png := b.page(t, base+p.path, p.selectors)
		if err := os.WriteFile(filepath.Join(shots, p.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, w := range p.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s does not show %q:\n%s", p.path, w, text)
			}
		}
		if p.name == "overview" { // still priced, as last read, now that the class is not Ready
			checkCost(t, text)
		}
	}
	// The page updates itself: the time of its last update changes within two polls.
	b.updates(t, base+"/nodeclaims")
	t.Logf("screenshots in %s", shots)
	b.checkNoErrors(t)
}

// checkCost fails the test unless the Overview's cost per hour is a positive price: the
// launched NodeClaims are priced.
func checkCost(t *testing.T, text string) {
	t.Helper()
	_, after, ok := strings.Cut(text, "Cost per hour")
	if !ok {
		t.Errorf("the Overview shows no cost per hour:\n%s", text)
		return
	}
	var cost float64
	if _, err := fmt.Sscanf(strings.TrimSpace(after), "$%f", &cost); err != nil || cost <= 0 {
		t.Errorf("the Overview's cost per hour is not a positive price (%v):\n%s", err, text)
	}
}

// claimsWith returns the names of the NodeClaims whose condition kind has status s.
func claimsWith(ctx context.Context, stack *localstack.Stack, kind string, s metav1.ConditionStatus) ([]string, error) {
	var claims v1.NodeClaimList
	if err := stack.Client.List(ctx, &claims); err != nil {
		return nil, err
	}
	var out []string
	for _, nc := range claims.Items {
		if c := meta.FindStatusCondition(nc.Status.Conditions, kind); c != nil && c.Status == s {
			out = append(out, nc.Name)
		}
	}
	return out, nil
}

// startConsoleStack starts the local stack as startStack does (least privilege, the sample
// EC2NodeClass and aws-auth, the EKS DaemonSets), with instances that boot 20 s after launch:
// time to break the node role's mapping between launch and boot.
func startConsoleStack(t *testing.T, controllerArgs ...string) *localstack.Stack {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	work := t.TempDir()
	var out bytes.Buffer
	stack, err := localstack.Start(ctx, leastPrivilege(localstack.Options{
		AssetsDir: programs.assets, WorkDir: work, Out: &out,
		EmulatorPath: programs.awsemu, EmulatorArgs: []string{"--pending-for", "1s", "--boot-delay", "20s", "--shutting-down-for", "1s"},
		JoinerPath: programs.controller, ControllerArgs: append([]string{"--leader-elect=false", "--log-level", "debug"}, controllerArgs...),
	}))
	if err != nil {
		t.Fatalf("starting the local stack: %v\n%s", err, out.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stack output:\n%s", out.String())
			dumpLogs(t, filepath.Join(work, "logs"))
		}
		if err := stack.Stop(); err != nil {
			t.Errorf("stopping the stack: %v", err)
		}
	})
	objects, err := localstack.SampleObjects("EC2NodeClass", "ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	if err := stack.Apply(ctx, append(objects, e2estack.EKSDaemonSets()...)...); err != nil {
		t.Fatal(err)
	}
	return stack
}

// chromiumPath is $CHROMIUM, else chromium on PATH; the test fails, saying how to install it,
// when there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("no chromium on PATH for the console's browser test: run hack/install-chromium.sh (make test does), or set CHROMIUM to a Chromium binary")
	}
	return p
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// screenshotDir is bin/console-screenshots under the repository root, created.
func screenshotDir() (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin", "console-screenshots")
	return dir, os.MkdirAll(dir, 0o755)
}

// browser is one headless Chromium with a fresh profile, and the errors its pages logged.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &browser{ctx: ctx}
	// The first Do starts the browser and the tab; Console then reads every message of its pages.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("starting %s: %v", path, err)
	}
	messages := chromedp.Console(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { cancel(); cancelAlloc(); wg.Wait() })
	return b
}

// page loads url, waits for <main>'s h1 and each selector, and returns <main>'s text and a
// screenshot of the whole page (PNG).
func (b *browser) page(t *testing.T, url string, selectors []string) (string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("main h1"))}
	for _, s := range selectors {
		steps = append(steps, chromedp.WaitReady(chromedp.CSS(s)))
	}
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browsing %s (waiting for %v): %v", url, selectors, err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#main")))
	if err != nil {
		t.Fatalf("reading %s: %v", url, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("taking a screenshot of %s: %v", url, err)
	}
	return text, png
}

// updates loads url and waits, at most three polls, for the page's update time to change.
func (b *browser) updates(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("browsing %s: %v", url, err)
	}
	first, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#updated")))
	if err != nil {
		t.Fatalf("reading %s: %v", url, err)
	}
	for {
		now, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#updated")))
		if err != nil {
			t.Fatalf("%s did not update itself after %s: %v", url, first, err)
		}
		if now != first {
			if strings.HasPrefix(now, "unreachable") {
				t.Errorf("%s says the console is %s", url, now)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not update itself after %s", url, first)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// checkNoErrors fails the test with every error the pages logged.
func (b *browser) checkNoErrors(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		t.Errorf("a page logged an error in the browser's console: %s", e)
	}
}
