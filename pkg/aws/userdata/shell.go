package userdata

import (
	"regexp"
	"strings"
)

// This file reads shell scripts the way bash would, as far as a static check can: quotes,
// escapes, line continuations, comments, here-documents, and the variables the script assigns
// plainly (NAME=value, export NAME=value). Anything it cannot follow ($(...), `...`, a variable it
// never saw assigned) makes the word unknown, so that checks can stay silent instead of guessing.

// shellWord is one word of a command after expansion and quote removal.
type shellWord struct {
	text string
	// unknown is true when the word holds an expansion the reader cannot follow.
	unknown bool
	// raw is the word as written in the script, for messages.
	raw string
}

// shellVar is a variable the script assigned.
type shellVar struct {
	value    string
	unknown  bool
	exported bool
}

// shellCommand is one simple command.
type shellCommand struct {
	// line is where the command starts, endLine where its last word ends; 1-based.
	line, endLine int
	// assignments are the NAME=value words before the command name: the command's environment.
	assignments map[string]shellVar
	// words are the command name and its arguments.
	words []shellWord
	// env is every exported variable at the command, its assignments included.
	env map[string]shellVar
}

var identifierAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\+?=`)

// shellReader reads one script command by command, tracking the variables it assigns.
type shellReader struct {
	src  string
	pos  int
	line int
	vars map[string]shellVar
	// heredocs are the delimiters of here-documents whose bodies start after the current line.
	heredocs []heredoc
}

type heredoc struct {
	delimiter string
	stripTabs bool
}

// readShell returns the simple commands of a script, in order.
func readShell(script string) []shellCommand {
	r := &shellReader{src: script, line: 1, vars: map[string]shellVar{}}
	var out []shellCommand
	for r.pos < len(r.src) {
		cmd, ok := r.next()
		if !ok {
			continue
		}
		r.apply(&cmd)
		out = append(out, cmd)
	}
	return out
}

// apply records the command's effect on variables and fills its env.
func (r *shellReader) apply(cmd *shellCommand) {
	if len(cmd.words) == 0 {
		for name, v := range cmd.assignments {
			v.exported = r.vars[name].exported
			r.vars[name] = v
		}
	} else if name := cmd.words[0].text; name == "export" || name == "declare" || name == "typeset" || name == "readonly" || name == "local" {
		export := name == "export"
		for _, w := range cmd.words[1:] {
			if w.text == "-x" {
				export = true
				continue
			}
			key, value, isAssignment := strings.Cut(w.text, "=")
			if !identifierAssignment.MatchString(key + "=") {
				continue
			}
			v := r.vars[key]
			if isAssignment {
				v.value, v.unknown = value, w.unknown
			}
			v.exported = v.exported || export
			r.vars[key] = v
		}
	}
	cmd.env = map[string]shellVar{}
	for name, v := range r.vars {
		if v.exported {
			cmd.env[name] = v
		}
	}
	for name, v := range cmd.assignments {
		cmd.env[name] = v
	}
}

// next reads one simple command; ok is false for an empty one.
func (r *shellReader) next() (shellCommand, bool) {
	b := &commandBuilder{r: r, cmd: shellCommand{line: r.line, assignments: map[string]shellVar{}}}
	for r.pos < len(r.src) {
		if b.step() {
			return b.cmd, true
		}
	}
	b.endWord()
	return b.cmd, b.hasContent()
}

// commandBuilder accumulates the words of one command.
type commandBuilder struct {
	r         *shellReader
	cmd       shellCommand
	cur       strings.Builder
	inWord    bool
	unknown   bool
	noSplit   bool
	wordStart int
}

func (b *commandBuilder) hasContent() bool {
	return len(b.cmd.words) > 0 || len(b.cmd.assignments) > 0
}

// step reads one character (or construct) and reports whether the command ended.
func (b *commandBuilder) step() bool {
	r := b.r
	c := r.src[r.pos]
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		b.endWord()
		r.pos++
	case c == '\n':
		b.endWord()
		r.newline()
		return b.endCommand()
	case strings.IndexByte(";&|()", c) >= 0:
		b.endWord()
		r.pos++
		return b.endCommand()
	case c == '#' && !b.inWord:
		for r.pos < len(r.src) && r.src[r.pos] != '\n' {
			r.pos++
		}
	case c == '<' && strings.HasPrefix(r.src[r.pos:], "<<") && !strings.HasPrefix(r.src[r.pos:], "<<<"):
		b.endWord()
		r.readHeredocStart()
	case c == '\\':
		b.escaped()
	case c == '\'':
		b.singleQuoted()
	case c == '"':
		b.startWord()
		r.pos++
		b.unknown = r.readDoubleQuoted(&b.cur) || b.unknown
	case c == '$' || c == '`':
		b.startWord()
		b.expand()
	default:
		b.startWord()
		b.cur.WriteByte(c)
		r.pos++
	}
	return false
}

