package userdata

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

const (
	endpoint = "https://ABCDEF0123456789.gr7.us-west-2.eks.amazonaws.com"
	// The taint every Joiner node must register with, and its flag.
	unregistered = "karpenter.sh/unregistered:NoExecute"
	taintFlag    = "--register-with-taints=" + unregistered
)

var caB64 = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIC-demo\n-----END CERTIFICATE-----\n"))

func cluster() boot.Cluster {
	return boot.Cluster{Name: "demo", Endpoint: endpoint, CertificateAuthority: caB64, ServiceCIDR: "10.100.0.0/16", KubernetesVersion: "1.33"}
}

func instance(family, userData string) boot.Instance {
	return boot.Instance{
		ID: "i-0123456789abcdef0", Region: "us-west-2", Zone: "us-west-2a",
		PrivateDNSName: "ip-10-0-1-23.us-west-2.compute.internal", PrivateIP: "10.0.1.23", VPCCIDR: "10.0.0.0/16",
		InstanceType: "m7i.large", Architecture: "amd64", AMIFamily: family, UserData: []byte(userData),
		VCPU: 2, MemoryMiB: 8192, ENIMaxPods: 29,
	}
}

// al2 is a bash script that sets CA and URL, then body.
func al2(body string) string {
	return "#!/bin/bash\nset -ex\nCA=" + caB64 + "\nURL=" + endpoint + "\n" + body + "\n"
}

// bootstrap is the usual bootstrap.sh call, followed by more arguments.
func bootstrap(more string) string {
	return `/etc/eks/bootstrap.sh demo --b64-cluster-ca "$CA" --apiserver-endpoint "$URL"` + more
}

// mime joins parts (content type, body) into a MIME multi-part document.
func mime(parts ...[2]string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n")
	for _, p := range parts {
		b.WriteString("--//\nContent-Type: " + p[0] + "\n\n" + p[1] + "\n")
	}
	b.WriteString("--//--\n")
	return b.String()
}

func shellPart(body string) [2]string {
	return [2]string{"text/x-shellscript; charset=\"us-ascii\"", body}
}

// nodeConfig is a NodeConfig document with the cluster section and the given kubelet section.
func nodeConfig(kubelet string) string {
	return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: demo\n    apiServerEndpoint: " + endpoint +
		"\n    certificateAuthority: " + caB64 + "\n    cidr: 10.100.0.0/16\n" + kubelet
}

// userNodeConfig is a NodeConfig with only a kubelet section, as operators write them.
func userNodeConfig(kubelet string) string {
	return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n" + kubelet
}

func nodeConfigPart(doc string) [2]string { return [2]string{"application/node.eks.aws", doc} }

// bottlerocket is Bottlerocket settings with the cluster, then more.
func bottlerocket(more string) string {
	return "[settings.kubernetes]\ncluster-name = \"demo\"\napi-server = \"" + endpoint + "\"\ncluster-certificate = \"" + caB64 + "\"\n" + more
}

// agreement is one row: a userData and what the node registers with.
type agreement struct {
	name     string
	family   string
	userData string
	// starts is whether a kubelet starts at all.
	starts bool
	taints []string          // key[=value]:Effect
	labels map[string]string // nil: none
	flags  []string          // the kubelet's command line from the userData
}

func TestAgreement(t *testing.T) {
	rows := agreementTable()
	if len(rows) < 40 {
		t.Fatalf("the agreement table has %d rows, want at least 40", len(rows))
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			want := expected(row)
			product, err := userdata.ReadRegistration(row.family, row.userData)
			if err != nil {
				t.Fatalf("product: ReadRegistration() error = %v", err)
			}
			if product.Unknown != "" {
				t.Fatalf("product: the registration is unknown (%s); every row of the table is statically knowable", product.Unknown)
			}
			emulated := emulate(t, row)
			if diff := cmp.Diff(want, emulated, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("emulator (awsemu/boot) differs from the table (-table +emulator):\n%s", diff)
			}
			if diff := cmp.Diff(want, fromProduct(product), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("product (pkg/aws/userdata) differs from the table (-table +product):\n%s\nproduct read: %s", diff, product)
			}
		})
	}
}

// registered is what the table compares: taints as sorted key[=value]:Effect strings.
type registered struct {
	Starts bool
	Taints []string
	Labels map[string]string
	Flags  []string
}

func expected(row agreement) registered {
	taints := slices.Clone(row.taints)
	slices.Sort(taints)
	return registered{Starts: row.starts, Taints: taints, Labels: row.labels, Flags: row.flags}
}

func bootInterpret(row agreement) (*boot.KubeletRegistration, []string, error) {
	return boot.Interpret(instance(row.family, row.userData), cluster())
}

func emulate(t *testing.T, row agreement) registered {
	t.Helper()
	reg, console, err := bootInterpret(row)
	// No kubelet starts (or none stays up to register) when the script never calls bootstrap.sh,
	// fails (set -e, exit) before it does, or the kubelet refuses an invalid taint; the emulator
	// tells these from other failures only in its message.
	if be := (*boot.BootError)(nil); errors.As(err, &be) &&
		(be.Reason == boot.ReasonNoBootstrap ||
			be.Reason == boot.ReasonBootstrapFailed && strings.Contains(be.Message, "before it started a kubelet") ||
			be.Reason == boot.ReasonKubeletFailed && strings.Contains(be.Message, "invalid taint")) {
		return registered{}
	}
	if err != nil {
		t.Fatalf("emulator: Interpret() error = %v\nconsole:\n%s", err, strings.Join(console, "\n"))
	}
	return registered{Starts: true, Taints: taintStrings(reg.Taints), Labels: reg.Labels, Flags: reg.KubeletArgs}
}

func fromProduct(reg *userdata.Registration) registered {
	if !reg.Starts {
		return registered{}
	}
	return registered{Starts: true, Taints: taintStrings(reg.Taints), Labels: reg.Labels, Flags: reg.KubeletFlags}
}

func taintStrings(taints []corev1.Taint) []string {
	var out []string
	for _, t := range taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+string(t.Effect))
	}
	slices.Sort(out)
	return out
}

// labels builds a label map from key=value pairs.
func labels(pairs ...string) map[string]string {
	m := map[string]string{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return m
}
