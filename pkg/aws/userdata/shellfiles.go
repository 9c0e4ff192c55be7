package userdata

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// This file follows the files a script writes and then runs: userData often writes a script
// (cat <<EOF > /root/join.sh, echo ... > file) and runs it by path, with bash or sh, or sources
// it. When the reading knows the whole content (a here-document or echo of known words, written
// outside any uncertain branch), it reads the file where it runs: as a new bash process (only
// exported variables, no functions, no set -e, its arguments as $1...), or, for source and ., in
// the script itself. When it does not (cp, curl -o, tee of a pipe, a write in a branch the boot
// decides, a file written by a command it does not model), running the file is recorded as
// unknown, so that a check stays silent instead of saying bootstrap.sh is never called.

// writtenFile is a file the script wrote.
type writtenFile struct {
	content string
	// known is false when the reading cannot tell the content.
	known bool
	// line, endLine are the lines of the command that wrote it last.
	line, endLine int
}

// noteWrites records the files a simple command writes: its output redirections, and the
// destinations of the commands that copy or fetch files.
func (r *shellReader) noteWrites(st *syntax.Stmt, words []shellWord) {
	content, known := r.commandOutput(st, words)
	for _, rd := range st.Redirs {
		switch rd.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll:
			r.write(st, r.literal(rd.Word), content, known, false)
		case syntax.AppOut, syntax.AppAll:
			r.write(st, r.literal(rd.Word), content, known, true)
		}
	}
	if len(words) == 0 || words[0].unknown {
		return
	}
	if words[0].text == "tee" {
		args := words[1:]
		appendTo := slices.ContainsFunc(args, func(w shellWord) bool { return w.text == "-a" || w.text == "--append" })
		in, inKnown := r.heredoc(st)
		for _, a := range args {
			if !strings.HasPrefix(a.text, "-") {
				r.write(st, a, in, inKnown, appendTo)
			}
		}
	}
	for _, dest := range copyDestinations(words) {
		r.write(st, dest, "", false, false)
	}
}

// copyDestinations are the files a command that copies or fetches files writes, with content the
// reading cannot know.
func copyDestinations(words []shellWord) []shellWord {
	args := words[1:]
	var out []shellWord
	switch words[0].text {
	case "cp", "mv", "install", "ln", "rsync", "scp":
		if n := len(args); n > 0 {
			out = append(out, args[n-1])
		}
	case "curl", "wget", "aws":
		for i, a := range args {
			switch {
			case (a.text == "-o" || a.text == "-O" || a.text == "--output" || a.text == "--output-document") && i+1 < len(args):
				out = append(out, args[i+1])
			case words[0].text == "aws" && a.text == "cp" && i+2 < len(args):
				out = append(out, args[i+2])
			}
		}
	}
	return out
}

// commandOutput is what a command prints, when the reading knows it: cat of a here-document,
// echo of known words without options, a redirection alone (an empty file).
func (r *shellReader) commandOutput(st *syntax.Stmt, words []shellWord) (string, bool) {
	if len(words) == 0 {
		return "", true
	}
	for _, w := range words {
		if w.unknown {
			return "", false
		}
	}
	switch words[0].text {
	case "cat":
		if len(words) == 1 || len(words) == 2 && words[1].text == "-" {
			return r.heredoc(st)
		}
	case "echo":
		args := make([]string, 0, len(words)-1)
		for _, w := range words[1:] {
			if strings.HasPrefix(w.text, "-") {
				return "", false // -n, -e: not modelled
			}
			args = append(args, w.text)
		}
		return strings.Join(args, " ") + "\n", true
	}
	return "", false
}

// heredoc is the text of a statement's here-document, expanded as bash expands it (not at all
// when its delimiter is quoted).
func (r *shellReader) heredoc(st *syntax.Stmt) (string, bool) {
	for _, rd := range st.Redirs {
		if (rd.Op != syntax.Hdoc && rd.Op != syntax.DashHdoc) || rd.Hdoc == nil {
			continue
		}
		if unknown, _ := r.wordUnknown(rd.Hdoc); unknown {
			return "", false
		}
		text, err := expand.Document(r.expandConfig(rd.Hdoc), rd.Hdoc)
		if err != nil || strings.Contains(text, unknownText) {
			return "", false
		}
		return text, true
	}
	return "", false
}

// write records that the statement writes a file. A write in a branch that may not run leaves
// the file's content unknown.
func (r *shellReader) write(st *syntax.Stmt, target shellWord, content string, known, appendTo bool) {
	if target.unknown || target.text == "" || strings.HasPrefix(target.text, "/dev/") {
		return
	}
	f := writtenFile{content: content, known: known && r.cond == 0, line: int(st.Pos().Line()), endLine: int(st.End().Line())}
	for _, rd := range st.Redirs {
		if rd.Hdoc != nil && rd.Hdoc.End().IsValid() {
			// The body and the closing delimiter, which the statement's end does not cover.
			f.endLine = max(f.endLine, int(rd.Hdoc.End().Line())+1)
		}
	}
	if appendTo {
		old, ok := r.files[path.Clean(target.text)]
		f.content = old.content + content
		f.known = f.known && ok && old.known
	}
	r.files[path.Clean(target.text)] = f
}

// runFile reads a file the script wrote where the script runs it; it returns false when the file
// is not one the script wrote. asChild is true for a new bash process, false for source.
func (r *shellReader) runFile(name string, args []shellWord, asChild bool) bool {
	f, ok := r.files[path.Clean(name)]
	if !ok {
		return false
	}
	if first, _, _ := strings.Cut(f.content, "\n"); asChild && strings.HasPrefix(first, "#!") && !strings.Contains(first, "sh") {
		f.known = false // a script for another interpreter
	}
	if !f.known || r.depth >= maxShellDepth || len(r.out) == 0 {
		if r.unknownRunAt == 0 && len(r.out) > 0 {
			r.unknownRunAt = r.out[len(r.out)-1].line
		}
		if !asChild {
			r.makeOpaque()
		}
		return true
	}
	for l := f.line; l <= f.endLine; l++ {
		r.followed[l] = true
	}
	if !asChild {
		params := r.params
		if len(args) > 0 {
			r.params = args
		}
		if err := r.readNested(f.content); err != nil {
			r.makeOpaque() // bash abandons the file at the error, after what it has set
		}
		r.params = params
		return true
	}
	r.subshell(func() {
		env := map[string]shellVar{}
		for name, v := range r.vars {
			if v.exported && !v.unset {
				env[name] = v
			}
		}
		r.vars, r.funcs, r.errexit, r.params = env, map[string]*syntax.Stmt{}, false, slices.Clone(args)
		locals, funcConds := r.locals, r.funcConds
		r.locals, r.funcConds = nil, nil
		// A syntax error ends the child where bash stops it; the reading of it has ended there.
		_ = r.readNested(f.content)
		r.locals, r.funcConds = locals, funcConds
	})
	return true
}

// scriptArg returns the script a `bash [options] FILE args...` runs, and its arguments.
func scriptArg(args []shellWord) (shellWord, []shellWord, bool) {
	for i, a := range args {
		switch {
		case a.unknown:
			return shellWord{}, nil, false
		case a.text == "-c" || a.text == "-s" || a.text == "-o" || a.text == "--":
			return shellWord{}, nil, false
		case strings.HasPrefix(a.text, "-") || strings.HasPrefix(a.text, "+"):
			continue
		default:
			return a, args[i+1:], true
		}
	}
	return shellWord{}, nil, false
}
