package toml

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a syntax error at a 1-based line.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("toml: line %d: %s", e.Line, e.Msg)
}

// Parse decodes a TOML document into nested maps. Defining a key twice, or a table over a value,
// is an error, as in TOML.
func Parse(doc string) (map[string]any, error) {
	p := &parser{src: doc, line: 1}
	root := map[string]any{}
	if err := p.document(root); err != nil {
		return nil, err
	}
	return root, nil
}

type parser struct {
	src  string
	pos  int
	line int
}

func (p *parser) errorf(format string, args ...any) error {
	return &Error{Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) peek() byte {
	if p.pos >= len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

func (p *parser) next() byte {
	c := p.src[p.pos]
	p.pos++
	if c == '\n' {
		p.line++
	}
	return c
}

// skipBlank skips spaces and tabs, and with newlines true also newlines and comments.
func (p *parser) skipBlank(newlines bool) {
	for p.pos < len(p.src) {
		switch c := p.peek(); {
		case c == ' ' || c == '\t' || c == '\r':
			p.next()
		case c == '#':
			for p.pos < len(p.src) && p.peek() != '\n' {
				p.next()
			}
		case c == '\n' && newlines:
			p.next()
		default:
			return
		}
	}
}

// endOfLine requires the rest of the line to be blank or a comment.
func (p *parser) endOfLine() error {
	p.skipBlank(false)
	if p.pos < len(p.src) && p.peek() != '\n' {
		return p.errorf("unexpected %q after value", p.peek())
	}
	return nil
}

func (p *parser) document(root map[string]any) error {
	current := root
	for {
		p.skipBlank(true)
		if p.pos >= len(p.src) {
			return nil
		}
		if p.peek() == '[' {
			t, err := p.header(root)
			if err != nil {
				return err
			}
			current = t
			continue
		}
		if err := p.keyValue(current); err != nil {
			return err
		}
		if err := p.endOfLine(); err != nil {
			return err
		}
	}
}

// header reads [a.b] or [[a.b]] and returns the table that following keys go into.
func (p *parser) header(root map[string]any) (map[string]any, error) {
	p.next()
	array := p.peek() == '['
	if array {
		p.next()
	}
	keys, err := p.key()
	if err != nil {
		return nil, err
	}
	closing := "]"
	if array {
		closing = "]]"
	}
	if !strings.HasPrefix(p.src[p.pos:], closing) {
		return nil, p.errorf("expected %q to close the table header", closing)
	}
	p.pos += len(closing)
	if err := p.endOfLine(); err != nil {
		return nil, err
	}
	parent, err := p.walk(root, keys[:len(keys)-1])
	if err != nil {
		return nil, err
	}
	last := keys[len(keys)-1]
	if array {
		existing, ok := parent[last]
		list, isList := existing.([]any)
		if ok && !isList {
			return nil, p.errorf("key %q is already defined as a value", last)
		}
		t := map[string]any{}
		parent[last] = append(list, t)
		return t, nil
	}
	switch v := parent[last].(type) {
	case nil:
		t := map[string]any{}
		parent[last] = t
		return t, nil
	case map[string]any:
		return v, nil
	default:
		return nil, p.errorf("key %q is already defined as a value", last)
	}
}

// walk descends through keys, creating tables, and into the last element of arrays of tables.
func (p *parser) walk(t map[string]any, keys []string) (map[string]any, error) {
	for _, k := range keys {
		switch v := t[k].(type) {
		case nil:
			n := map[string]any{}
			t[k] = n
			t = n
		case map[string]any:
			t = v
		case []any:
			var last map[string]any
			if len(v) > 0 {
				last, _ = v[len(v)-1].(map[string]any)
			}
			if last == nil {
				return nil, p.errorf("key %q is an array of values, not tables", k)
			}
			t = last
		default:
			return nil, p.errorf("key %q is already defined as a value", k)
		}
	}
	return t, nil
}

func (p *parser) keyValue(t map[string]any) error {
	keys, err := p.key()
	if err != nil {
		return err
	}
	if p.peek() != '=' {
		return p.errorf("expected '=' after key %q", strings.Join(keys, "."))
	}
	p.next()
	p.skipBlank(false)
	v, err := p.value()
	if err != nil {
		return err
	}
	parent, err := p.walk(t, keys[:len(keys)-1])
	if err != nil {
		return err
	}
	last := keys[len(keys)-1]
	if _, dup := parent[last]; dup {
		return p.errorf("key %q is defined twice", strings.Join(keys, "."))
	}
	parent[last] = v
	return nil
}

// key reads a dotted key and the blanks after it.
func (p *parser) key() ([]string, error) {
	var keys []string
	for {
		p.skipBlank(false)
		var (
			k   string
			err error
		)
		switch c := p.peek(); {
		case c == '"':
			k, err = p.basicString()
		case c == '\'':
			k, err = p.literalString()
		case isBare(c):
			start := p.pos
			for p.pos < len(p.src) && isBare(p.peek()) {
				p.pos++
			}
			k = p.src[start:p.pos]
		default:
			return nil, p.errorf("expected a key, found %q", c)
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
		p.skipBlank(false)
		if p.peek() != '.' {
			return keys, nil
		}
		p.next()
	}
}

func isBare(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *parser) value() (any, error) {
	switch p.peek() {
	case '"':
		return p.basicString()
	case '\'':
		return p.literalString()
	case '[':
		return p.array()
	case '{':
		return p.inlineTable()
	case 0:
		return nil, p.errorf("expected a value, found end of document")
	default:
		return p.scalar()
	}
}

func (p *parser) scalar() (any, error) {
	start := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune(" \t\r\n,]}#", rune(p.peek())) {
		p.pos++
	}
	word := p.src[start:p.pos]
	switch word {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	if n, ok := parseInt(word); ok {
		return n, nil
	}
	return nil, p.errorf("unsupported or invalid value %q (strings must be quoted)", word)
}

func (p *parser) array() ([]any, error) {
	p.next()
	list := []any{}
	for {
		p.skipBlank(true)
		if p.peek() == ']' {
			p.next()
			return list, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		list = append(list, v)
		p.skipBlank(true)
		switch p.peek() {
		case ',':
			p.next()
		case ']':
		default:
			return nil, p.errorf("expected ',' or ']' in array")
		}
	}
}

func (p *parser) inlineTable() (map[string]any, error) {
	p.next()
	t := map[string]any{}
	p.skipBlank(false)
	if p.peek() == '}' {
		p.next()
		return t, nil
	}
	for {
		if err := p.keyValue(t); err != nil {
			return nil, err
		}
		p.skipBlank(false)
		switch p.peek() {
		case ',':
			p.next()
		case '}':
			p.next()
			return t, nil
		default:
			return nil, p.errorf("expected ',' or '}' in inline table")
		}
	}
}

func (p *parser) literalString() (string, error) {
	if strings.HasPrefix(p.src[p.pos:], "'''") {
		p.pos += 3
		if p.peek() == '\n' {
			p.next()
		}
		end := strings.Index(p.src[p.pos:], "'''")
		if end < 0 {
			return "", p.errorf("unterminated multi-line literal string")
		}
		s := p.src[p.pos : p.pos+end]
		p.line += strings.Count(s, "\n")
		p.pos += end + 3
		return s, nil
	}
	p.next()
	end := strings.IndexAny(p.src[p.pos:], "'\n")
	if end < 0 || p.src[p.pos+end] == '\n' {
		return "", p.errorf("unterminated literal string")
	}
	s := p.src[p.pos : p.pos+end]
	p.pos += end + 1
	return s, nil
}

func (p *parser) basicString() (string, error) {
	multi := strings.HasPrefix(p.src[p.pos:], `"""`)
	if multi {
		p.pos += 3
		if p.peek() == '\n' {
			p.next()
		}
	} else {
		p.next()
	}
	var b strings.Builder
	for p.pos < len(p.src) {
		if multi && strings.HasPrefix(p.src[p.pos:], `"""`) {
			p.pos += 3
			return b.String(), nil
		}
		c := p.next()
		switch {
		case c == '"' && !multi:
			return b.String(), nil
		case c == '\n' && !multi:
			p.line--
			return "", p.errorf("unterminated string")
		case c == '\\':
			if err := p.escape(&b, multi); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *parser) escape(b *strings.Builder, multi bool) error {
	if p.pos >= len(p.src) {
		return p.errorf("unterminated string")
	}
	c := p.next()
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case '"', '\\':
		b.WriteByte(c)
	case 'u', 'U':
		n := map[byte]int{'u': 4, 'U': 8}[c]
		if p.pos+n > len(p.src) {
			return p.errorf("short unicode escape")
		}
		r, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
		if err != nil || !utf8.ValidRune(rune(r)) {
			return p.errorf("invalid unicode escape %q", p.src[p.pos:p.pos+n])
		}
		p.pos += n
		b.WriteRune(rune(r))
	case '\n', ' ', '\t', '\r':
		if !multi {
			return p.errorf("invalid escape %q", c)
		}
		// Line-ending backslash: trim the newline and following whitespace.
		for p.pos < len(p.src) && strings.ContainsRune(" \t\r\n", rune(p.peek())) {
			p.next()
		}
	default:
		return p.errorf("invalid escape \\%c", c)
	}
	return nil
}

// parseInt reads a TOML integer: decimal without leading zeros, or 0x, 0o, 0b; underscores
// between digits.
func parseInt(word string) (int64, bool) {
	digits := strings.TrimLeft(word, "+-")
	if len(word)-len(digits) > 1 || digits == "" {
		return 0, false
	}
	prefixed := len(digits) > 1 && digits[0] == '0' && strings.ContainsRune("xob", rune(digits[1]))
	if prefixed && len(digits) != len(word) {
		return 0, false // a sign is not allowed on prefixed integers
	}
	if !prefixed && len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(word, 0, 64)
	return n, err == nil
}
