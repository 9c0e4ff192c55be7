package shell

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseWords(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   [][]string
	}{
		{name: "plain words", script: "a b  c\n", want: [][]string{{"a", "b", "c"}}},
		{name: "single quotes keep everything", script: `a 'b "c" $X \d'`, want: [][]string{{"a", `b "c" $X \d`}}},
		{name: "double quotes keep inner single quotes", script: `a "b 'c'"`, want: [][]string{{"a", "b 'c'"}}},
		{name: "double quote escapes", script: `a "x\"y\\z\$w\q"`, want: [][]string{{"a", `x"y\z$w\q`}}},
		{name: "quotes join with bare text", script: `--k='--a="b"'c`, want: [][]string{{`--k=--a="b"c`}}},
		{name: "backslash outside quotes", script: `a b\ c \'d`, want: [][]string{{"a", "b c", "'d"}}},
		{name: "line continuation", script: "a \\\n  b\nc", want: [][]string{{"a", "b"}, {"c"}}},
		{name: "separators", script: "a; b && c || d | e & f", want: [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}},
		{name: "comments", script: "#!/bin/bash\na # b c\nd#e", want: [][]string{{"a"}, {"d#e"}}},
		{name: "empty quoted word kept", script: `a "" ''`, want: [][]string{{"a", "", ""}}},
		{name: "assigned variable expands", script: "X=1\na $X ${X}2 \"$X\"", want: [][]string{{"a", "1", "12", "1"}}},
		{name: "unset variable vanishes unquoted", script: "a $NOPE b \"$NOPE\"", want: [][]string{{"a", "b", ""}}},
		{name: "unquoted expansion is field split", script: "X='p q'\na $X \"$X\"", want: [][]string{{"a", "p", "q", "p q"}}},
		{name: "assignment value is not split", script: "X='p q'\nY=$X\na \"$Y\"", want: [][]string{{"a", "p q"}}},
		{name: "export assigns", script: "export X=\"v w\"\na \"$X\"", want: [][]string{{"export", "X=v w"}, {"a", "v w"}}},
		{name: "command substitution literal", script: "a $(curl -s http://x) `b c` $1", want: [][]string{{"a", "$(curl -s http://x)", "`b c`", "$1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := Parse(tt.script)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			var got [][]string
			for _, c := range cmds {
				if len(c.Words) > 0 {
					got = append(got, c.Words)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("words (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEnvironment(t *testing.T) {
	cmds, err := Parse("export A=1\nB=2\nC=3 run x\n")
	if err != nil {
		t.Fatal(err)
	}
	last := cmds[len(cmds)-1]
	if diff := cmp.Diff(map[string]string{"A": "1", "C": "3"}, last.Env); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	if last.Line != 3 {
		t.Errorf("Line = %d, want 3", last.Line)
	}
}

func TestParseUnset(t *testing.T) {
	cmds, err := Parse("A=1\nrun $A $B \"${C}\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"B", "C"}, cmds[1].Unset); diff != "" {
		t.Errorf("Unset (-want +got):\n%s", diff)
	}
}

func TestParseSyntaxError(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		wantCmds  int
		wantStart int
		wantMsg   string
	}{
		{name: "unterminated single quote", script: "ok 1\nrun '--a\nmore\n", wantCmds: 1, wantStart: 2, wantMsg: "unexpected EOF while looking for matching `''"},
		{name: "unterminated double quote", script: "run \"x\n", wantCmds: 0, wantStart: 1, wantMsg: "unexpected EOF while looking for matching `\"'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := Parse(tt.script)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse() error = %v, want *SyntaxError", err)
			}
			if len(cmds) != tt.wantCmds || se.StartLine != tt.wantStart || se.Msg != tt.wantMsg {
				t.Errorf("got %d commands, %+v; want %d, line %d, %q", len(cmds), se, tt.wantCmds, tt.wantStart, tt.wantMsg)
			}
		})
	}
}

func TestSplitSystemd(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		relax   bool
		want    []string
		wantErr bool
	}{
		{name: "inner double quotes removed", in: `--register-with-taints="karpenter.sh/unregistered:NoExecute" --max-pods=110`, want: []string{"--register-with-taints=karpenter.sh/unregistered:NoExecute", "--max-pods=110"}},
		{name: "quoted blanks stay in a word", in: `'KUBELET_EXTRA_ARGS=--a=1 --b=2'`, want: []string{"KUBELET_EXTRA_ARGS=--a=1 --b=2"}},
		{name: "escapes", in: `a\ b c\"d`, want: []string{"a b", `c"d`}},
		{name: "unterminated strict keeps the words before", in: `x 'a b`, want: []string{"x"}, wantErr: true},
		{name: "unterminated relaxed", in: `"a b`, relax: true, want: []string{"a b"}},
		{name: "empty", in: "  ", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitSystemd(tt.in, tt.relax)
			if (err != nil) != tt.wantErr {
				t.Fatalf("SplitSystemd() error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SplitSystemd() (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"a 'b' \"c $D\" ${E} $(f) `g`\n", "X=1\nexport Y=$X\n#c\n", "a \\\nb; c && d"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script string) {
		_, _ = Parse(script) // must not panic
	})
}

func FuzzSplitSystemd(f *testing.F) {
	f.Add(`'K=--a="b c"' d\ e`, true)
	f.Fuzz(func(t *testing.T, s string, relax bool) {
		_, _ = SplitSystemd(s, relax) // must not panic
	})
}
