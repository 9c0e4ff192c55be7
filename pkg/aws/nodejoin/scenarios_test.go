package nodejoin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/joinerhq/joiner/pkg/manifest"
)

// TestScenarios runs Check offline, as `joiner doctor -f` would, on the field scenarios'
// manifests (test/scenarios): the account and controller role as the IRSA annotation would give
// them, aws-auth when the manifests carry it, no authentication mode, no access entries, no
// resolved AMIs. It names S1's mistake and S2's line, advises on S3's Cilium taint, and calls
// nothing an error in S3, S4 (IAM is live only) and S5. Warnings (the role mapping, which
// offline Joiner cannot verify) are left out.
func TestScenarios(t *testing.T) {
	cases := []struct {
		file string
		want []string // "Severity Reason" of the Error and Advice findings
	}{
		{"s1-unmapped-node-role.yaml", []string{"Error AWSAuthMapsControllerRole"}},
		{"s2-custom-ami-taint-args.yaml", []string{"Error BootstrapOptionIgnored", "Advice UserDataCallsBootstrap"}},
		{"s3-al2023-userdata-taint-override.yaml", []string{"Advice UserDataClusterDNS", "Advice AgentTaintNotInStartupTaints"}},
		{"s4-runinstances-auth-check.yaml", nil},
		{"s5-arm64-nodepool.yaml", nil},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "scenarios", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			docs, err := manifest.DecodeBytes(raw)
			if err != nil {
				t.Fatal(err)
			}
			objects, err := manifest.ObjectsFrom(docs)
			if err != nil {
				t.Fatal(err)
			}
			var awsAuth *AWSAuth
			for _, doc := range objects.Ignored {
				if doc.GetKind() == "ConfigMap" && doc.GetNamespace() == "kube-system" && doc.GetName() == "aws-auth" {
					mapRoles, _, _ := unstructured.NestedString(doc.Object, "data", "mapRoles")
					awsAuth = &AWSAuth{Found: true, MapRoles: mapRoles}
				}
			}
			var got []string
			for _, nc := range objects.NodeClasses {
				in := Inputs{NodeClass: nc, Cluster: testCluster, AccountID: "111122223333",
					ControllerRoleARN: "arn:aws:iam::111122223333:role/KarpenterControllerRole-demo", AWSAuth: awsAuth}
				for _, np := range objects.NodePools {
					if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == nc.Name {
						in.NodePools = append(in.NodePools, np)
					}
				}
				for _, f := range Check(in) {
					if f.Severity != SeverityWarning {
						got = append(got, string(f.Severity)+" "+f.Reason)
					}
					t.Log(f)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
