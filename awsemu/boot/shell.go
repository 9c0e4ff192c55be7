package boot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Console line prefixes: the processes whose output a boot shows.
const (
	cloudInit = "cloud-init[2411]: "
	systemd   = "systemd[1]: "
	kubeletP  = "kubelet[3127]: "
	nodeadmP  = "nodeadm[1980]: "
)

// maxSteps bounds the simple commands one boot runs. Every command the node does not model
// succeeds at once, so a loop waiting for one (until curl ...; do sleep 5; done) ends at its
// first turn; a loop that waits for nothing would never end, as it would not on a real
// instance either, and is stopped here instead.
const maxSteps = 100000

// script is one shell script cloud-init runs.
type script struct {
	name string
	body string
}

// shellScripts returns the scripts cloud-init would run from userData: the text/x-shellscript
// parts of a MIME multi-part document, or the whole userData when it starts with "#!".
// Anything else is not run (cloud-init reports an unhandled type), which is not an error.
func shellScripts(userData []byte) ([]script, []string, error) {
	parts, isMIME, err := splitMIME(userData)
	if err != nil {
		return nil, nil, err
	}
	if !isMIME {
		if strings.HasPrefix(string(userData), "#!") {
			return []script{{name: "/var/lib/cloud/instance/scripts/part-001", body: string(userData)}}, nil, nil
		}
		if len(strings.TrimSpace(string(userData))) == 0 {
			return nil, nil, nil
		}
		return nil, []string{cloudInit + "__init__.py[WARNING]: Unhandled non-multipart (text/x-not-multipart) userdata: '" + firstLine(string(userData)) + "...'"}, nil
	}
	var scripts []script
	for i, p := range parts {
		if p.contentType == "text/x-shellscript" {
			scripts = append(scripts, script{name: fmt.Sprintf("/var/lib/cloud/instance/scripts/part-%03d", i+1), body: p.body})
		}
	}
	return scripts, nil, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 40 {
		line = line[:40]
	}
	return line
}

// consoleWriter collects what a script prints, one console line per output line. Writers in
// process substitutions write concurrently with the script.
type consoleWriter struct {
	mu      sync.Mutex
	prefix  string
	lines   []string
	partial []byte
}

func (w *consoleWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := strings.IndexByte(string(w.partial), '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines = append(w.lines, w.prefix+strings.TrimSuffix(string(w.partial[:i]), "\r"))
		w.partial = w.partial[i+1:]
	}
}

// done returns every line, the last one even without its newline.
func (w *consoleWriter) done() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.lines = append(w.lines, w.prefix+string(w.partial))
		w.partial = nil
	}
	return w.lines
}

// shellEnv is the environment cloud-init runs user scripts with.
func shellEnv() []string {
	return []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/bash", "LANG=C.UTF-8",
		"UID=0", "EUID=0", "GID=0",
	}
}

// runScript runs s as cloud-init does (as its own bash process) with mvdan.cc/sh's interpreter:
// every command that is not a shell builtin or function goes to the node's exec handler, every
// file to its in-memory file system. Like bash, it reads and runs one complete command at a
// time, so the commands before a syntax error run. It returns the console lines and the
// script's exit status.
func (n *node) runScript(ctx context.Context, s script) ([]string, int) {
	shebang := firstLine(s.body)
	if !strings.HasPrefix(shebang, "#!") {
		return []string{cloudInit + fmt.Sprintf("util.py[WARNING]: Failed running %s [8]: [Errno 8] Exec format error", s.name)}, 8
	}
	out := &consoleWriter{prefix: cloudInit}
	ctx = context.WithValue(ctx, consoleKey{}, io.Writer(out))
	status := n.runShell(ctx, s.name, s.body, shebangOptions(shebang), nil, nil, out)
	lines := out.done()
	if status != 0 {
		lines = append(lines,
			cloudInit+fmt.Sprintf("util.py[WARNING]: Failed running %s [%d]", s.name, status),
			cloudInit+"cc_scripts_user.py[WARNING]: Failed to run module scripts-user (scripts in /var/lib/cloud/instance/scripts)")
	}
	return lines, status
}

// shebangOptions returns the shell options on a #! line: "#!/bin/bash -xe" gives ["-xe"].
func shebangOptions(shebang string) []string {
	var opts []string
	fields := strings.Fields(strings.TrimPrefix(shebang, "#!"))
	if len(fields) == 0 {
		return nil
	}
	for _, f := range fields[1:] {
		if len(f) > 1 && (f[0] == '-' || f[0] == '+') && !strings.HasPrefix(f, "--") {
			opts = append(opts, f)
		}
	}
	return opts
}