// singleQuoted reads a single-quoted string: everything up to the next quote, literally.
func (b *commandBuilder) singleQuoted() {
	r := b.r
	b.startWord()
	end := strings.IndexByte(r.src[r.pos+1:], '\'')
	if end < 0 {
		end = len(r.src) - r.pos - 1
	}
	text := r.src[r.pos+1 : r.pos+1+end]
	r.line += strings.Count(text, "\n")
	b.cur.WriteString(text)
	r.pos += end + 2
}

// endCommand ends the command if it has words; an empty one starts again on the current line.
func (b *commandBuilder) endCommand() bool {
	if b.hasContent() {
		return true
	}
	b.cmd.line = b.r.line
	return false
}

// escaped reads a backslash outside quotes: a line continuation, or a literal character.
func (b *commandBuilder) escaped() {
	r := b.r
	if r.pos+1 < len(r.src) && r.src[r.pos+1] == '\n' {
		r.pos += 2
		r.line++
		return
	}
	b.startWord()
	if r.pos+1 < len(r.src) {
		b.cur.WriteByte(r.src[r.pos+1])
	}
	r.pos += 2
}

// expand reads an unquoted expansion, which the shell splits into words at blanks (but not in
// an assignment).
func (b *commandBuilder) expand() {
	value, unknown := b.r.readExpansion()
	b.unknown = b.unknown || unknown
	if b.noSplit || unknown {
		b.cur.WriteString(value)
		return
	}
	fields := strings.Fields(value)
	if len(fields) == 0 {
		return
	}
	if isBlank(value[0]) {
		b.endWord()
		b.startWord()
	}
	for i, f := range fields {
		if i > 0 {
			b.endWord()
			b.startWord()
		}
		b.cur.WriteString(f)
	}
	if isBlank(value[len(value)-1]) {
		b.endWord()
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

func (b *commandBuilder) endWord() {
	if !b.inWord {
		return
	}
	r := b.r
	w := shellWord{text: b.cur.String(), unknown: b.unknown, raw: strings.TrimSpace(r.src[b.wordStart:r.pos])}
	b.cmd.endLine = r.line
	if len(b.cmd.words) == 0 && identifierAssignment.MatchString(w.raw) {
		name, value, _ := strings.Cut(w.text, "=")
		v := shellVar{value: value, unknown: w.unknown}
		if base, appending := strings.CutSuffix(name, "+"); appending {
			// NAME+=value appends to what NAME holds.
			name = base
			if old, ok := r.vars[name]; ok {
				v = shellVar{value: old.value + value, unknown: old.unknown || w.unknown}
			} else {
				v.unknown = true
			}
		}
		b.cmd.assignments[name] = v
	} else {
		b.cmd.words = append(b.cmd.words, w)
	}
	b.cur.Reset()
	b.inWord, b.unknown, b.noSplit = false, false, false
}

func (b *commandBuilder) startWord() {
	if b.inWord {
		return
	}
	b.inWord, b.wordStart = true, b.r.pos
	// Assignment values are not split into words, and neither are export's arguments.
	b.noSplit = identifierAssignment.MatchString(b.r.src[b.r.pos:]) && (len(b.cmd.words) == 0 || isDeclaration(b.cmd.words[0].text))
}

func isDeclaration(name string) bool {
	switch name {
	case "export", "declare", "typeset", "readonly", "local":
		return true
	}
	return false
}

// newline steps over a line end and then over the bodies of pending here-documents.
func (r *shellReader) newline() {
	r.pos++
	r.line++
	for _, h := range r.heredocs {
		for r.pos < len(r.src) {
			end := strings.IndexByte(r.src[r.pos:], '\n')
			if end < 0 {
				end = len(r.src) - r.pos
			}
			line := r.src[r.pos : r.pos+end]
			r.pos += end + 1
			r.line++
			if h.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delimiter {
				break
			}
		}
	}
	r.heredocs = nil
	r.pos = min(r.pos, len(r.src))
}

// readHeredocStart reads <<[-]DELIM and queues the here-document.
func (r *shellReader) readHeredocStart() {
	r.pos += 2
	h := heredoc{}
	if r.pos < len(r.src) && r.src[r.pos] == '-' {
		h.stripTabs = true
		r.pos++
	}
	for r.pos < len(r.src) && (r.src[r.pos] == ' ' || r.src[r.pos] == '\t') {
		r.pos++
	}
	var d strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' {
			break
		}
		if c != '\'' && c != '"' && c != '\\' {
			d.WriteByte(c)
		}
		r.pos++
	}
	h.delimiter = d.String()
	r.heredocs = append(r.heredocs, h)
}

