package boot

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/joinerhq/joiner/awsemu/boot/shell"
)

// Console line prefixes: the processes whose output a boot shows.
const (
	cloudInit = "cloud-init[2411]: "
	systemd   = "systemd[1]: "
	kubeletP  = "kubelet[3127]: "
	nodeadmP  = "nodeadm[1980]: "
)

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

// exitError is a command that exited with a non-zero status after printing Console.
type exitError struct {
	status  int
	console []string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

// commandHandler runs one command. It returns handled false for a command it does not model
// (assumed to succeed silently), the lines the command printed, and an *exitError when the
// command fails.
type commandHandler func(cmd shell.Command) (handled bool, console []string, err *exitError)

// runScript runs a script as bash would, as far as commands the handler models: commands run in
// order; after a failing command the script stops if errexit is on (#!/bin/bash -e, set -e,
// set -o errexit); with nounset on (set -u) a command expanding an unset variable stops it; a
// syntax error stops the script where bash stops reading it. It returns the
// console lines and whether the script exited non-zero.
func runScript(s script, handle commandHandler) ([]string, bool) {
	var console []string
	shebang := firstLine(s.body)
	if !strings.HasPrefix(shebang, "#!") {
		return []string{cloudInit + fmt.Sprintf("util.py[WARNING]: Failed running %s [8]: [Errno 8] Exec format error", s.name)}, true
	}
	interp := strings.Fields(strings.TrimPrefix(shebang, "#!"))
	var o shellOptions
	for _, f := range interp[1:] {
		if strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "--") {
			o.set(f[1:], true)
		}
	}
	cmds, parseErr := shell.Parse(s.body)
	failed, stopped := false, false
	for _, cmd := range cmds {
		if len(cmd.Words) == 0 {
			continue
		}
		if o.nounset && len(cmd.Unset) > 0 {
			// An unset variable under set -u stops a non-interactive shell before the command.
			console = append(console, cloudInit+fmt.Sprintf("%s: line %d: %s: unbound variable", s.name, cmd.Line, cmd.Unset[0]))
			failed, stopped = true, true
			break
		}
		if o.xtrace {
			console = append(console, cloudInit+"+ "+traceWords(cmd.Words))
		}
		if cmd.Words[0] == "set" {
			o.apply(cmd.Words[1:])
			continue
		}
		_, lines, err := handle(cmd)
		console = append(console, prefixed(cloudInit, lines)...)
		failed = err != nil
		if err != nil && o.errexit {
			stopped = true
			break
		}
	}
	if parseErr != nil && !stopped {
		if se := (*shell.SyntaxError)(nil); errors.As(parseErr, &se) {
			console = append(console,
				cloudInit+fmt.Sprintf("%s: line %d: %s", s.name, se.StartLine, se.Msg),
				cloudInit+fmt.Sprintf("%s: line %d: syntax error: unexpected end of file", s.name, se.Line))
		}
		failed = true
	}
	if failed {
		console = append(console,
			cloudInit+fmt.Sprintf("util.py[WARNING]: Failed running %s [1]", s.name),
			cloudInit+"cc_scripts_user.py[WARNING]: Failed to run module scripts-user (scripts in /var/lib/cloud/instance/scripts)")
	}
	return console, failed
}

// shellOptions are the bash options that change how a script runs here.
type shellOptions struct {
	errexit, nounset, xtrace bool
}

// set turns the single-letter options in letters on or off.
func (o *shellOptions) set(letters string, on bool) {
	for _, l := range letters {
		switch l {
		case 'e':
			o.errexit = on
		case 'u':
			o.nounset = on
		case 'x':
			o.xtrace = on
		}
	}
}

// apply runs the arguments of a set builtin: -eux, +e, -o errexit, +o nounset.
func (o *shellOptions) apply(args []string) {
	long := map[string]string{"errexit": "e", "nounset": "u", "xtrace": "x"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "" || (a[0] != '-' && a[0] != '+') {
			continue
		}
		on := a[0] == '-'
		if a[1:] == "o" && i+1 < len(args) {
			i++
			o.set(long[args[i]], on)
			continue
		}
		o.set(a[1:], on)
	}
}

// traceWords renders words as bash's xtrace does: words needing it in single quotes.
func traceWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		} else {
			out[i] = w
		}
	}
	return strings.Join(out, " ")
}

func prefixed(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

// isCommandPrefix reports whether a word before a command still runs it: a wrapper (whose
// options and, for env, assignments follow) or a shell reserved word that starts a body.
func isCommandPrefix(word string) bool {
	switch path.Base(word) {
	case "bash", "sh", "sudo", "exec", "env", "nohup", "time",
		"if", "elif", "then", "else", "while", "until", "do", "{", "!":
		return true
	}
	return false
}

// invocation returns the arguments of cmd when it runs the program named name (by base name),
// directly, through a wrapper (bash, sudo, env, ...), or as the first command of an if, loop or
// function body.
func invocation(cmd shell.Command, name string) ([]string, bool) {
	words := cmd.Words
	for len(words) > 0 && isCommandPrefix(words[0]) {
		words = words[1:]
		for len(words) > 0 && (strings.HasPrefix(words[0], "-") || isAssignment(words[0])) {
			words = words[1:]
		}
	}
	if len(words) == 0 || path.Base(words[0]) != name {
		return nil, false
	}
	return words[1:], true
}

var assignmentWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func isAssignment(word string) bool { return assignmentWord.MatchString(word) }