// runShell runs body as a bash process named name with the given options (-e, -x, ...),
// positional parameters params and extra exported variables env, writing its output to out.
// It returns the exit status.
func (n *node) runShell(ctx context.Context, name, body string, opts, params, env []string, out io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ps := &procSubsts{node: n, byPath: map[string]*syntax.ProcSubst{}}
	ctx = context.WithValue(ctx, procSubstKey{}, ps)
	var runner *interp.Runner
	runner, err := interp.New(n.interpOptions(cancel, &runner, append(append(opts, "--"), params...), env, out)...)
	if err != nil {
		fmt.Fprintf(out, "%s: %v\n", name, err)
		return 1
	}
	ps.runner = runner
	status := 0
	stopped := false
	var parseErr error
	// The loop never breaks: mvdan.cc/sh v3.14.1 yields again after a break in some inputs
	// (after a syntax error), which panics ("range function continued iteration"; found by
	// FuzzInterpretAL2, kept as a seed). Once the shell has exited the rest is only parsed, and
	// after a syntax error nothing more runs, as in bash.
	for stmt, err := range syntax.NewParser(syntax.Variant(syntax.LangBash)).StmtsSeq(strings.NewReader(body)) {
		if err != nil {
			parseErr = cmp.Or(parseErr, err)
			continue
		}
		if stopped || parseErr != nil {
			continue
		}
		ps.rewrite(stmt)
		err := runner.Run(ctx, stmt)
		if status := interp.ExitStatus(0); err != nil && !errors.As(err, &status) {
			fmt.Fprintf(out, "%s: %v\n", name, err)
		}
		status = exitStatus(err)
		stopped = runner.Exited() || ctx.Err() != nil
	}
	if se := (syntax.ParseError{}); errors.As(parseErr, &se) && !runner.Exited() && ctx.Err() == nil {
		printSyntaxError(out, name, body, se)
		status = 2
	}
	// The processes the script left in the background (a kubelet started with &) go on after
	// it exits; they have done what matters here once they return.
	waitAll := &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: "wait"}}}}}
	_ = interp.Params("+x")(runner)
	_ = runner.Run(context.WithoutCancel(ctx), waitAll)
	ps.wait()
	if ctx.Err() != nil && status == 0 {
		status = 1
	}
	return status
}

// interpOptions are the interpreter's options for one bash process of the node: cloud-init's
// environment plus env, the node's exec and file handlers, a call handler that stops a script
// past maxSteps (calling cancel) and answers command -v on the node, and the shell parameters
// params (options, "--", positional parameters).
func (n *node) interpOptions(cancel context.CancelFunc, runner **interp.Runner, params, env []string, out io.Writer) []interp.RunnerOption {
	return []interp.RunnerOption{
		interp.Env(expand.ListEnviron(append(shellEnv(), env...)...)),
		func(r *interp.Runner) error { r.Dir = "/"; return nil },
		interp.StdIO(nil, out, out),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return n.exec }),
		interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
			if n.step() > maxSteps {
				cancel()
				return nil, fmt.Errorf("more than %d commands, the script never finishes", maxSteps)
			}
			// command -v looks programs up in the host's PATH: look them up on the node instead
			// (builtins, functions and keywords are the interpreter's to answer).
			if len(args) > 2 && args[0] == "command" && (args[1] == "-v" || args[1] == "-V") &&
				!slices.ContainsFunc(args[2:], func(a string) bool {
					return interp.IsBuiltin(a) || syntax.IsKeyword(a) || (*runner != nil && (*runner).Funcs[a] != nil)
				}) {
				return append([]string{lookupCommand}, args[2:]...), nil
			}
			return args, nil
		}),
		interp.Params(params...),
		interp.OpenHandler(func(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			return n.openFile(ctx, clean(interp.HandlerCtx(ctx).Dir, p), flag, perm)
		}),
		interp.StatHandler(func(ctx context.Context, p string, _ bool) (fs.FileInfo, error) {
			return n.fs.stat(clean(interp.HandlerCtx(ctx).Dir, p))
		}),
		interp.AccessHandler(func(ctx context.Context, p string, mode interp.AccessMode) error {
			return n.fs.access(clean(interp.HandlerCtx(ctx).Dir, p), mode)
		}),
		interp.ReadDirHandler2(func(ctx context.Context, p string) ([]fs.DirEntry, error) {
			return n.fs.readDir(clean(interp.HandlerCtx(ctx).Dir, p))
		}),
	}
}

