// Package localstack runs Joiner's local stack: a real control plane on loopback with Joiner's
// CRDs and the sample manifests applied, so a new user can watch Joiner work with one command.
//
// It owns process start-up and teardown and the first apply; it makes no scaling decisions.
package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joinerhq/joiner/config/crd"
	"github.com/joinerhq/joiner/config/samples"
	"github.com/joinerhq/joiner/pkg/apis"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/manifest"
)

// Options configure the local stack.
type Options struct {
	// AssetsDir holds etcd and kube-apiserver (what `hack/install-testenv.sh bin/testenv` prints).
	AssetsDir string
	// WorkDir receives the kubeconfig; it is created if missing.
	WorkDir string
	// Out receives progress for the user.
	Out io.Writer
}

// Stack is a running local stack.
type Stack struct {
	// KubeconfigPath is a cluster-admin kubeconfig for the stack's API server.
	KubeconfigPath string
	// Client reaches the stack's API server as cluster admin.
	Client client.Client

	env *envtest.Environment
	out io.Writer
}

// Start starts the control plane, installs the CRDs, applies the sample manifests and shows them.
// On error, whatever had started is stopped again.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(opts.AssetsDir, bin)); err != nil {
			return nil, fmt.Errorf("no %s in %s: run `make testenv` first, %w", bin, opts.AssetsDir, err)
		}
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating work directory, %w", err)
	}
	scheme := kruntime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), apis.AddToScheme(scheme)); err != nil {
		return nil, fmt.Errorf("building scheme, %w", err)
	}
	crds, err := crd.CustomResourceDefinitions()
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(out, "Starting etcd and kube-apiserver from %s\n", opts.AssetsDir)
	env := &envtest.Environment{BinaryAssetsDirectory: opts.AssetsDir, Scheme: scheme, CRDs: crds}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting control plane, %w", err)
	}
	stack := &Stack{env: env, out: out}
	fail := func(err error) (*Stack, error) { return nil, errors.Join(err, env.Stop()) }

	if stack.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fail(fmt.Errorf("building client, %w", err))
	}
	fmt.Fprintf(out, "Control plane ready at %s; installed %d CRDs\n", cfg.Host, len(crds))
	if stack.KubeconfigPath, err = writeKubeconfig(env, opts.WorkDir); err != nil {
		return fail(err)
	}
	if err := stack.applySamples(ctx); err != nil {
		return fail(err)
	}
	if err := stack.show(ctx); err != nil {
		return fail(err)
	}
	fmt.Fprintf(out, "\nkubectl --kubeconfig %s get nodepools,nodeclaims,ec2nodeclasses\n", stack.KubeconfigPath)
	return stack, nil
}

// Stop stops kube-apiserver and etcd.
func (s *Stack) Stop() error {
	fmt.Fprintln(s.out, "Stopping the control plane")
	return s.env.Stop()
}

func writeKubeconfig(env *envtest.Environment, dir string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: "joiner-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding admin user, %w", err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering kubeconfig, %w", err)
	}
	path, err := filepath.Abs(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return "", fmt.Errorf("resolving kubeconfig path, %w", err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig, %w", err)
	}
	return path, nil
}

func (s *Stack) applySamples(ctx context.Context) error {
	docs, err := samples.Manifests()
	if err != nil {
		return err
	}
	for _, doc := range docs {
		objects, err := manifest.DecodeBytes(doc)
		if err != nil {
			return fmt.Errorf("decoding sample manifests, %w", err)
		}
		for _, obj := range objects {
			err := s.Client.Create(ctx, obj)
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("applying sample %s %s, %w", obj.GetKind(), obj.GetName(), err)
			}
			name := obj.GetName()
			if ns := obj.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			fmt.Fprintf(s.out, "Applied %s %s\n", obj.GetKind(), name)
		}
	}
	return nil
}

// show prints the Joiner objects with the columns kubectl would show.
func (s *Stack) show(ctx context.Context) error {
	var nodeClasses awsv1.EC2NodeClassList
	var nodePools v1.NodePoolList
	var nodeClaims v1.NodeClaimList
	for _, list := range []client.ObjectList{&nodeClasses, &nodePools, &nodeClaims} {
		if err := s.Client.List(ctx, list); err != nil {
			return fmt.Errorf("listing %T, %w", list, err)
		}
	}
	w := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nEC2NODECLASS\tREADY\tROLE")
	for _, nc := range nodeClasses.Items {
		fmt.Fprintf(w, "%s\t%s\t%s\n", nc.Name, readyStatus(nc.Status.Conditions), nc.Spec.Role)
	}
	fmt.Fprintln(w, "\nNODEPOOL\tNODECLASS\tEXPIRE AFTER\tCONSOLIDATION")
	for _, np := range nodePools.Items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s after %s\n", np.Name, np.Spec.Template.Spec.NodeClassRef.Name,
			np.Spec.Template.Spec.ExpireAfter, np.Spec.Disruption.ConsolidationPolicy, np.Spec.Disruption.ConsolidateAfter)
	}
	fmt.Fprintf(w, "\nNODECLAIMS\t%d\n", len(nodeClaims.Items))
	return w.Flush()
}

func readyStatus(conditions []metav1.Condition) string {
	if c := meta.FindStatusCondition(conditions, v1.ConditionTypeReady); c != nil {
		return string(c.Status)
	}
	return "Unknown"
}
