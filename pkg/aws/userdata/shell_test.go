package userdata

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// shellCall is a command as a test states it: its words, or "?" for an unknown word.
func shellCalls(s shellScript) [][]string {
	var out [][]string
	for _, cmd := range s.commands {
		var words []string
		for _, w := range cmd.words {
			if w.unknown {
				words = append(words, "?")
			} else {
				words = append(words, w.text)
			}
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

func TestReadShell(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   [][]string
	}{
		{name: "quotes, escapes and continuation lines", script: "echo 'a b' \"c $X\" d\\ e \\\n  f\n", want: [][]string{{"echo", "a b", "?", "d e", "f"}}},
		{name: "assignments are followed", script: "X=1\necho \"$X\" ${X} \"${X}2\"\n", want: [][]string{{"echo", "1", "1", "12"}}},
		{name: "unquoted expansions are split", script: "X='a  b'\necho $X \"$X\"\n", want: [][]string{{"echo", "a", "b", "a  b"}}},
		{name: "ANSI-C quotes", script: "echo $'a\\tb' $'it\\'s'\n", want: [][]string{{"echo", "a\tb", "it's"}}},
		{name: "defaults of variables never assigned", script: "echo ${A:-x} ${B-y} ${C:+z} ${D}\n", want: [][]string{{"echo", "x", "y", "?"}}},
		{name: "here-document bodies are not commands", script: "cat <<EOF >/tmp/x\nrm -rf /\nEOF\ncat <<-'E2'\n\tfoo\n\tE2\necho done\n", want: [][]string{{"cat"}, {"cat"}, {"echo", "done"}}},
		{name: "command substitution is unknown (and its commands are not read)", script: "X=$(hostname)\necho $X \"$(date)\" `id`\n", want: [][]string{{"echo", "?", "?", "?"}}},
		{name: "functions run where they are called", script: "f() { echo \"$1-$2\" \"$#\"; }\necho before\nf a b\n", want: [][]string{{"echo", "before"}, {"f", "a", "b"}, {"echo", "a-b", "2"}}},
		{name: "local variables are restored", script: "X=outer\nf() { local X=inner; echo $X; }\nf\necho $X\n", want: [][]string{{"f"}, {"local", "X=inner"}, {"echo", "inner"}, {"echo", "outer"}}},
		{name: "branches that disagree make a variable unknown", script: "X=1\nif test -f /x; then X=2; else X=2; fi\necho $X\nif grep -q a /f; then Y=1; fi\necho $Y\n", want: [][]string{{"test", "-f", "/x"}, {"echo", "2"}, {"grep", "-q", "a", "/f"}, {"echo", "?"}}},
		{name: "conditions on known values pick their branch", script: "X=yes\nif [ \"$X\" = yes ]; then A=1; else A=2; fi\nif [[ -z $X || $X == no ]]; then B=1; elif test \"$X\" != yes; then B=2; else B=3; fi\n[ -n \"$X\" ] && C=1 || C=2\ntrue || D=1\n! false && E=1\n[ 3 -gt 2 ] && F=1\necho $A $B $C ${D:-none} $E $F\n",
			want: [][]string{{"[", "yes", "=", "yes", "]"}, {"test", "yes", "!=", "yes"}, {"[", "-n", "yes", "]"}, {"true"}, {"false"}, {"[", "3", "-gt", "2", "]"}, {"echo", "1", "3", "1", "none", "1", "1"}}},
		{name: "subshells and pipelines keep their variables", script: "X=1\n(X=2)\necho x | X=3 read Y\necho $X $Y\n", want: [][]string{{"echo", "x"}, {"read", "Y"}, {"echo", "1", "?"}}},
		{name: "unset", script: "X=1\nunset X\necho \"${X:-none}\" \"$X\"\n", want: [][]string{{"unset", "X"}, {"echo", "none", ""}}},
		{name: "export of a variable never assigned is unknown", script: "export X\necho \"$X\"\n", want: [][]string{{"export", "X"}, {"echo", "?"}}},
		{name: "eval of known text", script: "C='echo hi'\neval \"$C\"\n", want: [][]string{{"eval", "echo hi"}, {"echo", "hi"}}},
		{name: "source makes every variable unknown", script: "X=1\n. /etc/profile\necho $X ${Y:-d}\n", want: [][]string{{".", "/etc/profile"}, {"echo", "?", "?"}}},
		{name: "exit ends the script", script: "echo a\nexit 1\necho b\n", want: [][]string{{"echo", "a"}, {"exit", "1"}}},
		{name: "exit in a branch does not", script: "if grep -q a /f; then exit 1; fi\necho b\n", want: [][]string{{"grep", "-q", "a", "/f"}, {"exit", "1"}, {"echo", "b"}}},
		{name: "a branch that cannot run is not read", script: "if false; then exit 1; fi\necho b\n", want: [][]string{{"false"}, {"echo", "b"}}},
		{name: "a syntax error ends the script where bash stops", script: "echo a\necho b )\necho c\n", want: [][]string{{"echo", "a"}}},
		{name: "return ends the function", script: "f() { echo in; return 0; echo after; }\nf\necho end\n", want: [][]string{{"f"}, {"echo", "in"}, {"return", "0"}, {"echo", "end"}}},
		{name: "a return in a branch may not", script: "f() { if grep -q a /f; then return 1; fi; echo maybe; }\nf\n", want: [][]string{{"f"}, {"grep", "-q", "a", "/f"}, {"return", "1"}, {"echo", "maybe"}}},
		{name: "globs depend on the files", script: "echo *.sh 'a*' x\\?\n", want: [][]string{{"echo", "?", "a*", "x?"}}},
		{name: "brace expansion", script: "echo a{b,c}d\n", want: [][]string{{"echo", "abd", "acd"}}},
		{name: "a case on a known word picks its item", script: "M=gpu\ncase \"$M\" in\n  cpu|arm) A=1 ;;\n  gpu) A=2 ;;\n  *) A=3 ;;\nesac\ncase x in y) B=1 ;; *) B=2 ;; esac\necho $A $B\n", want: [][]string{{"echo", "2", "2"}}},
		{name: "a case on an unknown word may run any item", script: "case \"$(uname -m)\" in\n  x86_64) A=1 ;;\n  *) A=2 ;;\nesac\necho $A\n", want: [][]string{{"echo", "?"}}},
		{name: "a case with glob patterns is not decided", script: "M=gpu\ncase $M in g*) A=1 ;; esac\necho $A\n", want: [][]string{{"echo", "?"}}},
		{name: "comments", script: "# echo no\necho yes # not this\n", want: [][]string{{"echo", "yes"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, shellCalls(readShell(tt.script))); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadShellLinesAndEnvironment(t *testing.T) {
	s := readShell("#!/bin/bash\nexport A=1\nB=2\nC=3 /bin/run \\\n  x\n")
	if len(s.commands) != 3 {
		t.Fatalf("commands: %+v", s.commands)
	}
	run := s.commands[2]
	if run.line != 4 || run.endLine != 5 {
		t.Errorf("lines = %d-%d, want 4-5", run.line, run.endLine)
	}
	env := map[string]string{}
	for k, v := range run.env {
		env[k] = v.value
	}
	if diff := cmp.Diff(map[string]string{"A": "1", "C": "3"}, env); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}

// FuzzReadShell reads arbitrary scripts: it never panics, never loops, and every command it
// reports lies within the script's lines.
func FuzzReadShell(f *testing.F) {
	f.Add(s2Script)
	f.Add("f() { f; }\nf\n")
	f.Add("X=1\nif a; then X=2; fi\ncase $X in a) eval \"$X\";; esac\nbash -c 'echo $0'\n")
	f.Add("cat <<EOF\n$(x)\nEOF\n")
	f.Fuzz(func(t *testing.T, script string) {
		s := readShell(script)
		lines := strings.Count(script, "\n") + 1
		for _, cmd := range s.commands {
			if cmd.line < 1 || cmd.line > cmd.endLine || cmd.endLine > lines {
				t.Fatalf("command at lines %d-%d of a %d-line script: %+v", cmd.line, cmd.endLine, lines, cmd)
			}
		}
		_ = CheckBootstrapScript(script)
		// No kubelet registers no taints; its flags are kept only for a kubelet that refuses to
		// start on a --register-with-taints entry (Registration.Starts), so that the join check
		// can name the entry.
		if reg, err := ReadRegistration(awsv1.AMIFamilyAL2, script); err == nil && !reg.Starts &&
			(len(reg.Taints) > 0 || len(reg.KubeletFlags) > 0 && len(flagValues(reg.KubeletFlags, "--register-with-taints")) == 0) {
			t.Fatalf("a registration without a kubelet has taints, or flags without the taint flag it refused: %v", reg)
		}
	})
}
