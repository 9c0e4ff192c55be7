package shell

import (
	"fmt"
	"maps"
	"strings"
)

// Command is one simple command of a script after quote removal and expansion.
type Command struct {
	// Line is the 1-based line on which the command starts.
	Line int
	// Assignments are the NAME=value words before the command name, applied to its environment
	// only. A command made only of assignments (or an export) has no Words.
	Assignments map[string]string
	// Words are the command name and its arguments.
	Words []string
	// Env is what the command sees in its environment: the variables exported so far plus its
	// own Assignments.
	Env map[string]string
	// Unset are the variables the command expanded while they were unset (they expanded to
	// nothing); under set -u the shell would have stopped at this command.
	Unset []string
}

// SyntaxError is a script that the shell refuses to read past, such as an unterminated quote.
// The commands before it run; the one it is in, and every later one, do not.
type SyntaxError struct {
	// Line is where the shell gave up (the end of the script for an unterminated quote).
	Line int
	// StartLine is where the offending construct began.
	StartLine int
	// Msg is bash's message, such as "unexpected EOF while looking for matching `''".
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d: %s", e.StartLine, e.Msg)
}

// Parse reads script and returns its simple commands in order.
//
// Variables set by earlier assignment commands (X=1, export X=1) are expanded in later words
// ($X, ${X}); unset variables expand to nothing, and an unquoted expansion is split into fields
// at blanks, as in a shell. Special parameters ($1, $@, $?, ...), command substitutions ($(...),
// `...`) and arithmetic ($((...))) are kept literally. Newlines, ';', '&', '|', '(' and ')' end
// a command; redirection operators are kept as words. Here-documents and control structures are
// not recognised: their bodies are read as ordinary commands.
//
// On a syntax error Parse returns the commands completed before it together with a
// *SyntaxError.
func Parse(script string) ([]Command, error) {
	p := &parser{src: []rune(script), line: 1, vars: map[string]string{}, exported: map[string]bool{}}
	return p.run()
}

type parser struct {
	src      []rune
	pos      int
	line     int
	vars     map[string]string
	exported map[string]bool

	cmds      []Command
	words     []string
	assignOK  []bool // per word: it was written NAME=... with an unquoted name
	cmdLine   int
	cur       strings.Builder
	inWord    bool
	curAssign bool
	begun     bool
	unset     []string
}

func (p *parser) run() ([]Command, error) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\n':
			p.endCommand()
			p.pos++
			p.line++
		case c == ' ' || c == '\t' || c == '\r':
			p.endWord()
			p.pos++
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			p.endCommand()
			p.pos++
		case c == '#' && !p.inWord:
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			if err := p.wordChar(); err != nil {
				return p.cmds, err
			}
		}
	}
	p.endCommand()
	return p.cmds, nil
}

// startWord marks the beginning of a word and notes whether it is an assignment.
func (p *parser) startWord() {
	p.begin()
	p.inWord = true
}

// begin notes where a word begins and whether it is an assignment, without creating the word:
// an unquoted expansion to nothing must not produce an empty word.
func (p *parser) begin() {
	if p.begun {
		return
	}
	p.begun = true
	if len(p.words) == 0 {
		p.cmdLine = p.line
	}
	p.curAssign = p.looksLikeAssignment()
}

func (p *parser) looksLikeAssignment() bool {
	i := p.pos
	for ; i < len(p.src); i++ {
		c := p.src[i]
		if c == '=' {
			return i > p.pos
		}
		if !isNameChar(c, i == p.pos) {
			return false
		}
	}
	return false
}

func (p *parser) wordChar() error {
	c := p.src[p.pos]
	switch c {
	case '\\':
		if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n' {
			p.pos += 2
			p.line++
			return nil
		}
		p.startWord()
		if p.pos+1 < len(p.src) {
			p.cur.WriteRune(p.src[p.pos+1])
		}
		p.pos += 2
		return nil
	case '\'':
		p.startWord()
		return p.singleQuoted()
	case '"':
		p.startWord()
		return p.doubleQuoted()
	case '$':
		p.begin()
		return p.dollar(false)
	case '`':
		p.startWord()
		return p.backquoted()
	}
	p.startWord()
	p.cur.WriteRune(c)
	p.pos++
	return nil
}

func (p *parser) singleQuoted() error {
	start := p.line
	p.pos++
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		if c == '\'' {
			return nil
		}
		if c == '\n' {
			p.line++
		}
		p.cur.WriteRune(c)
	}
	return &SyntaxError{Line: p.line, StartLine: start, Msg: "unexpected EOF while looking for matching `''"}
}

