package localstack

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestStart runs the local stack as `make demo` does and checks that what it promises the user
// is there: the sample objects, a usable kubeconfig, and a summary naming them.
func TestStart(t *testing.T) {
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx := context.WithoutCancel(t.Context())
	stack, err := Start(ctx, Options{AssetsDir: assets, WorkDir: t.TempDir(), Out: &out})
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
	for _, want := range []string{"Applied NodePool default", "Applied ConfigMap kube-system/aws-auth", "KarpenterNodeRole-demo", stack.KubeconfigPath} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Start is re-runnable against a stack whose samples already exist.
	if err := stack.applySamples(ctx); err != nil {
		t.Errorf("applying samples twice: %v", err)
	}
}
