package boot

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// node is one booting instance as its userData scripts see it: its file system, the kubelet
// its bootstrap starts, and the commands it ran. Scripts and their process substitutions call
// into it concurrently.
type node struct {
	in Instance
	c  Cluster
	fs *memFS
	// launchers are the programs that start a kubelet on this AMI, by base name.
	launchers map[string]launcher

	mu sync.Mutex
	// steps counts simple commands run, builtins included.
	steps int
	// commands are the commands run that are not shell builtins or functions, as run.
	commands [][]string
	// launch is the last kubelet start that succeeded.
	launch *kubeletLaunch
	// tried is whether a launcher ran; lastErr is what the last failing one printed.
	tried   bool
	lastErr string
	// loadedDropIns are kubelet.service's drop-ins as systemd last loaded them (daemon-reload).
	loadedDropIns map[string][]byte
	// journal are lines other processes (systemd) printed, shown after the scripts' output.
	journal []string
}

// launcher runs a program that starts a kubelet: it returns the launch, or an exitError
// carrying what the program printed and its status.
type launcher func(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) (*kubeletLaunch, *exitError)

// exitError is a command that exited with a non-zero status after printing console.
type exitError struct {
	status  int
	console []string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

// amiPrograms are the programs an EKS AMI has in /usr/bin besides the ones a node models, so
// that a script asking for one (command -v jq, [ -x /usr/bin/aws ]) finds it.
var amiPrograms = []string{
	"aws", "awk", "base64", "bash", "cat", "chmod", "chown", "cloud-init", "containerd", "cp", "crictl", "ctr", "curl",
	"cut", "date", "ec2-metadata", "env", "find", "grep", "gzip", "head", "hostname", "id", "ip", "iptables",
	"jq", "kubelet", "ln", "logger", "ls", "lsblk", "mdadm", "mkdir", "mkfs.xfs", "modprobe", "mount", "mv",
	"nohup", "nvme", "openssl", "python3", "rm", "rpm", "sed", "sh", "sleep", "sort", "sudo", "sysctl",
	"systemctl", "tail", "tar", "tee", "timeout", "touch", "tr", "uname", "uniq", "unzip", "wget", "xargs", "yum",
}

// lookupCommand is what the shell's command -v NAME becomes: a lookup on the node.
const lookupCommand = "command -v"

func newNode(in Instance, c Cluster) *node {
	n := &node{in: in, c: c, fs: newMemFS(), launchers: map[string]launcher{}}
	for _, p := range amiPrograms {
		n.fs.writeFile("/usr/bin/"+p, nil, 0o755)
	}
	n.fs.mkdirAll(kubeletDropInDir)
	return n
}

func (n *node) step() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.steps++
	return n.steps
}

func (n *node) record(args []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.commands = append(n.commands, append([]string(nil), args...))
}

// exportedEnv returns the exported variables a program started by the shell sees.
func exportedEnv(env expand.Environ) map[string]string {
	vars := map[string]string{}
	for name, vr := range env.Each {
		if vr.Exported && vr.IsSet() {
			vars[name] = vr.String()
		}
	}
	return vars
}

// exec is the shell's exec handler: every command that is not a builtin or a function.
// Wrappers (sudo, env, nohup, timeout) run what they wrap; launchers start the kubelet; the
// handful of commands userData uses to write and show files are modelled; everything else is
// recorded and succeeds without output.
func (n *node) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	n.record(args)
	env := exportedEnv(hc.Env)
	args, env = unwrap(args, env)
	if len(args) == 0 {
		return nil
	}
	name := path.Base(args[0])
	if launch, ok := n.launchers[name]; ok {
		return n.runLauncher(ctx, launch, args[1:], env, hc.Stdout, hc.Stderr)
	}
	cmd := command{node: n, ctx: ctx, dir: hc.Dir, stdin: hc.Stdin, stdout: hc.Stdout, stderr: hc.Stderr, name: name}
	if ran, err := cmd.script(args, env); ran {
		return err
	}
	switch args[0] {
	case lookupCommand:
		return cmd.lookup(args[1:], env)
	}
	switch name {
	case "which":
		return cmd.lookup(args[1:], env)
	case "bash", "sh":
		return cmd.shell(args[1:], env)
	case "cat":
		return cmd.cat(args[1:])
	case "tee":
		return cmd.tee(args[1:])
	case "logger":
		return cmd.logger(args[1:])
	case "systemctl":
		return cmd.systemctl(args[1:])
	case "mkdir":
		return cmd.mkdir(args[1:])
	case "touch":
		return cmd.touch(args[1:])
	case "chmod":
		return cmd.chmod(args[1:])
	case "rm":
		return cmd.rm(args[1:])
	case "cp":
		return cmd.cp(args[1:])
	case "base64":
		return cmd.base64(args[1:])
	}
	return nil
}