// exitStatus is the status a Run error stands for.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	if status := interp.ExitStatus(0); errors.As(err, &status) {
		return int(status)
	}
	return 1
}

// procSubsts runs the shell's process substitutions, >(...) and <(...), with pipes instead of
// the named FIFOs the interpreter would create in the host's temporary directory: each one is
// replaced in the syntax tree by the /dev/fd/N path bash would pass, and opening that path
// starts a subshell reading or writing the other end.
type procSubsts struct {
	node   *node
	runner *interp.Runner
	byPath map[string]*syntax.ProcSubst
	next   int

	// mu guards byPath, next and held: a job the shell left in the background opens its
	// substitutions while the next statements are rewritten.
	mu      sync.Mutex
	running sync.WaitGroup
	// held are the ends the shell holds, closed when it exits.
	held []*os.File
}

// rewrite replaces the process substitutions in stmt by /dev/fd paths.
func (p *procSubsts) rewrite(stmt *syntax.Stmt) {
	syntax.Walk(stmt, func(node syntax.Node) bool {
		w, ok := node.(*syntax.Word)
		if !ok {
			return true
		}
		for i, part := range w.Parts {
			sub, ok := part.(*syntax.ProcSubst)
			if !ok {
				continue
			}
			// Walk the substitution's own commands first: they may hold substitutions too.
			for _, s := range sub.Stmts {
				p.rewrite(s)
			}
			p.mu.Lock()
			path := "/dev/fd/" + strconv.Itoa(63-p.next)
			p.next++
			p.byPath[path] = sub
			p.mu.Unlock()
			w.Parts[i] = &syntax.Lit{ValuePos: sub.Pos(), ValueEnd: sub.End(), Value: path}
		}
		return true
	})
}

// open starts the substitution behind path and returns the end the shell uses.
func (p *procSubsts) open(ctx context.Context, path string, write bool) (io.ReadWriteCloser, bool, error) {
	p.mu.Lock()
	sub, ok := p.byPath[path]
	p.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	hc := interp.HandlerCtx(ctx)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, true, err
	}
	shell := p.runner.Subshell()
	subCtx, kill := context.WithCancel(ctx)
	mine, theirs := w, r
	if write { // >(...): the subshell reads what the shell writes
		err = interp.StdIO(r, hc.Stdout, hc.Stderr)(shell)
	} else { // <(...): the shell reads what the subshell prints
		mine, theirs = r, w
		err = interp.StdIO(hc.Stdin, sigpipeWriter{w: w, kill: kill}, hc.Stderr)(shell)
	}
	if err != nil {
		kill()
		r.Close()
		w.Close()
		return nil, true, err
	}
	p.mu.Lock()
	p.held = append(p.held, mine)
	p.mu.Unlock()
	p.running.Add(1)
	go func() {
		defer p.running.Done()
		defer kill()
		defer theirs.Close()
		_ = shell.Run(subCtx, &syntax.File{Stmts: sub.Stmts})
	}()
	return mine, true, nil
}

// wait closes the ends the shell still holds (the shell has exited, so the kernel would close
// them: a reader sees end of file, a writer a broken pipe) and waits for every substitution to
// finish.
func (p *procSubsts) wait() {
	p.mu.Lock()
	for _, f := range p.held {
		f.Close()
	}
	p.held = nil
	p.mu.Unlock()
	p.running.Wait()
}

// sigpipeWriter is a process substitution's output: once the shell has closed its end, the next
// write kills the subshell, as SIGPIPE does.
type sigpipeWriter struct {
	w    io.Writer
	kill context.CancelFunc
}

func (s sigpipeWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		s.kill()
	}
	return n, err
}

// printSyntaxError prints a syntax error as bash does for the one met most in userData, an
// unclosed quote, and in the interpreter's words otherwise.
func printSyntaxError(out io.Writer, name, body string, se syntax.ParseError) {
	if q, ok := strings.CutPrefix(se.Text, "reached EOF without closing quote "); ok {
		fmt.Fprintf(out, "%s: line %d: unexpected EOF while looking for matching %s'\n", name, se.Pos.Line(), strings.TrimSuffix(q, "`"))
		fmt.Fprintf(out, "%s: line %d: syntax error: unexpected end of file\n", name, strings.Count(body, "\n")+1)
		return
	}
	fmt.Fprintf(out, "%s: line %d: syntax error: %s\n", name, se.Pos.Line(), se.Text)
}
