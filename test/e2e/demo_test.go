package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/pkg/localstack"
)

// TestDemo tells the story of `make demo` on the local stack (with the emulator's quick timings):
// the sample Deployment's pods run on nodes Joiner launched, then it is scaled to zero and the
// nodes go. The story must complete and say so.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	stack, err := localstack.Start(context.WithoutCancel(t.Context()), leastPrivilege(localstack.Options{
		AssetsDir: programs.assets, WorkDir: t.TempDir(), Out: &out, Samples: true,
		EmulatorPath: programs.awsemu, EmulatorArgs: fastEmulator, JoinerPath: programs.controller,
	}))
	if err != nil {
		t.Fatalf("starting the local stack: %v\n%s", err, out.String())
	}
	defer func() {
		if err := stack.Stop(); err != nil {
			t.Errorf("stopping the stack: %v", err)
		}
	}()
	if err := stack.Demo(t.Context()); err != nil {
		t.Fatalf("Demo() = %v\n%s", err, out.String())
	}
	for _, want := range []string{"launched i-", "registered as node", "initialized: the node is Ready", "pods Running 5/5", "Every pod Running", "TOTAL", "gone", "Done in"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the story never said %q:\n%s", want, out.String())
		}
	}
	t.Log(out.String())
}
