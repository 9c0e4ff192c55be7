package architecture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/joinerhq/joiner"

// pkg is what the rules read of one package of the module (`go list -json`, without tests).
type pkg struct {
	// Path is the import path relative to the module: pkg/aws/sdk.
	Path string
	// Imports are its direct imports and Deps every package it depends on, both as full import
	// paths.
	Imports, Deps []string
}

// rule forbids the packages From matches to import (Direct) or depend on at all (!Direct) the
// packages Forbidden matches, except those Allowed matches. Patterns are paths relative to the
// module ("pkg/...": pkg and everything under it) or full import paths of other modules.
type rule struct {
	From, Forbidden, Allowed []string
	// Except are packages From matches that the rule does not hold for, each with its reason in
	// the comment where it is listed.
	Except []string
	// Exceptions are single imports the rule lets through, as "FROM -> IMPORT".
	Exceptions []string
	Direct     bool
	// Why is the reason, from docs/design/architecture.md.
	Why string
}

// rules are the "must not" column of docs/design/architecture.md that an import graph can check.
var rules = []rule{
	{From: []string{"pkg/...", "cmd/..."}, Forbidden: []string{"internal/..."}, Direct: true,
		Why: "internal/ holds test harnesses; product code must not import them"},
	{From: []string{"pkg/...", "cmd/joiner"}, Forbidden: []string{"awsemu/..."},
		Allowed: []string{"awsemu/world", "awsemu/inspect"}, Exceptions: []string{"pkg/localstack -> awsemu/authz"}, Direct: true,
		Why: "the product talks to the emulator over HTTP only; world files and the inspection endpoint's types are the emulator's published formats, and the local stack alone hands out its administrator key"},
	{From: []string{"pkg/scheduling/..."}, Forbidden: []string{"k8s.io/client-go/...", "sigs.k8s.io/controller-runtime/...", "github.com/aws/...", "pkg/aws/...", "pkg/controllers/..."},
		Why: "the scheduling simulation is a pure library: no client, no cloud"},
	{From: []string{"pkg/apis/..."}, Forbidden: []string{"sigs.k8s.io/controller-runtime/pkg/client", "github.com/aws/...", "pkg/aws/...", "pkg/controllers/..."},
		Why: "the API types talk to no cluster and no cloud"},
	{From: []string{"pkg/cloudprovider/..."}, Forbidden: []string{"github.com/aws/...", "pkg/aws/..."},
		Why: "the cloud seam knows no AWS"},
	{From: []string{"pkg/aws/userdata"}, Forbidden: []string{"github.com/aws/...", "pkg/aws/ami", "pkg/aws/instancetype"},
		Why: "userData rendering calls no AWS and chooses no AMIs or instance types"},
	{From: []string{"pkg/aws/..."}, Forbidden: []string{"pkg/controllers/..."}, Direct: true,
		Why: "the AWS provider sits below the controllers; nothing calls backwards"},
	// awsemu/emutest is the test kit for the product's tests: the clients it builds are the
	// product's (pkg/aws/sdk), and the emulator's own logic does not depend on it.
	// pkg/aws/apilimits is AWS's published request limits, data and a token bucket, as the
	// catalogue is AWS's instance types: the emulator meters with the numbers the product paces by.
	{From: []string{"awsemu/..."}, Except: []string{"awsemu/emutest"}, Forbidden: []string{"pkg/controllers/...", "pkg/aws/...", "pkg/operator"},
		Allowed: []string{"pkg/aws/apilimits"}, Direct: true,
		Why: "the emulator stands for AWS: it must not share the product's logic, or a bug in it would agree with itself"},
	{From: []string{"pkg/aws/apilimits"}, Forbidden: []string{"github.com/aws/...", "pkg/aws/...", "awsemu/..."},
		Why: "AWS's published limits are data the emulator shares: they call nothing and know no client"},
}

// match reports whether the import path p (relative to the module when it is in it) matches
// pattern.
func match(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

func matchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pattern string) bool { return match(pattern, p) })
}

// relative returns p relative to the module, or p itself for other modules.
func relative(p string) string {
	if p == module {
		return "."
	}
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r
	}
	return p
}

