package userdata

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// This file checks calls of the AL2 EKS AMI's /etc/eks/bootstrap.sh. bootstrap.sh reads its
// options in a loop: a word that is one of its options takes the next word as its value
// (`--name value`); every other word is kept as a positional argument, and the first positional
// argument is the cluster name. So the single word `--kubelet-extra-args=...` is not an option
// at all: it is a positional argument, ignored (or, before the cluster name, taken as the cluster
// name). bootstrap.sh starts from $KUBELET_EXTRA_ARGS of its environment when the option is not
// given. It writes the value into a systemd drop-in, and systemd splits it into the kubelet's
// arguments at blanks, honouring and removing quotes. The kubelet keeps the last
// --register-with-taints it is given.

// isBootstrapOption reports whether bootstrap.sh reads name as a two-word option.
func isBootstrapOption(name string) bool {
	switch name {
	case "--use-max-pods", "--b64-cluster-ca", "--apiserver-endpoint", "--kubelet-extra-args",
		"--enable-docker-bridge", "--aws-api-retry-attempts", "--docker-config-json",
		"--containerd-config-file", "--pause-container-account", "--pause-container-version",
		"--dns-cluster-ip", "--container-runtime", "--ip-family", "--service-ipv6-cidr",
		"--service-ipv4-cidr", "--enable-local-outpost", "--cluster-id", "--mount-bpf-fs",
		"--local-disks":
		return true
	}
	return false
}

// bootstrapCall is one call of bootstrap.sh, with its arguments read as bootstrap.sh reads them.
type bootstrapCall struct {
	line int
	// options holds the value of each two-word option; a repeated option keeps its last value.
	options map[string]shellWord
	// positional are the words that are not options or their values; the first is the cluster
	// name.
	positional []shellWord
	env        map[string]shellVar
	// conditional is true when the call is in a branch that may not run.
	conditional bool
	// uncertain is true when an argument is an unquoted value known only at boot, which bash may
	// split into any number of words: the options after it may be read at the wrong positions.
	uncertain bool
}

// bootstrapScript is what a shell script does with bootstrap.sh.
type bootstrapScript struct {
	calls []bootstrapCall
	// modifiedAt is the first line of a command, other than a call, that names bootstrap.sh (sed
	// -i, cat >...): the script may change what bootstrap.sh does. 0 when none.
	modifiedAt int
	// taintElsewhereAt is the first line, other than the calls, the assignments the reader
	// follows and comments, that mentions the taint or a way to register taints (a kubelet config
	// file, a drop-in): the kubelet may get the taint from there. 0 when none.
	taintElsewhereAt int
	// unknownRunAt is the first line that runs a file the script wrote whose content the reading
	// cannot know (shellfiles.go): it may call bootstrap.sh. 0 when none.
	unknownRunAt int
}

// readBootstrapScript finds every call of bootstrap.sh in a shell script, directly or through
// bash, sh, sudo, exec, env or time, and what else the script does that a check must allow for.
func readBootstrapScript(script string) bootstrapScript {
	var s bootstrapScript
	// modelled are the lines of the calls, of the plain assignments the reader follows and of
	// the statements that never run.
	modelled := map[int]bool{}
	read := readShell(script)
	for _, cmd := range read.commands {
		if len(cmd.words) == 0 && len(cmd.redirects) == 0 || len(cmd.words) > 0 && isDeclaration(cmd.words[0].text) {
			markLines(modelled, cmd)
			continue
		}
		words := cmd.words
		for len(words) > 0 && isCommandPrefix(words[0].text) {
			words = words[1:]
		}
		if len(words) > 0 && path.Base(words[0].text) == "bootstrap.sh" {
			markLines(modelled, cmd)
			s.calls = append(s.calls, newBootstrapCall(cmd, words[1:]))
			continue
		}
		namesBootstrap := func(w shellWord) bool { return path.Base(w.text) == "bootstrap.sh" }
		readsOnly := len(words) > 0 && readsFiles(words[0].text)
		if s.modifiedAt == 0 && (!readsOnly && slices.ContainsFunc(words, namesBootstrap) || slices.ContainsFunc(cmd.redirects, namesBootstrap)) {
			s.modifiedAt = cmd.line
		}
	}
	maps.Copy(modelled, read.dead)
	maps.Copy(modelled, read.followed)
	s.unknownRunAt = read.unknownRunAt
	s.taintElsewhereAt = firstTaintMention(script, modelled)
	return s
}

// markLines marks the lines of a command, and of the function calls it runs inside.
func markLines(lines map[int]bool, cmd shellCommand) {
	for l := cmd.line; l <= max(cmd.line, cmd.endLine); l++ {
		lines[l] = true
	}
	for _, l := range cmd.callers {
		lines[l] = true
	}
}

