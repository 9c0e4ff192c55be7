package iampolicy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sdkCalls returns the AWS operations the non-test Go files under the roots call: every
// <service>.<Operation>Input of an aws-sdk-go-v2 service package they name (a request built or
// an API interface declared), as "service:Operation". pkg/localstack and cmd/joiner/dev.go run
// the local stack, not the controller, and are not read; nor is pkg/aws/sdk, which meters calls.
func sdkCalls(t *testing.T, roots ...string) []string {
	t.Helper()
	found := map[string]bool{}
	fset := token.NewFileSet()
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// pkg/worldcapture's reads are the capturing identity's, not the controller's: Capture
			// grants them (worldcapture.Actions, checked against the emulator there). pkg/aws/sdk
			// calls nothing: it names inputs only to meter whatever call it is given (pacing).
			if d.IsDir() && (strings.HasSuffix(path, filepath.Join("pkg", "localstack")) || strings.HasSuffix(path, filepath.Join("pkg", "aws", "iampolicy")) ||
				strings.HasSuffix(path, filepath.Join("aws", "sdk")) || filepath.Base(path) == "worldcapture") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Base(path) == "dev.go" {
				return nil
			}
			calls, err := fileCalls(fset, path)
			for _, c := range calls {
				found[c] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	out := make([]string, 0, len(found))
	for k := range found {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// fileCalls returns the "service:Operation" of every <service>.<Operation>Input one file names.
func fileCalls(fset *token.FileSet, path string) ([]string, error) {
	const sdk = "github.com/aws/aws-sdk-go-v2/service/"
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	services := map[string]string{} // local name -> service
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		svc, ok := strings.CutPrefix(p, sdk)
		if !ok || strings.Contains(svc, "/") {
			continue
		}
		local := svc
		if imp.Name != nil {
			local = imp.Name.Name
		}
		services[local] = svc
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && services[x.Name] != "" {
			if op, ok := strings.CutSuffix(sel.Sel.Name, "Input"); ok && op != "" {
				out = append(out, services[x.Name]+":"+op)
			}
		}
		return true
	})
	return out, nil
}

// TestCallsFollowTheCode fails when the controller's code calls an AWS operation that Calls does
// not list (the policy would deny it), or when Calls lists one nothing calls (the policy would
// grant more than is used).
func TestCallsFollowTheCode(t *testing.T) {
	got := sdkCalls(t, "../..", "../../../cmd/joiner")
	if len(got) < 10 {
		t.Fatalf("found only %v: is the source scan reading the right directories?", got)
	}
	want := Calls(false)
	if slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "sqs:") }) {
		want = Calls(true)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Calls (-) differ from the SDK operations the code calls (+): add each new call to callActions with the IAM actions AWS checks for it, remove what is no longer called\n%s", diff)
	}
}

// TestPolicyGrantsExactlyTheCalls checks the document against Calls: every action some call
// needs is granted, and nothing else.
func TestPolicyGrantsExactlyTheCalls(t *testing.T) {
	for _, queue := range []string{"", "demo-interruptions"} {
		o := validOptions()
		o.InterruptionQueue = queue
		var want []string
		for _, c := range Calls(queue != "") {
			want = append(want, Actions(c)...)
		}
		slices.Sort(want)
		want = slices.Compact(want)
		if diff := cmp.Diff(want, New(o).Actions()); diff != "" {
			t.Errorf("queue %q: actions granted (+) differ from those the calls need (-)\n%s", queue, diff)
		}
	}
}
