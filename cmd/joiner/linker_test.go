package main

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLinkerCanDropUnusedMethods links joiner as the image ships it (-tags nolocalstack: the
// local stack's envtest renders templates, so `joiner dev` stays out of the controller's binary)
// and fails when the linker marks a function
// <ReflectMethod>: one that calls a method by a name known only at run time
// (reflect.Value.MethodByName, text/template's and html/template's field evaluation). Once one is
// reachable, the linker keeps every exported method of every type that reaches an interface, the
// whole AWS SDK's included: the binary doubles (about 131 MB instead of 66 MB) and so does the
// controller's file-backed memory. The failure names the chain of calls from the program's entry
// to each such function, from the linker's -dumpdep output. The link reuses the build cache.
func TestLinkerCanDropUnusedMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("links the joiner binary")
	}
	// go test puts its own toolchain's bin first on PATH.
	cmd := exec.CommandContext(t.Context(), "go", "build", "-tags", "nolocalstack", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "joiner"), ".")
	dump, err := cmd.StderrPipe() // where go build relays the linker's -dumpdep lines
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("linking joiner, %v", err)
	}
	deps, readErr := readDeps(dump)
	_, _ = io.Copy(io.Discard, dump) // the rest, if reading stopped early: the linker must not block
	if err := cmd.Wait(); err != nil {
		t.Fatalf("linking joiner, %v\n%s", err, strings.Join(deps.unparsed, "\n"))
	}
	if readErr != nil {
		t.Fatalf("reading the linker's dependencies, %v", readErr)
	}
	// A change of the dump's format must not pass as a clean binary.
	if _, ok := deps.markedBy["main.main"]; !ok {
		t.Fatalf("the linker's -dumpdep output has no edge to main.main: its format changed; %d edges read, unparsed lines:\n%s", len(deps.markedBy), strings.Join(deps.unparsed, "\n"))
	}
	if len(deps.reflectMethods) == 0 {
		return
	}
	// The first such function marked is the cause: once the linker reaches one, it keeps every
	// exported method, and with them other methods that call methods by name (reflect.Value's).
	// Those are listed by name; fix the first and run again.
	first := deps.reflectMethods[0]
	t.Errorf("the linker keeps every exported method (the binary doubles): %s calls methods by name, reached by\n  %s\nthen kept with it:\n  %s",
		first, strings.Join(deps.chain(first), "\n  -> "), strings.Join(deps.reflectMethods[1:], "\n  "))
}

// linkerDeps is what the linker's -dumpdep output says: for each symbol, the one whose reference
// first marked it reachable ("_" for the roots), and the functions marked <ReflectMethod>.
type linkerDeps struct {
	markedBy map[string]string
	// reflectMethods are in the order the linker marked them.
	reflectMethods []string
	// unparsed are the lines that are not an edge (go build's own messages), at most 20.
	unparsed []string
}

// readDeps reads -dumpdep lines, "from -> to", each symbol being a "to" once: when it is first
// marked. A function that calls methods by name has " <ReflectMethod>" after its name, on either
// side.
func readDeps(r io.Reader) (*linkerDeps, error) {
	const reflectMethod = " <ReflectMethod>"
	d := &linkerDeps{markedBy: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			if len(d.unparsed) < 20 {
				d.unparsed = append(d.unparsed, sc.Text())
			}
			continue
		}
		for _, sym := range []*string{&from, &to} {
			if name, found := strings.CutSuffix(*sym, reflectMethod); found {
				*sym = name
				if !slices.Contains(d.reflectMethods, name) {
					d.reflectMethods = append(d.reflectMethods, name)
				}
			}
		}
		if _, seen := d.markedBy[to]; !seen {
			d.markedBy[to] = from
		}
	}
	return d, sc.Err()
}

// chain is the symbols from a root of the program to fn, each marked by the one before it.
func (d *linkerDeps) chain(fn string) []string {
	out := []string{fn}
	for sym := fn; len(out) <= len(d.markedBy); {
		from, ok := d.markedBy[sym]
		if !ok || from == "_" {
			break
		}
		out = append(out, from)
		sym = from
	}
	slices.Reverse(out)
	return out
}

func TestReadDeps(t *testing.T) {
	dump := `# github.com/joinerhq/joiner/cmd/joiner
_ -> main.main
main.main -> main.serve
main.serve -> text/template.(*Template).Execute
main.other -> text/template.(*Template).Execute
text/template.(*Template).Execute -> text/template.(*state).evalField <ReflectMethod>
text/template.(*state).evalField <ReflectMethod> -> reflect.Value.MethodByName
text/template.(*state).evalField <ReflectMethod> -> fmt.Sprintf
`
	d, err := readDeps(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"text/template.(*state).evalField"}; !slices.Equal(d.reflectMethods, want) {
		t.Errorf("reflect methods = %q, want %q", d.reflectMethods, want)
	}
	want := []string{"main.main", "main.serve", "text/template.(*Template).Execute", "text/template.(*state).evalField"}
	if got := d.chain("text/template.(*state).evalField"); !slices.Equal(got, want) {
		t.Errorf("chain = %q, want %q (the first edge to each symbol marks it)", got, want)
	}
	if want := []string{"# github.com/joinerhq/joiner/cmd/joiner"}; !slices.Equal(d.unparsed, want) {
		t.Errorf("unparsed = %q, want %q", d.unparsed, want)
	}
}
