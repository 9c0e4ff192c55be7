package boot

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

// kubeletDropInDir is where kubelet.service's drop-ins live; bootstrap.sh writes
// 30-kubelet-extra-args.conf there, and userData may write its own.
const kubeletDropInDir = "/etc/systemd/system/kubelet.service.d"

// daemonReload is systemctl daemon-reload: systemd loads kubelet.service's drop-ins as they
// are now; a kubelet started later reads this copy, not the files.
func (n *node) daemonReload() {
	loaded := map[string][]byte{}
	for _, name := range n.fs.list(kubeletDropInDir) {
		if !strings.HasSuffix(name, ".conf") {
			continue
		}
		if data, err := n.fs.readFile(path.Join(kubeletDropInDir, name)); err == nil {
			loaded[name] = data
		}
	}
	n.mu.Lock()
	n.loadedDropIns = loaded
	n.mu.Unlock()
}

// kubeletExtraArgs is what systemd passes the kubelet for ExecStart's unbraced
// $KUBELET_EXTRA_ARGS: the value the loaded drop-ins' Environment= lines give it (files in
// name order, later assignments winning), split into words honouring quotes, which are then
// removed. The journal lines are systemd's warnings about lines it ignored.
//
// The AMI's own flags ($KUBELET_ARGS and the fixed ones in ExecStart) are not modelled: they
// come from the AMI, not from userData.
func (n *node) kubeletExtraArgs() (args []string, journal []string) {
	n.mu.Lock()
	loaded := maps.Clone(n.loadedDropIns)
	n.mu.Unlock()
	env := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(loaded)) {
		file := path.Join(kubeletDropInDir, name)
		opts, err := unit.DeserializeOptions(bytes.NewReader(loaded[name]))
		if err != nil {
			journal = append(journal, systemd+fmt.Sprintf("%s: failed to parse, ignoring: %v", file, err))
			continue
		}
		lines := environmentLines(loaded[name])
		k := 0
		for _, o := range opts {
			if o.Section != "Service" || o.Name != "Environment" {
				continue
			}
			where := file
			if k < len(lines) {
				where = fmt.Sprintf("%s:%d", file, lines[k])
			}
			k++
			if strings.TrimSpace(o.Value) == "" {
				clear(env) // an empty Environment= resets the list
				continue
			}
			environment(o.Value, where, env, &journal)
		}
	}
	words, _ := splitSystemd(env["KUBELET_EXTRA_ARGS"], true)
	return words, journal
}

// environmentLines returns the 1-based line numbers of the Environment= lines of a unit file,
// for systemd's "file:line:" in its warnings.
func environmentLines(data []byte) []int {
	var lines []int
	for i, line := range strings.Split(string(data), "\n") {
		key, _, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(key) == "Environment" {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// environment applies one Environment= value to env as systemd reads it: words that are not
// NAME=VALUE are ignored with systemd's warning; at a syntax error (an unterminated quote)
// systemd stops reading the line, keeping the assignments before it.
func environment(value, where string, env map[string]string, journal *[]string) {
	words, err := splitSystemd(value, false)
	if err != nil {
		*journal = append(*journal, systemd+fmt.Sprintf("%s: Invalid syntax, ignoring: Environment=%s", where, value))
	}
	for _, w := range words {
		w = strings.ReplaceAll(w, "%%", "%") // the one specifier a value uses: a literal %
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			*journal = append(*journal, systemd+fmt.Sprintf("%s: Invalid environment assignment, ignoring: %s", where, w))
			continue
		}
		env[k] = v
	}
}

// splitSystemd splits s into words the way systemd splits unit-file values (Environment=) and
// the expansion of an unbraced $VAR in ExecStart=: words are separated by blanks; single and
// double quotes group blanks into a word, anywhere in it, and are removed; a backslash, inside
// quotes or not, escapes the next character. In Environment= (relax false) the C escapes \n,
// \t and \s (space) are decoded; in the $VAR split (relax true) they are not.
//
// This is systemd's extract_first_word with EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE (Environment=)
// and EXTRACT_UNQUOTE|EXTRACT_RELAX (the $VAR split), written here
// because no Go module the proxy serves implements it: go-systemd's unit package reads unit
// files but leaves values unsplit, podman's port of extract_first_word lives in a module the
// proxy does not serve, and mvdan.cc/sh splits by the shell's rules, which differ (systemd
// decodes C escapes inside quotes and expands no variables).
//
// With relax false (Environment=), an unterminated quote or a trailing backslash is an error;
// the words completed before it are returned with the error, since systemd has applied them by
// then. With relax true (ExecStart expansion), an unterminated quote runs to the end of the
// value.
func splitSystemd(s string, relax bool) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\':
			if i+1 >= len(rs) {
				if !relax {
					return words, errors.New("trailing backslash")
				}
				continue
			}
			i++
			if relax {
				cur.WriteRune(rs[i]) // ExecStart's $VAR split keeps the escaped character as is
			} else {
				cur.WriteRune(cUnescape(rs[i]))
			}
			inWord = true
		case quote != 0:
			if c == quote {
				quote = 0
				continue
			}
			cur.WriteRune(c)
		case c == '\'' || c == '"':
			quote = c
			inWord = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 && !relax {
		return words, errors.New("unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func cUnescape(c rune) rune {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 's':
		return ' '
	default:
		return c
	}
}
