package chartrbac

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/manifest"
)

// rbacKinds are the kinds Apply creates from a rendered chart.
var rbacKinds = []string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}

// Render runs `helm template` of chartDir as release name in namespace with the --set values and
// returns its objects (CRDs left out: the caller's API server has them).
func Render(ctx context.Context, helm, chartDir, name, namespace string, set ...string) ([]*unstructured.Unstructured, error) {
	args := []string{"template", name, chartDir, "--namespace", namespace, "--kube-version", "1.33.0"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(ctx, helm, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("rendering %s with helm, %w: %s", chartDir, err, strings.TrimSpace(stderr.String()))
	}
	docs, err := manifest.DecodeBytes(out)
	if err != nil {
		return nil, fmt.Errorf("decoding the rendered chart, %w", err)
	}
	return docs, nil
}

// Apply creates (server-side apply) the ServiceAccount, Roles, ClusterRoles and their bindings
// of the rendered chart, and returns the ServiceAccount's namespace and name.
func Apply(ctx context.Context, c client.Client, docs []*unstructured.Unstructured) (namespace, name string, err error) {
	for _, d := range docs {
		if !slices.Contains(rbacKinds, d.GetKind()) {
			continue
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(d), client.FieldOwner("chartrbac"), client.ForceOwnership); err != nil {
			return "", "", fmt.Errorf("applying %s %s, %w", d.GetKind(), d.GetName(), err)
		}
		if d.GetKind() == "ServiceAccount" {
			namespace, name = d.GetNamespace(), d.GetName()
		}
	}
	if name == "" {
		return "", "", errors.New("the rendered chart has no ServiceAccount: render it with serviceAccount.create=true")
	}
	return namespace, name, nil
}

// Config returns a copy of admin (an administrator's config of the same API server) that
// authenticates as the ServiceAccount with a token valid for ttl: the TLS trust of admin, no
// client certificate.
func Config(ctx context.Context, admin *rest.Config, namespace, name string, ttl time.Duration) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	seconds := int64(ttl / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token of ServiceAccount %s/%s, %w", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// WriteKubeconfig writes a kubeconfig for cfg (server, CA and bearer token) to path.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["joiner"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["joiner"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["joiner"] = &clientcmdapi.Context{Cluster: "joiner", AuthInfo: "joiner"}
	kc.CurrentContext = "joiner"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s, %w", path, err)
	}
	return nil
}