// runLauncher runs a kubelet-starting program and keeps its launch.
func (n *node) runLauncher(ctx context.Context, launch launcher, args []string, env map[string]string, stdout, stderr io.Writer) error {
	l, failure := launch(ctx, args, env, stdout, stderr)
	if l == nil && failure == nil {
		return nil // the program ran without starting a kubelet
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.tried = true
	if failure != nil {
		for _, line := range failure.console {
			fmt.Fprintln(stderr, line)
		}
		n.lastErr = strings.Join(failure.console, "; ")
		return interp.ExitStatus(uint8(failure.status))
	}
	n.launch = l
	return nil
}

// unwrap strips the programs that run another one (sudo, env, nohup, timeout), applying the
// variables env assigns.
func unwrap(args []string, env map[string]string) ([]string, map[string]string) {
	for len(args) > 0 {
		switch path.Base(args[0]) {
		case "sudo":
			args = skipSudoOptions(args[1:])
		case "env":
			args, env = applyEnv(args[1:], env)
		case "nohup":
			args = args[1:]
		case "timeout":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
			if len(args) > 0 {
				args = args[1:] // the duration
			}
		default:
			return args, env
		}
	}
	return args, env
}

// skipSudoOptions drops sudo's options (and the values of -u, -g, -C, -D).
func skipSudoOptions(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opt := args[0]
		args = args[1:]
		if opt == "--" {
			return args
		}
		if (opt == "-u" || opt == "-g" || opt == "-C" || opt == "-D") && len(args) > 0 {
			args = args[1:]
		}
	}
	return args
}

// applyEnv applies env's options and NAME=value words and returns the command after them.
func applyEnv(args []string, env map[string]string) ([]string, map[string]string) {
	for len(args) > 0 {
		switch k, v, ok := strings.Cut(args[0], "="); {
		case args[0] == "-i":
			env = map[string]string{}
		case args[0] == "-u" && len(args) > 1:
			delete(env, args[1])
			args = args[1:]
		case ok && !strings.HasPrefix(args[0], "-") && k != "":
			env[k] = v
		default:
			return args, env
		}
		args = args[1:]
	}
	return args, env
}

