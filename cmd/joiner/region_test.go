package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/operator"
)

// TestResolveRegion: the flag, then AWS_REGION, AWS_DEFAULT_REGION and the shared config's
// profile, then the cluster (the named Node or NodeClaim, the NodeClaims, the Nodes) give the
// region, each reported as its source; a cluster in several regions is an error naming them,
// and nothing anywhere is no region without an error.
func TestResolveRegion(t *testing.T) {
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	node := func(name, region string) client.Object {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if region != "" {
			n.Labels = map[string]string{corev1.LabelTopologyRegion: region}
		}
		return n
	}
	claim := func(name, region string) client.Object {
		c := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if region != "" {
			c.Labels = map[string]string{corev1.LabelTopologyRegion: region}
		}
		return c
	}
	profile := func(region string) func(context.Context) (string, string, error) {
		return func(context.Context) (string, string, error) { return region, "dev", nil }
	}
	cluster := []client.Object{node("n1", "us-west-2"), claim("c1", "us-west-2")}
	tests := []struct {
		name        string
		flag        string
		env         map[string]string
		profile     func(context.Context) (string, string, error)
		objects     []client.Object
		noCluster   bool
		node        string
		want        string
		wantSource  string
		wantErr     string
		wantErrToo  string
		wantNothing bool
	}{
		{name: "the flag first", flag: "eu-west-1", env: map[string]string{"AWS_REGION": "us-east-1"}, profile: profile("ap-south-1"), objects: cluster, node: "n1",
			want: "eu-west-1", wantSource: "--aws-region"},
		{name: "AWS_REGION before AWS_DEFAULT_REGION", env: map[string]string{"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-2"}, profile: profile("ap-south-1"), objects: cluster,
			want: "us-east-1", wantSource: "$AWS_REGION"},
		{name: "AWS_DEFAULT_REGION", env: map[string]string{"AWS_DEFAULT_REGION": "us-east-2"}, profile: profile("ap-south-1"), objects: cluster,
			want: "us-east-2", wantSource: "$AWS_DEFAULT_REGION"},
		{name: "the shared config's profile", profile: profile("ap-south-1"), objects: cluster,
			want: "ap-south-1", wantSource: "profile dev of the shared AWS config"},
		{name: "a profile that cannot be read", profile: func(context.Context) (string, string, error) { return "", "", errors.New("no profile nope") },
			objects: cluster, wantErr: "no profile nope"},
		{name: "the named node's label", profile: profile(""), objects: []client.Object{node("n1", "eu-central-1"), claim("c1", "us-west-2")}, node: "n1",
			want: "eu-central-1", wantSource: "node n1's topology.kubernetes.io/region label"},
		{name: "the named NodeClaim's label", objects: []client.Object{node("n1", "us-west-2"), claim("c1", "eu-central-1")}, node: "c1",
			want: "eu-central-1", wantSource: "NodeClaim c1's topology.kubernetes.io/region label"},
		{name: "the NodeClaims when the named node has no label", objects: []client.Object{node("n1", ""), claim("c1", "us-west-2"), claim("c2", "us-west-2")}, node: "n1",
			want: "us-west-2", wantSource: "the topology.kubernetes.io/region label of NodeClaims c1, c2"},
		{name: "the NodeClaims before the nodes", objects: []client.Object{node("n1", "eu-west-1"), claim("c1", "us-west-2")},
			want: "us-west-2", wantSource: "the topology.kubernetes.io/region label of NodeClaims c1"},
		{name: "the nodes without NodeClaims", objects: []client.Object{node("n1", "eu-west-1"), node("n2", ""), claim("c1", "")},
			want: "eu-west-1", wantSource: "the topology.kubernetes.io/region label of nodes n1"},
		{name: "NodeClaims in several regions", objects: []client.Object{claim("c1", "us-west-2"), claim("c2", "eu-west-1"), claim("c3", "us-west-2")},
			wantErr: "several regions", wantErrToo: "eu-west-1 (c2), us-west-2 (c1, c3); pass --aws-region"},
		{name: "no label anywhere", objects: []client.Object{node("n1", ""), claim("c1", "")}, node: "n1", wantNothing: true},
		{name: "no cluster to read", noCluster: true, wantNothing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := regionSources{Flag: tt.flag, FlagName: "--aws-region", Getenv: func(k string) string { return tt.env[k] },
				Profile: tt.profile, Node: tt.node}
			if !tt.noCluster {
				s.Cluster = fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objects...).Build()
			}
			region, source, err := resolveRegion(t.Context(), s)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.wantErrToo) {
					t.Fatalf("resolveRegion() = %q, %q, %v; want an error with %q and %q", region, source, err, tt.wantErr, tt.wantErrToo)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNothing {
				if region != "" || source != "" {
					t.Errorf("resolveRegion() = %q from %q, want none", region, source)
				}
				return
			}
			if region != tt.want || source != tt.wantSource {
				t.Errorf("resolveRegion() = %q from %q, want %q from %q", region, source, tt.want, tt.wantSource)
			}
		})
	}
}

// TestSharedConfigRegion: the region of the profile AWS_PROFILE names in the shared config file,
// and none when the default profile gives none.
func TestSharedConfigRegion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte("[default]\noutput = json\n\n[profile dev]\nregion = eu-west-3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", path)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	for _, tt := range []struct{ profile, want string }{{"dev", "eu-west-3"}, {"", ""}} {
		t.Setenv("AWS_PROFILE", tt.profile)
		region, profile, err := sharedConfigRegion(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		wantProfile := tt.profile
		if wantProfile == "" {
			wantProfile = "default"
		}
		if region != tt.want || profile != wantProfile {
			t.Errorf("AWS_PROFILE=%q: sharedConfigRegion() = %q, %q; want %q, %q", tt.profile, region, profile, tt.want, wantProfile)
		}
	}
}

// noRegionAnywhere leaves no region in the environment or the shared config, and returns a
// kubeconfig whose API server refuses connections: the cluster, the last source, cannot say
// either.
func noRegionAnywhere(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{"AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "no-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "no-credentials")} {
		t.Setenv(k, v)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
