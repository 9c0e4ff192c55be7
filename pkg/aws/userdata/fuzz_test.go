package userdata

import (
	"strings"
	"testing"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// FuzzParseMIME reads arbitrary userData as MIME: it never panics, and whatever parses writes
// back to a document that parses to the same parts.
func FuzzParseMIME(f *testing.F) {
	f.Add(s3UserData)
	f.Add("MIME-Version: 1.0\nContent-Type: text/x-shellscript\n\necho hi\n")
	f.Add("Content-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/x-shellscript\n\n#!/bin/bash\n--b--\n")
	f.Add("Content-Type: multipart/mixed\n\n")
	f.Add("Content-Type: multipart/mixed; boundary=\"--\"\n\n----\n\n------\n")
	f.Fuzz(func(t *testing.T, userData string) {
		parts, err := parseMIME(userData)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, p := range parts {
			_ = p.mediaType()
		}
		if len(parts) == 0 || !mimeRoundTrips(parts) {
			return
		}
		again, err := parseMIME(writeMIME(parts))
		if err != nil {
			t.Fatalf("written MIME does not parse: %v\n%q", err, writeMIME(parts))
		}
		if len(again) != len(parts) {
			t.Fatalf("written MIME has %d parts, want %d:\n%q", len(again), len(parts), writeMIME(parts))
		}
		for i := range parts {
			if again[i].body != parts[i].body {
				t.Fatalf("part %d body %q, want %q", i, again[i].body, parts[i].body)
			}
		}
	})
}

// mimeRoundTrips reports whether parts can be written back verbatim: header values on one line
// and bodies that end at a line end (multipart strips the line end before a boundary).
func mimeRoundTrips(parts []part) bool {
	for _, p := range parts {
		for k, vs := range p.header {
			for _, v := range vs {
				if strings.ContainsAny(k+v, "\r\n") {
					return false
				}
			}
		}
		if strings.Contains(p.body, "\r") {
			return false
		}
	}
	return true
}

// FuzzRenderAL2023 merges arbitrary operator userData into Joiner's nodeadm NodeConfig: it is
// refused with a wrapped rendering error, or renders a document whose nodeadm-effective taints
// carry the required karpenter.sh/unregistered taint whichever way nodeadm merges.
func FuzzRenderAL2023(f *testing.F) {
	f.Add(s3UserData)
	f.Add("")
	f.Add("#!/bin/bash\necho hi\n")
	f.Add("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints: [{key: a, effect: NoSchedule}]\n")
	f.Add("MIME-Version: 1.0\nContent-Type: application/node.eks.aws\n\nkind: NodeConfig\nspec: 3\n")
	f.Add("MIME-Version: 1.0\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: 3\n")
	f.Add("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: --register-with-taints=a=b:NoSchedule\n")
	f.Add("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: [--register-with-taints=, 7]\n--//--\n")
	f.Fuzz(func(t *testing.T, userData string) {
		res, err := Render(baseOptions(awsv1.AMIFamilyAL2023, userData))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "rendering userdata, ") {
				t.Fatalf("error not wrapped: %v", err)
			}
			return
		}
		if !onlyNodeConfigs(t, res.UserData) {
			return // nodeadm decodes only NodeConfigs; the test's merge model covers nothing else
		}
		for _, reverse := range []bool{false, true} {
			for _, appendFlags := range []bool{false, true} {
				got := nodeadmEffective(t, res.UserData, reverse, appendFlags)
				found := false
				for _, taint := range got.Taints {
					found = found || taint == "karpenter.sh/unregistered:NoExecute"
				}
				if !found {
					t.Fatalf("reverse=%v append=%v: effective taints %v lack karpenter.sh/unregistered:NoExecute\n%s", reverse, appendFlags, got.Taints, res.UserData)
				}
			}
		}
		if _, err := ReadRegistration(awsv1.AMIFamilyAL2023, res.UserData); err != nil {
			t.Fatalf("rendered userData does not read back: %v\n%s", err, res.UserData)
		}
	})
}

// onlyNodeConfigs reports whether every document in the node.eks.aws parts of userData is a
// NodeConfig.
func onlyNodeConfigs(t *testing.T, userData string) bool {
	parts, err := parseMIME(userData)
	if err != nil {
		t.Fatalf("rendered userData does not parse: %v\n%s", err, userData)
	}
	for _, p := range parts {
		if p.mediaType() != contentTypeNodeConfig {
			continue
		}
		docs, err := yamlDocuments(p.body)
		if err != nil {
			t.Fatalf("rendered NodeConfig part does not parse: %v\n%s", err, userData)
		}
		for _, d := range docs {
			if !isNodeConfig(d) {
				return false
			}
		}
	}
	return true
}

// FuzzReadRegistration reads arbitrary userData for every family: it never panics, and every
// rejection is an error with a message.
func FuzzReadRegistration(f *testing.F) {
	f.Add(awsv1.AMIFamilyAL2023, s3UserData)
	f.Add(awsv1.AMIFamilyAL2, s2Script)
	f.Add(awsv1.AMIFamilyBottlerocket, bottlerocketOperatorTOML)
	f.Add(awsv1.AMIFamilyCustom, "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=a=b:NoSchedule'\n")
	f.Add(awsv1.AMIFamilyCustom, "[settings.kubernetes]\nnode-taints = 1\n")
	f.Fuzz(func(t *testing.T, family, userData string) {
		reg, err := ReadRegistration(family, userData)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		_ = reg.String()
		_ = CheckCustom(userData)
	})
}

// TestRenderAL2023RejectsMisshapenNodeConfig: a NodeConfig nodeadm cannot decode is refused with
// an error naming the field, rather than merged with the operator's settings dropped.
func TestRenderAL2023RejectsMisshapenNodeConfig(t *testing.T) {
	const head = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
	for _, tc := range []struct{ spec, want string }{
		{"spec: 3\n", "NodeConfig spec is the number 3, want a mapping"},
		{"spec:\n  kubelet: [a]\n", "NodeConfig spec.kubelet is a list, want a mapping"},
		{"spec:\n  cluster: x\n", `NodeConfig spec.cluster is the string "x", want a mapping`},
		{"spec:\n  kubelet:\n    config: 1.5\n", "NodeConfig spec.kubelet.config is the number 1.5, want a mapping"},
		{"spec:\n  kubelet:\n    flags: --v=2\n", `NodeConfig spec.kubelet.flags is the string "--v=2", want a list`},
		{"spec:\n  kubelet:\n    flags: [--v=2, {a: b}]\n", "NodeConfig spec.kubelet.flags[1] is a mapping, want a string"},
	} {
		_, err := Render(baseOptions(awsv1.AMIFamilyAL2023, head+tc.spec))
		if err == nil || !strings.HasPrefix(err.Error(), "rendering userdata, ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want a rendering error containing %q", tc.spec, err, tc.want)
		}
	}
}