// command is one run of a modelled command.
type command struct {
	node           *node
	ctx            context.Context
	dir            string
	name           string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (c command) fail(status uint8, format string, args ...any) error {
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", args...)
	return interp.ExitStatus(status)
}

// open opens a file for a command as the shell would (devices, process substitutions, files).
func (c command) open(p string, flag int) (io.ReadWriteCloser, error) {
	return c.node.openFile(c.ctx, clean(c.dir, p), flag, 0o644)
}

// script runs a shell script the userData wrote and runs by path, with its #! line's options;
// ran is false when args[0] is no such script.
func (c command) script(args []string, env map[string]string) (ran bool, err error) {
	if !strings.Contains(args[0], "/") {
		return false, nil
	}
	p := clean(c.dir, args[0])
	data, err := c.node.fs.readFile(p)
	if err != nil || len(data) == 0 {
		return false, nil
	}
	if c.node.fs.access(p, interp.AccessExec) != nil {
		return true, c.fail(126, "%s: Permission denied", args[0])
	}
	first := firstLine(string(data))
	if !strings.HasPrefix(first, "#!") || !strings.Contains(first, "sh") {
		return false, nil
	}
	return true, c.shell(append(shebangOptions(first), args...), env)
}

// shell is bash -c 'script' or bash file: a new bash process with the same handlers.
func (c command) shell(args []string, env map[string]string) error {
	var opts []string
	for len(args) > 0 && len(args[0]) > 1 && (args[0][0] == '-' || args[0][0] == '+') && args[0] != "-c" {
		opts = append(opts, args[0])
		args = args[1:]
	}
	var name, body string
	var params []string
	switch {
	case len(args) >= 2 && args[0] == "-c":
		name, body = c.name, args[1]
		if len(args) > 2 { // bash -c 'script' $0 $1 ...
			name, params = args[2], args[3:]
		}
	case len(args) >= 1 && args[0] != "-c":
		data, err := c.node.fs.readFile(clean(c.dir, args[0]))
		if err != nil {
			return c.fail(127, "%s: No such file or directory", args[0])
		}
		name, body, params = args[0], string(data), args[1:]
	default:
		return nil
	}
	var vars []string
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	status := c.node.runShell(c.ctx, name, body, opts, params, vars, c.stdout)
	if status != 0 {
		return interp.ExitStatus(uint8(status))
	}
	return nil
}

// lookup prints where each program is found on the node (command -v, which), failing when one
// is not.
func (c command) lookup(names []string, env map[string]string) error {
	dirs := strings.Split(env["PATH"], ":")
	if env["PATH"] == "" {
		dirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
	}
	missing := false
	for _, name := range operands(names) {
		candidates := []string{clean(c.dir, name)}
		if !strings.Contains(name, "/") {
			candidates = candidates[:0]
			for _, d := range dirs {
				candidates = append(candidates, path.Join(d, name))
			}
		}
		found := slices.ContainsFunc(candidates, func(p string) bool {
			if c.node.fs.access(p, interp.AccessExec) == nil {
				fmt.Fprintln(c.stdout, p)
				return true
			}
			return false
		})
		missing = missing || !found
	}
	if missing {
		return interp.ExitStatus(1)
	}
	return nil
}

func (c command) cat(args []string) error {
	files := operands(args)
	if len(files) == 0 {
		files = []string{"-"}
	}
	var failed bool
	for _, f := range files {
		if f == "-" {
			if c.stdin != nil {
				_, _ = io.Copy(c.stdout, c.stdin)
			}
			continue
		}
		r, err := c.open(f, os.O_RDONLY)
		if err != nil {
			fmt.Fprintf(c.stderr, "cat: %s: No such file or directory\n", f)
			failed = true
			continue
		}
		_, _ = io.Copy(c.stdout, r)
		r.Close()
	}
	if failed {
		return interp.ExitStatus(1)
	}
	return nil
}

func (c command) tee(args []string) error {
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	for _, a := range args {
		if a == "-a" || a == "--append" {
			flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
	}
	writers := []io.Writer{c.stdout}
	for _, f := range operands(args) {
		w, err := c.open(f, flag)
		if err != nil {
			return c.fail(1, "%s: %v", f, err)
		}
		defer w.Close()
		writers = append(writers, w)
	}
	if c.stdin != nil {
		_, _ = io.Copy(io.MultiWriter(writers...), c.stdin)
	}
	return nil
}

// logger sends its message (its arguments, or each line of its input) to syslog; with -s also
// to standard error, as util-linux logger formats it.
func (c command) logger(args []string) error {
	tag, toStderr := "root", false
	var words []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-t" || a == "--tag":
			if i+1 < len(args) {
				i++
				tag = args[i]
			}
		case a == "-p" || a == "--priority" || a == "-n" || a == "-P" || a == "--id":
			i++
		case a == "-s" || a == "--stderr":
			toStderr = true
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			toStderr = toStderr || strings.Contains(a, "s")
		default:
			words = append(words, a)
		}
	}
	emit := func(msg string) {
		if toStderr {
			fmt.Fprintf(c.stderr, "<13>%s %s: %s\n", c.node.in.LaunchTime.UTC().Format("Jan _2 15:04:05"), tag, msg)
		}
	}
	if len(words) > 0 {
		emit(strings.Join(words, " "))
		return nil
	}
	if c.stdin == nil {
		return nil
	}
	sc := bufio.NewScanner(c.stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		emit(sc.Text())
	}
	return nil
}

// systemctl models the unit operations that change the kubelet: daemon-reload loads the
// drop-ins as they are now, and restarting kubelet after a bootstrap started it makes it read
// them. Other operations succeed without effect.
func (c command) systemctl(args []string) error {
	ops := operands(args)
	if len(ops) == 0 {
		return nil
	}
	switch ops[0] {
	case "daemon-reload":
		c.node.daemonReload()
	case "start", "restart", "reload-or-restart", "try-restart":
		if !slices.ContainsFunc(ops[1:], func(u string) bool { return u == "kubelet" || u == "kubelet.service" }) {
			return nil
		}
		n := c.node
		n.mu.Lock()
		running := n.launch
		n.mu.Unlock()
		if running == nil || ops[0] == "start" {
			return nil // not started by a bootstrap yet, or already running
		}
		restarted := *running
		var journal []string
		restarted.args, journal = n.kubeletExtraArgs()
		n.mu.Lock()
		n.journal = append(n.journal, journal...)
		n.launch = &restarted
		n.mu.Unlock()
	}
	return nil
}

func (c command) mkdir(args []string) error {
	for _, d := range operands(args) {
		c.node.fs.mu.Lock()
		c.node.fs.mkdirAll(clean(c.dir, d))
		c.node.fs.mu.Unlock()
	}
	return nil
}