// violations checks the packages against the rules and returns one line per forbidden import.
func violations(pkgs []pkg, rules []rule) []string {
	var out []string
	for _, p := range pkgs {
		for _, r := range rules {
			if !matchAny(r.From, p.Path) || matchAny(r.Except, p.Path) {
				continue
			}
			imports := p.Deps
			if r.Direct {
				imports = p.Imports
			}
			for _, imp := range imports {
				rel := relative(imp)
				if matchAny(r.Forbidden, rel) && !matchAny(r.Allowed, rel) && !slices.Contains(r.Exceptions, p.Path+" -> "+rel) {
					out = append(out, fmt.Sprintf("%s imports %s: %s", p.Path, rel, r.Why))
				}
			}
		}
	}
	return out
}

// moduleRoot is the directory of go.mod, two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// listPackages runs `go list -json ./...` in the module root.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var raw struct {
			ImportPath    string
			Imports, Deps []string
		}
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list: %v", err)
		}
		pkgs = append(pkgs, pkg{Path: relative(raw.ImportPath), Imports: raw.Imports, Deps: raw.Deps})
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

func TestImportRules(t *testing.T) {
	for _, v := range violations(listPackages(t), rules) {
		t.Error(v)
	}
}

// TestImportRulesCatchViolations: the checker finds a forbidden direct import, a forbidden
// dependency through another package, and lets an allowed one, an excepted package's and an
// unrelated one pass.
func TestImportRulesCatchViolations(t *testing.T) {
	pkgs := []pkg{
		{Path: "pkg/localstack", Imports: []string{module + "/internal/testenv", module + "/awsemu/world"}},
		{Path: "pkg/scheduling/check", Deps: []string{"k8s.io/apimachinery/pkg/api/resource", "k8s.io/client-go/rest"}},
		{Path: "pkg/explain", Imports: []string{module + "/pkg/scheduling"}},
		{Path: "awsemu/ec2", Imports: []string{module + "/pkg/aws/instance", module + "/pkg/catalog"}},
		{Path: "awsemu/emutest", Imports: []string{module + "/pkg/aws/sdk"}},
	}
	got := violations(pkgs, rules)
	want := []string{
		"pkg/localstack imports internal/testenv: " + rules[0].Why,
		"pkg/scheduling/check imports k8s.io/client-go/rest: " + rules[2].Why,
		"awsemu/ec2 imports pkg/aws/instance: " + rules[7].Why,
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}

var tableEntry = regexp.MustCompile("^\\| `([^`]+)` \\|")

// documented returns the package column of the Packages table of docs/design/architecture.md.
func documented(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(moduleRoot(t), "docs", "design", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var entries []string
	inPackages := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "## ") {
			inPackages = line == "## Packages"
			continue
		}
		if m := tableEntry.FindStringSubmatch(line); inPackages && m != nil {
			entries = append(entries, m[1])
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestArchitectureListsEveryPackage: every package of the module has a row in the architecture
// table (its own, or a `dir/...` row over it), and every row names packages that exist, except
// the rows of directories without Go code (config/samples).
func TestArchitectureListsEveryPackage(t *testing.T) {
	entries := documented(t)
	pkgs := listPackages(t)
	for _, p := range pkgs {
		if !matchAny(entries, p.Path) {
			t.Errorf("%s is not in docs/design/architecture.md's Packages table: add a row saying what it owns and must not do", p.Path)
		}
	}
	for _, e := range entries {
		if slices.ContainsFunc(pkgs, func(p pkg) bool { return match(e, p.Path) }) {
			continue
		}
		if _, err := os.Stat(filepath.Join(moduleRoot(t), strings.TrimSuffix(e, "/..."))); err != nil {
			t.Errorf("docs/design/architecture.md lists %s, which does not exist: remove or rename its row", e)
		}
	}
}

// TestImageCarriesNoFake: the controller image's build (-tags nolocalstack, `make image`) links
// neither the fake cloud provider nor the local stack; they are for tests and `joiner dev`.
func TestImageCarriesNoFake(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "go", "list", "-tags", "nolocalstack", "-deps", "./cmd/joiner")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	for _, forbidden := range []string{module + "/pkg/cloudprovider/fake", module + "/pkg/localstack", "sigs.k8s.io/controller-runtime/pkg/envtest"} {
		if slices.Contains(strings.Fields(string(out)), forbidden) {
			t.Errorf("the image's build (-tags nolocalstack) links %s", forbidden)
		}
	}
}