// readDoubleQuoted reads up to the closing double quote; it reports whether an expansion was
// unknown.
func (r *shellReader) readDoubleQuoted(cur *strings.Builder) bool {
	unknown := false
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch {
		case c == '"':
			r.pos++
			return unknown
		case c == '\\' && r.pos+1 < len(r.src) && strings.IndexByte("$`\"\\\n", r.src[r.pos+1]) >= 0:
			if r.src[r.pos+1] == '\n' {
				r.line++
			} else {
				cur.WriteByte(r.src[r.pos+1])
			}
			r.pos += 2
		case c == '$' || c == '`':
			value, unk := r.readExpansion()
			unknown = unknown || unk
			cur.WriteString(value)
		default:
			if c == '\n' {
				r.line++
			}
			cur.WriteByte(c)
			r.pos++
		}
	}
	return unknown
}

var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

// readExpansion reads a $-expansion or backquote at r.pos and returns its value, or its source
// text and unknown=true when the reader cannot follow it.
func (r *shellReader) readExpansion() (string, bool) {
	start := r.pos
	if r.src[r.pos] == '`' {
		end := strings.IndexByte(r.src[r.pos+1:], '`')
		if end < 0 {
			end = len(r.src) - r.pos - 1
		}
		r.pos = min(r.pos+end+2, len(r.src))
		return r.src[start:r.pos], true
	}
	r.pos++ // $
	if r.pos >= len(r.src) {
		return "$", false
	}
	switch c := r.src[r.pos]; c {
	case '(':
		r.skipParens()
		return r.src[start:r.pos], true
	case '{':
		return r.readBraced(start)
	default:
		name := variableName.FindString(r.src[r.pos:])
		if name == "" {
			if strings.IndexByte("@*#?$!-0123456789", c) >= 0 {
				r.pos++
				return r.src[start:r.pos], true
			}
			return "$", false
		}
		r.pos += len(name)
		v, known := r.vars[name]
		if !known || v.unknown {
			return r.src[start:r.pos], true
		}
		return v.value, false
	}
}

// skipParens steps over a balanced $( ... ) or $(( ... )).
func (r *shellReader) skipParens() {
	depth := 0
	for r.pos < len(r.src) {
		switch r.src[r.pos] {
		case '(':
			depth++
		case ')':
			depth--
		case '\n':
			r.line++
		}
		r.pos++
		if depth == 0 {
			return
		}
	}
}

// readBraced reads ${NAME} or ${NAME:-default}; other operators are unknown.
func (r *shellReader) readBraced(start int) (string, bool) {
	end := strings.IndexByte(r.src[r.pos:], '}')
	if end < 0 {
		r.pos = len(r.src)
		return r.src[start:], true
	}
	inner := r.src[r.pos+1 : r.pos+end]
	r.pos += end + 1
	name := variableName.FindString(inner)
	rest := inner[len(name):]
	v, known := r.vars[name]
	switch {
	case name == "":
		return r.src[start:r.pos], true
	case rest == "" && known && !v.unknown:
		return v.value, false
	case rest == "":
		return r.src[start:r.pos], true
	case strings.HasPrefix(rest, ":-") || strings.HasPrefix(rest, "-"):
		if known && v.unknown {
			return r.src[start:r.pos], true
		}
		if known && v.value != "" {
			return v.value, false
		}
		return strings.TrimPrefix(strings.TrimPrefix(rest, ":"), "-"), false
	default:
		return r.src[start:r.pos], true
	}
}

// systemdWords splits a value the way systemd splits an unbraced $VARIABLE in ExecStart: at
// blanks, honouring double and single quotes, which it then removes. A %% becomes %.
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

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