func (c command) touch(args []string) error {
	for _, f := range operands(args) {
		w, err := c.open(f, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
		if err != nil {
			return c.fail(1, "cannot touch '%s': %v", f, err)
		}
		w.Close()
	}
	return nil
}

func (c command) chmod(args []string) error {
	ops := operands(args)
	if len(ops) < 2 {
		return c.fail(1, "missing operand")
	}
	for _, f := range ops[1:] {
		p := clean(c.dir, f)
		info, err := c.node.fs.stat(p)
		if err != nil {
			return c.fail(1, "cannot access '%s': No such file or directory", f)
		}
		if err := c.node.fs.chmod(p, chmodMode(ops[0], info.Mode())); err != nil {
			return c.fail(1, "%v", err)
		}
	}
	return nil
}

// chmodMode applies an octal mode or the x bits of a symbolic one (+x, u+x, a-x).
func chmodMode(spec string, old fs.FileMode) fs.FileMode {
	if n, err := strconv.ParseUint(spec, 8, 32); err == nil {
		return fs.FileMode(n)
	}
	mode := old.Perm()
	if i := strings.IndexAny(spec, "+-="); i >= 0 && strings.Contains(spec[i:], "x") {
		if spec[i] == '-' {
			mode &^= 0o111
		} else {
			mode |= 0o111
		}
	}
	return mode
}

func (c command) rm(args []string) error {
	for _, f := range operands(args) {
		c.node.fs.remove(clean(c.dir, f))
	}
	return nil
}

func (c command) cp(args []string) error {
	ops := operands(args)
	if len(ops) != 2 {
		return nil
	}
	data, err := c.node.fs.readFile(clean(c.dir, ops[0]))
	if err != nil {
		return c.fail(1, "cannot stat '%s': No such file or directory", ops[0])
	}
	dst := clean(c.dir, ops[1])
	if info, err := c.node.fs.stat(dst); err == nil && info.IsDir() {
		dst = path.Join(dst, path.Base(ops[0]))
	}
	c.node.fs.writeFile(dst, data, 0o644)
	return nil
}

func (c command) base64(args []string) error {
	decode := false
	for _, a := range args {
		if a == "-d" || a == "--decode" || a == "-D" {
			decode = true
		}
	}
	var in []byte
	if files := operands(args); len(files) > 0 {
		data, err := c.node.fs.readFile(clean(c.dir, files[0]))
		if err != nil {
			return c.fail(1, "%s: No such file or directory", files[0])
		}
		in = data
	} else if c.stdin != nil {
		in, _ = io.ReadAll(c.stdin)
	}
	if !decode {
		fmt.Fprintln(c.stdout, base64.StdEncoding.EncodeToString(in))
		return nil
	}
	out, err := base64.StdEncoding.DecodeString(string(bytes.Join(bytes.Fields(in), nil)))
	if err != nil {
		return c.fail(1, "invalid input")
	}
	_, _ = c.stdout.Write(out)
	return nil
}

// operands returns the arguments that are not options.
func operands(args []string) []string {
	var ops []string
	for i, a := range args {
		if a == "--" {
			return append(ops, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			continue
		}
		ops = append(ops, a)
	}
	return ops
}

// openFile is the shell's open handler: process substitutions, the devices a script writes to
// (/dev/null, /dev/console, /dev/stdout, /dev/stderr), and otherwise the in-memory file system.
func (n *node) openFile(ctx context.Context, p string, flag int, perm fs.FileMode) (io.ReadWriteCloser, error) {
	if ps, ok := ctx.Value(procSubstKey{}).(*procSubsts); ok {
		if f, found, err := ps.open(ctx, p, flag&(os.O_WRONLY|os.O_RDWR) != 0); found {
			return f, err
		}
	}
	hc := interp.HandlerCtx(ctx)
	switch p {
	case "/dev/null":
		return nopFile{w: io.Discard}, nil
	case "/dev/console", "/dev/kmsg", "/dev/tty":
		return nopFile{w: n.console(ctx)}, nil
	case "/dev/stdin", "/dev/fd/0":
		if hc.Stdin == nil {
			return nopFile{w: io.Discard}, nil
		}
		return readOnly{hc.Stdin}, nil
	case "/dev/stdout", "/dev/fd/1":
		return nopFile{w: hc.Stdout}, nil
	case "/dev/stderr", "/dev/fd/2":
		return nopFile{w: hc.Stderr}, nil
	}
	return n.fs.open(p, flag, perm)
}

// procSubstKey carries a shell's process substitutions to its open handler.
type procSubstKey struct{}

// consoleKey carries the console writer of the script being run.
type consoleKey struct{}

// console is where /dev/console writes land: the script's console.
func (n *node) console(ctx context.Context) io.Writer {
	if w, ok := ctx.Value(consoleKey{}).(io.Writer); ok {
		return w
	}
	return io.Discard
}

// nopFile is a device: writes go to w, reads see end of file.
type nopFile struct{ w io.Writer }

func (f nopFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (f nopFile) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f nopFile) Close() error                { return nil }