func (p *parser) doubleQuoted() error {
	start := p.line
	p.pos++
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '"':
			p.pos++
			return nil
		case '\\':
			if p.pos+1 < len(p.src) {
				n := p.src[p.pos+1]
				switch n {
				case '\n':
					p.line++
				case '$', '`', '"', '\\':
					p.cur.WriteRune(n)
				default:
					p.cur.WriteRune('\\')
					p.cur.WriteRune(n)
				}
				p.pos += 2
				continue
			}
			p.cur.WriteRune(c)
			p.pos++
		case '$':
			if err := p.dollar(true); err != nil {
				return err
			}
		case '`':
			if err := p.backquoted(); err != nil {
				return err
			}
		default:
			if c == '\n' {
				p.line++
			}
			p.cur.WriteRune(c)
			p.pos++
		}
	}
	return &SyntaxError{Line: p.line, StartLine: start, Msg: "unexpected EOF while looking for matching `\"'"}
}

func (p *parser) backquoted() error {
	start := p.line
	begin := p.pos
	p.pos++
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch c {
		case '\\':
			p.pos++
		case '\n':
			p.line++
		case '`':
			p.inWord = true
			p.cur.WriteString(string(p.src[begin:p.pos]))
			return nil
		}
	}
	return &SyntaxError{Line: p.line, StartLine: start, Msg: "unexpected EOF while looking for matching ``'"}
}

// dollar handles '$' at p.pos: a variable expansion, or something kept literally.
func (p *parser) dollar(quoted bool) error {
	begin := p.pos
	p.pos++
	if p.pos >= len(p.src) {
		p.inWord = true
		p.cur.WriteRune('$')
		return nil
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		return p.substitution(begin)
	case c == '{':
		return p.braced(begin, quoted)
	case isNameChar(c, true):
		end := p.pos
		for end < len(p.src) && isNameChar(p.src[end], false) {
			end++
		}
		name := string(p.src[p.pos:end])
		p.pos = end
		p.expand(name, quoted)
	default:
		// Special parameters and a lone '$' stay literal.
		p.inWord = true
		p.cur.WriteRune('$')
	}
	return nil
}

// braced expands ${NAME}; other ${...} forms are kept literally.
func (p *parser) braced(begin int, quoted bool) error {
	end := p.pos + 1
	for end < len(p.src) && p.src[end] != '}' {
		end++
	}
	if end >= len(p.src) {
		return &SyntaxError{Line: p.line, StartLine: p.line, Msg: "unexpected EOF while looking for matching `}'"}
	}
	name := string(p.src[p.pos+1 : end])
	p.pos = end + 1
	if !isName(name) {
		p.inWord = true
		p.cur.WriteString(string(p.src[begin:p.pos]))
		return nil
	}
	p.expand(name, quoted)
	return nil
}

// substitution keeps $(...) or $((...)) literally, up to its matching parenthesis.
func (p *parser) substitution(begin int) error {
	start := p.line
	depth := 0
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				p.inWord = true
				p.cur.WriteString(string(p.src[begin:p.pos]))
				return nil
			}
		case '\n':
			p.line++
		}
	}
	return &SyntaxError{Line: p.line, StartLine: start, Msg: "unexpected EOF while looking for matching `)'"}
}

func (p *parser) expand(name string, quoted bool) {
	value, set := p.vars[name]
	if !set {
		p.unset = append(p.unset, name)
	}
	if quoted || p.curAssign {
		p.cur.WriteString(value)
		return
	}
	// Unquoted: field splitting at blanks. An empty expansion adds nothing to the word.
	for _, r := range value {
		if r == ' ' || r == '\t' || r == '\n' {
			p.endWord()
			continue
		}
		p.begun = true
		p.inWord = true
		p.cur.WriteRune(r)
	}
}

func (p *parser) endWord() {
	p.begun = false
	if !p.inWord {
		return
	}
	p.words = append(p.words, p.cur.String())
	p.assignOK = append(p.assignOK, p.curAssign)
	p.cur.Reset()
	p.inWord = false
	p.curAssign = false
}

func (p *parser) endCommand() {
	p.endWord()
	if len(p.words) == 0 {
		p.unset = nil
		return
	}
	cmd := Command{Line: p.cmdLine, Assignments: map[string]string{}, Unset: p.unset}
	p.unset = nil
	i := 0
	for ; i < len(p.words) && p.assignOK[i]; i++ {
		name, value, _ := strings.Cut(p.words[i], "=")
		cmd.Assignments[name] = value
	}
	cmd.Words = p.words[i:]
	if len(cmd.Words) == 0 {
		maps.Copy(p.vars, cmd.Assignments)
	} else if cmd.Words[0] == "export" {
		for _, w := range cmd.Words[1:] {
			name, value, ok := strings.Cut(w, "=")
			if !isName(name) {
				continue
			}
			if ok {
				p.vars[name] = value
			}
			p.exported[name] = true
		}
	}
	cmd.Env = map[string]string{}
	for name := range p.exported {
		cmd.Env[name] = p.vars[name]
	}
	maps.Copy(cmd.Env, cmd.Assignments)
	p.cmds = append(p.cmds, cmd)
	p.words, p.assignOK = nil, nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !isNameChar(c, i == 0) {
			return false
		}
	}
	return true
}

// isNameChar reports whether c may appear in a variable name (first: at its start).
func isNameChar(c rune, first bool) bool {
	return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || !first && c >= '0' && c <= '9'
}