// newBootstrapCall reads a call's arguments as bootstrap.sh does.
func newBootstrapCall(cmd shellCommand, args []shellWord) bootstrapCall {
	call := bootstrapCall{line: cmd.line, options: map[string]shellWord{}, env: cmd.env, conditional: cmd.conditional,
		uncertain: slices.ContainsFunc(args, func(w shellWord) bool { return w.unknownSplit })}
	for i := 0; i < len(args); i++ {
		if isBootstrapOption(args[i].text) {
			if i+1 < len(args) {
				call.options[args[i].text] = args[i+1]
			}
			i++
			continue
		}
		call.positional = append(call.positional, args[i])
	}
	return call
}

// firstTaintMention is the first line, not modelled and not a comment, that mentions the taint or
// a way to register taints; 0 when none.
func firstTaintMention(script string, modelled map[int]bool) int {
	for i, line := range strings.Split(script, "\n") {
		if modelled[i+1] || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, mention := range []string{v1.UnregisteredTaintKey, "register-with-taints", "registerWithTaints", "kubelet.service.d"} {
			if strings.Contains(line, mention) {
				return i + 1
			}
		}
	}
	return 0
}

// findBootstrapCalls returns every call of bootstrap.sh in a shell script.
func findBootstrapCalls(script string) []bootstrapCall {
	return readBootstrapScript(script).calls
}

// readsFiles reports whether a command only reads or tests the files it names (its
// redirections aside), so naming bootstrap.sh does not change it.
func readsFiles(name string) bool {
	switch name {
	case "[", "test", "ls", "stat", "cat", "grep", "head", "tail", "file", "md5sum", "sha256sum", "echo", "printf":
		return true
	}
	return false
}

func isCommandPrefix(word string) bool {
	switch word {
	case "bash", "sh", "sudo", "exec", "env", "time", "command", "nohup", "-x", "-e", "-xe", "-ex", "{", "then", "do", "else", "!", "if", "while", "until":
		return true
	}
	return false
}

// callsBootstrap reports whether a shell script calls bootstrap.sh.
func callsBootstrap(script string) bool {
	return len(findBootstrapCalls(script)) > 0
}

// CheckBootstrapScript reads every call of /etc/eks/bootstrap.sh in an AL2 shell script as
// bootstrap.sh reads its arguments, and reports what makes the node register without the
// karpenter.sh/unregistered:NoExecute taint, or not register at all (Problem), or what cannot be
// verified because it depends on values only known at boot (Advice). It returns nothing for a
// script that does not call bootstrap.sh, and nothing for calls that work.
func CheckBootstrapScript(script string) []Warning {
	s := readBootstrapScript(script)
	var out []Warning
	for _, call := range s.calls {
		out = append(out, call.check(s)...)
	}
	return out
}

func (c bootstrapCall) check(s bootstrapScript) []Warning {
	var out []Warning
	required := v1.UnregisteredNoExecuteTaint()
	ignoredCarriesTaint := false
	for i, w := range c.positional {
		name, value, hasValue := strings.Cut(w.text, "=")
		if !hasValue || !isBootstrapOption(name) {
			continue
		}
		consequence := "bootstrap.sh ignores it"
		if i == 0 {
			consequence = "because it comes before the cluster name, bootstrap.sh takes the whole word as the cluster name, and the node cannot join"
		}
		if name == "--kubelet-extra-args" {
			consequence += ", so the kubelet starts without these arguments"
			if taints, known := registerWithTaints(value); known && hasTaint(taints, required) {
				ignoredCarriesTaint = true
				consequence += fmt.Sprintf(" and the node registers without %s", formatTaint(required))
			}
		}
		out = append(out, Warning{
			Severity: SeverityProblem,
			Reason:   "BootstrapOptionIgnored",
			Message: fmt.Sprintf("userData line %d: bootstrap.sh takes its options as two words (%s value), and the single word %s is not one of its options: %s",
				c.line, name, w.raw, consequence),
			Fix: fmt.Sprintf("write it as two words: %s %s", name, shellQuote(value)),
		})
	}
	if len(c.positional) == 0 {
		out = append(out, Warning{
			Severity: SeverityProblem,
			Reason:   "BootstrapClusterNameMissing",
			Message:  fmt.Sprintf("userData line %d: bootstrap.sh is called without a cluster name and exits without joining the node", c.line),
			Fix:      "pass the cluster name as bootstrap.sh's first argument that is not an option",
		})
	}

	extraArgs, source := c.kubeletExtraArgs()
	if extraArgs.unknown {
		out = append(out, Warning{
			Severity: SeverityAdvice,
			Reason:   "BootstrapTaintUnverifiable",
			Message: fmt.Sprintf("userData line %d: the kubelet arguments (%s) depend on values known only at boot (%s), so Joiner cannot check that the node registers with %s",
				c.line, source, extraArgs.raw, formatTaint(required)),
			Fix: fmt.Sprintf("make sure the kubelet gets --register-with-taints with %s, or drop the bootstrap.sh call and let Joiner's own part make it", formatTaint(required)),
		})
		return out
	}
	taints, _ := registerWithTaints(extraArgs.text)
	if hasTaint(taints, required) || ignoredCarriesTaint {
		return out
	}
	got := "no --register-with-taints"
	if len(taints) > 0 {
		got = "--register-with-taints=" + formatTaints(taints)
	}
	old := ""
	if slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.Key == v1.Group+"/uninitialized" }) {
		old = fmt.Sprintf("; %s/uninitialized is the old name of the taint, Joiner requires %s", v1.Group, v1.UnregisteredTaintKey)
	}
	fixed := strings.TrimSpace(withTaint(extraArgs.text, unionTaints(taints, []corev1.Taint{required})))
	if elsewhere := max(s.modifiedAt, s.taintElsewhereAt); elsewhere > 0 {
		what := "registers taints some other way"
		if s.modifiedAt > 0 {
			what = "changes bootstrap.sh itself"
		}
		return append(out, Warning{
			Severity: SeverityAdvice,
			Reason:   "BootstrapTaintUnverifiable",
			Message: fmt.Sprintf("userData line %d: the kubelet gets %s from bootstrap.sh (from %s), but the script %s (line %d), so Joiner cannot tell whether the node registers with %s",
				c.line, got, source, what, elsewhere, formatTaint(required)),
			Fix: fmt.Sprintf("pass the taint where Joiner can see it: --kubelet-extra-args %s, or drop the bootstrap.sh call and let Joiner's own part make it", shellQuote(fixed)),
		})
	}
	out = append(out, Warning{
		Severity: SeverityProblem,
		Reason:   "UnregisteredTaintMissing",
		Message: fmt.Sprintf("userData line %d: the kubelet gets %s (from %s), so the node registers without %s and Joiner must refuse it%s",
			c.line, got, source, formatTaint(required), old),
		Fix: fmt.Sprintf("call bootstrap.sh with --kubelet-extra-args %s, or drop the bootstrap.sh call and let Joiner's own part make it", shellQuote(fixed)),
	})
	return out
}

