package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// TestDevWithWorldIsScriptable runs `joiner dev --world` as a user would and reads its output
// as a script would: the kubeconfig path, the emulator's URL and "The stack runs until
// interrupted", with the emulator serving the world's account to the world's controller key,
// no samples applied, and a clean exit on interrupt.
func TestDevWithWorldIsScriptable(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(programs.joiner, "dev", "--world", filepath.Join("..", "scenarios", "s1-unmapped-node-role.world.yaml"),
		"--assets", programs.assets, "--workdir", work, "--awsemu", programs.awsemu, "--awsemu-args="+strings.Join(fastEmulator, ","))
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
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()

	kubeconfig, emulator, output := waitReady(t, lines, exited)
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Errorf("kubeconfig %q printed, but: %v", kubeconfig, err)
	}
	if resp, err := http.Get(emulator + "/_awsemu/instances"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("emulator %q printed, but its inspection endpoint answers %v %v", emulator, resp, err)
	} else {
		_ = resp.Body.Close()
	}
	who, err := sts.NewFromConfig(aws.Config{Region: "us-west-2", BaseEndpoint: aws.String(emulator),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDJOINERCONTROLLER", "local-stack", "")}).GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(who.Arn); got != "arn:aws:sts::111122223333:assumed-role/KarpenterControllerRole-demo/AKIDJOINERCONTROLLER" {
		t.Errorf("the controller's key is %s, not the world's controller role", got)
	}
	all := strings.Join(output, "\n")
	if strings.Contains(all, "Applied ") {
		t.Errorf("samples were applied with a world:\n%s", all)
	}
	if !strings.Contains(all, "World ") {
		t.Errorf("the output does not say which world:\n%s", all)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines { // keep reading so the program can write while it stops
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("joiner dev exited with %v after an interrupt", err)
		}
	case <-ctx.Done():
		t.Fatal("joiner dev did not exit within a minute of an interrupt")
	}
}

// waitReady reads the lines of `joiner dev` until it says the stack runs, and returns the
// kubeconfig path and the emulator URL it printed, and everything it printed.
func waitReady(t *testing.T, lines <-chan string, exited <-chan error) (kubeconfig, emulator string, output []string) {
	t.Helper()
	kubeconfigLine, emulatorLine := regexp.MustCompile(`kubeconfig (\S+)$`), regexp.MustCompile(`^AWS emulator at (http://\S+) `)
	deadline := time.After(3 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("joiner dev exited before it was ready: %v\n%s", <-exited, strings.Join(output, "\n"))
			}
			output = append(output, line)
			if m := kubeconfigLine.FindStringSubmatch(line); m != nil {
				kubeconfig = m[1]
			}
			if m := emulatorLine.FindStringSubmatch(line); m != nil {
				emulator = m[1]
			}
			if strings.HasPrefix(line, "The stack runs until interrupted") {
				return kubeconfig, emulator, output
			}
		case <-deadline:
			t.Fatalf("joiner dev not ready within 3m:\n%s", strings.Join(output, "\n"))
		}
	}
}