// kubeletExtraArgs is what bootstrap.sh writes for the kubelet: the --kubelet-extra-args option,
// else $KUBELET_EXTRA_ARGS from its environment, else nothing. source says which.
func (c bootstrapCall) kubeletExtraArgs() (shellWord, string) {
	if w, ok := c.options["--kubelet-extra-args"]; ok {
		return w, "--kubelet-extra-args"
	}
	if v, ok := c.env["KUBELET_EXTRA_ARGS"]; ok {
		return shellWord{text: v.value, unknown: v.unknown, raw: "$KUBELET_EXTRA_ARGS"}, "the exported KUBELET_EXTRA_ARGS"
	}
	return shellWord{}, "no --kubelet-extra-args"
}

// registerWithTaints returns the taints of the last --register-with-taints in kubelet arguments
// (the one the kubelet keeps), split as systemd splits them. found is false when there is no
// such flag.
func registerWithTaints(args string) (taints []corev1.Taint, found bool) {
	value, found := lastFlag(systemdWords(args), "--register-with-taints")
	if !found {
		return nil, false
	}
	taints, _ = parseTaints(value)
	return taints, true
}

// lastFlag returns the value of the last --name=value or --name value in words.
func lastFlag(words []string, name string) (string, bool) {
	value, found := "", false
	for i, w := range words {
		switch {
		case strings.HasPrefix(w, name+"="):
			value, found = strings.Trim(strings.TrimPrefix(w, name+"="), `"'`), true
		case w == name && i+1 < len(words):
			value, found = words[i+1], true
		}
	}
	return value, found
}

// withTaint rewrites kubelet arguments so that their one --register-with-taints carries taints.
func withTaint(args string, taints []corev1.Taint) string {
	var kept []string
	words := systemdWords(args)
	for i := 0; i < len(words); i++ {
		switch {
		case strings.HasPrefix(words[i], "--register-with-taints="):
		case words[i] == "--register-with-taints":
			i++
		default:
			kept = append(kept, words[i])
		}
	}
	kept = append(kept, "--register-with-taints="+formatTaints(taints))
	return strings.Join(kept, " ")
}

// systemdWords splits a value the way systemd splits an unbraced $VARIABLE in ExecStart: at
// blanks, honouring double and single quotes, which it then removes. A %% becomes %. (systemd's
// rules, not a shell's: no expansions, and a backslash outside quotes escapes the next
// character.)
func systemdWords(value string) []string {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  byte
	)
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '"' && c == '\\' && i+1 < len(value):
			i++
			cur.WriteByte(value[i])
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\' && i+1 < len(value):
			i++
			cur.WriteByte(value[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	for i, w := range words {
		words[i] = strings.ReplaceAll(w, "%%", "%")
	}
	return words
}
