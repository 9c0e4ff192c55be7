package userdata

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is the minimal TOML (v1.0) reading and writing Bottlerocket settings need. It keeps
// what it does not change as written: every value read keeps its source text and is written back
// verbatim. Tables keep their order. Dotted keys and inline tables that Joiner does not change are
// written back as they were read, as a value or as a [table] section holding the same keys.
// Comments between entries are not kept (TOML gives them no meaning).

// tomlTable is a table: keys in the order they appeared.
type tomlTable struct {
	keys    []string
	entries map[string]*tomlEntry
	// inlineRaw is the source of an inline table ({ a = 1 }), written back as it was unless the
	// table is changed.
	inlineRaw string
}

// tomlEntry is a key's content: a value, a table, or an array of tables.
type tomlEntry struct {
	value  *tomlValue
	table  *tomlTable
	tables []*tomlTable
}

// tomlValue is a value other than a table.
type tomlValue struct {
	// raw is the source text; empty for a value Joiner built.
	raw string
	// kind is "string", "integer", "boolean", "array" or "other" (floats, dates).
	kind  string
	str   string
	items []*tomlValue
}

func newTOMLTable() *tomlTable { return &tomlTable{entries: map[string]*tomlEntry{}} }

func tomlString(s string) *tomlValue { return &tomlValue{kind: "string", str: s} }

func tomlInteger(i int64) *tomlValue {
	return &tomlValue{kind: "integer", str: strconv.FormatInt(i, 10)}
}

func tomlBool(b bool) *tomlValue { return &tomlValue{kind: "boolean", str: strconv.FormatBool(b)} }

func tomlStrings(values []string) *tomlValue {
	v := &tomlValue{kind: "array"}
	for _, s := range values {
		v.items = append(v.items, tomlString(s))
	}
	return v
}

// get returns the entry of key, or nil.
func (t *tomlTable) get(key string) *tomlEntry { return t.entries[key] }

// set makes key hold value, keeping its position if it existed.
func (t *tomlTable) set(key string, value *tomlValue) {
	t.inlineRaw = ""
	if _, ok := t.entries[key]; !ok {
		t.keys = append(t.keys, key)
	}
	t.entries[key] = &tomlEntry{value: value}
}

// table returns the sub-table at key, creating it (and the key) when missing. ok is false when
// key holds something other than a table.
func (t *tomlTable) table(key string) (*tomlTable, bool) {
	e, exists := t.entries[key]
	if !exists {
		sub := newTOMLTable()
		t.keys = append(t.keys, key)
		t.entries[key] = &tomlEntry{table: sub}
		return sub, true
	}
	if e.table == nil {
		return nil, false
	}
	return e.table, true
}

// tomlParser reads one document.
type tomlParser struct {
	src  string
	pos  int
	line int
}

func (p *tomlParser) errorf(format string, args ...any) error {
	return fmt.Errorf("TOML line %d: %s", p.line, fmt.Sprintf(format, args...))
}

// parseTOML reads a TOML document.
func parseTOML(src string) (*tomlTable, error) {
	p := &tomlParser{src: src, line: 1}
	root := newTOMLTable()
	current := root
	for {
		p.skipBlankAndComments(true)
		if p.pos >= len(p.src) {
			return root, nil
		}
		switch {
		case strings.HasPrefix(p.src[p.pos:], "[["):
			p.pos += 2
			path, err := p.keyPath()
			if err != nil {
				return nil, err
			}
			if !p.consume("]]") {
				return nil, p.errorf("expected ]] after the array of tables header")
			}
			parent, err := navigate(root, path[:len(path)-1])
			if err != nil {
				return nil, p.errorf("%v", err)
			}
			last := path[len(path)-1]
			e := parent.entries[last]
			if e == nil {
				e = &tomlEntry{}
				parent.keys = append(parent.keys, last)
				parent.entries[last] = e
			}
			if e.value != nil || e.table != nil {
				return nil, p.errorf("%s is already defined as something other than an array of tables", strings.Join(path, "."))
			}
			current = newTOMLTable()
			e.tables = append(e.tables, current)
		case p.src[p.pos] == '[':
			p.pos++
			path, err := p.keyPath()
			if err != nil {
				return nil, err
			}
			if !p.consume("]") {
				return nil, p.errorf("expected ] after the table header")
			}
			if current, err = navigate(root, path); err != nil {
				return nil, p.errorf("%v", err)
			}
		default:
			if err := p.keyValue(current); err != nil {
				return nil, err
			}
		}
		if err := p.endOfLine(); err != nil {
			return nil, err
		}
	}
}

// navigate walks a table path from t, creating tables, stepping into the last table of an array
// of tables.
func navigate(t *tomlTable, path []string) (*tomlTable, error) {
	for _, key := range path {
		e := t.entries[key]
		switch {
		case e == nil:
			sub, _ := t.table(key)
			t = sub
		case e.table != nil:
			t = e.table
		case len(e.tables) > 0:
			t = e.tables[len(e.tables)-1]
		default:
			return nil, fmt.Errorf("%s is a value, not a table", key)
		}
	}
	return t, nil
}

// keyValue reads key = value into t.
func (p *tomlParser) keyValue(t *tomlTable) error {
	path, err := p.keyPath()
	if err != nil {
		return err
	}
	if !p.consume("=") {
		return p.errorf("expected = after key %s", strings.Join(path, "."))
	}
	p.skipBlank()
	parent, err := navigate(t, path[:len(path)-1])
	if err != nil {
		return p.errorf("%v", err)
	}
	last := path[len(path)-1]
	if _, exists := parent.entries[last]; exists {
		return p.errorf("key %s is defined twice", strings.Join(path, "."))
	}
	if p.pos < len(p.src) && p.src[p.pos] == '{' {
		sub, err := p.inlineTable()
		if err != nil {
			return err
		}
		parent.keys = append(parent.keys, last)
		parent.entries[last] = &tomlEntry{table: sub}
		return nil
	}
	v, err := p.value()
	if err != nil {
		return err
	}
	parent.keys = append(parent.keys, last)
	parent.entries[last] = &tomlEntry{value: v}
	return nil
}

func (p *tomlParser) inlineTable() (*tomlTable, error) {
	start := p.pos
	p.pos++ // {
	t := newTOMLTable()
	p.skipBlank()
	if p.consume("}") {
		t.inlineRaw = p.src[start:p.pos]
		return t, nil
	}
	for {
		p.skipBlank()
		if err := p.keyValue(t); err != nil {
			return nil, err
		}
		p.skipBlank()
		if p.consume("}") {
			t.inlineRaw = p.src[start:p.pos]
			return t, nil
		}
		if !p.consume(",") {
			return nil, p.errorf("expected , or } in inline table")
		}
	}
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+`)

// keyPath reads a dotted key: bare or quoted parts joined by dots.
func (p *tomlParser) keyPath() ([]string, error) {
	var path []string
	for {
		p.skipBlank()
		if p.pos >= len(p.src) {
			return nil, p.errorf("expected a key")
		}
		switch p.src[p.pos] {
		case '"', '\'':
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			path = append(path, v.str)
		default:
			k := bareKey.FindString(p.src[p.pos:])
			if k == "" {
				return nil, p.errorf("expected a key, found %q", p.src[p.pos:min(p.pos+10, len(p.src))])
			}
			p.pos += len(k)
			path = append(path, k)
		}
		p.skipBlank()
		if !p.consume(".") {
			return path, nil
		}
	}
}

// value reads a string, number, boolean, date or array.
func (p *tomlParser) value() (*tomlValue, error) {
	if p.pos >= len(p.src) {
		return nil, p.errorf("expected a value")
	}
	start := p.pos
	var v *tomlValue
	var err error
	switch c := p.src[p.pos]; {
	case strings.HasPrefix(p.src[p.pos:], `"""`):
		v, err = p.multilineString(`"""`, true)
	case strings.HasPrefix(p.src[p.pos:], `'''`):
		v, err = p.multilineString(`'''`, false)
	case c == '"':
		v, err = p.basicString()
	case c == '\'':
		end := strings.IndexAny(p.src[p.pos+1:], "'\n")
		if end < 0 || p.src[p.pos+1+end] != '\'' {
			return nil, p.errorf("unterminated literal string")
		}
		v = tomlString(p.src[p.pos+1 : p.pos+1+end])
		p.pos += end + 2
	case c == '[':
		v, err = p.array()
	default:
		end := p.pos
		for end < len(p.src) && !strings.ContainsRune(" \t\r\n,]}#", rune(p.src[end])) {
			end++
		}
		token := p.src[p.pos:end]
		if token == "" {
			return nil, p.errorf("expected a value")
		}
		p.pos = end
		v = &tomlValue{kind: "other", str: token}
		if token == "true" || token == "false" {
			v.kind = "boolean"
		} else if _, err := strconv.ParseInt(strings.ReplaceAll(token, "_", ""), 0, 64); err == nil {
			v.kind = "integer"
		}
	}
	if err != nil {
		return nil, err
	}
	v.raw = p.src[start:p.pos]
	return v, nil
}

func (p *tomlParser) basicString() (*tomlValue, error) {
	var b strings.Builder
	p.pos++
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '"':
			p.pos++
			return tomlString(b.String()), nil
		case '\n':
			return nil, p.errorf("unterminated string")
		case '\\':
			if err := p.escape(&b); err != nil {
				return nil, err
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return nil, p.errorf("unterminated string")
}

// escape reads one backslash escape of a basic string.
func (p *tomlParser) escape(b *strings.Builder) error {
	if p.pos+1 >= len(p.src) {
		return p.errorf("unterminated escape")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	simple := map[byte]string{'b': "\b", 't': "\t", 'n': "\n", 'f': "\f", 'r': "\r", '"': `"`, '\\': `\`}
	if s, ok := simple[c]; ok {
		b.WriteString(s)
		return nil
	}
	width := map[byte]int{'u': 4, 'U': 8}[c]
	if width == 0 || p.pos+width > len(p.src) {
		return p.errorf("invalid escape \\%c", c)
	}
	code, err := strconv.ParseUint(p.src[p.pos:p.pos+width], 16, 32)
	if err != nil || !utf8.ValidRune(rune(code)) {
		return p.errorf("invalid unicode escape")
	}
	b.WriteRune(rune(code))
	p.pos += width
	return nil
}

func (p *tomlParser) multilineString(delim string, basic bool) (*tomlValue, error) {
	p.pos += 3
	if strings.HasPrefix(p.src[p.pos:], "\r\n") {
		p.pos += 2
		p.line++
	} else if strings.HasPrefix(p.src[p.pos:], "\n") {
		p.pos++
		p.line++
	}
	var b strings.Builder
	for p.pos < len(p.src) {
		if strings.HasPrefix(p.src[p.pos:], delim) {
			// Up to two quotes may end the content, right before the delimiter.
			extra := 0
			for extra < 2 && strings.HasPrefix(p.src[p.pos+1+extra:], delim) {
				extra++
			}
			b.WriteString(p.src[p.pos : p.pos+extra])
			p.pos += 3 + extra
			return tomlString(b.String()), nil
		}
		c := p.src[p.pos]
		if c == '\n' {
			p.line++
		}
		if basic && c == '\\' {
			rest := strings.TrimLeft(p.src[p.pos+1:], " \t\r")
			if strings.HasPrefix(rest, "\n") {
				// A line-ending backslash trims the line end and the blanks that follow.
				trimmed := strings.TrimLeft(rest, " \t\r\n")
				p.line += strings.Count(rest[:len(rest)-len(trimmed)], "\n")
				p.pos = len(p.src) - len(trimmed)
				continue
			}
			if err := p.escape(&b); err != nil {
				return nil, err
			}
			continue
		}
		b.WriteByte(c)
		p.pos++
	}
	return nil, p.errorf("unterminated multi-line string")
}

func (p *tomlParser) array() (*tomlValue, error) {
	p.pos++ // [
	v := &tomlValue{kind: "array"}
	for {
		p.skipBlankAndComments(true)
		if p.consume("]") {
			return v, nil
		}
		item, err := p.value()
		if err != nil {
			return nil, err
		}
		v.items = append(v.items, item)
		p.skipBlankAndComments(true)
		if p.consume("]") {
			return v, nil
		}
		if !p.consume(",") {
			return nil, p.errorf("expected , or ] in array")
		}
	}
}

func (p *tomlParser) consume(s string) bool {
	if strings.HasPrefix(p.src[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *tomlParser) skipBlank() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// skipBlankAndComments skips blanks, comments and, with newlines, line ends.
func (p *tomlParser) skipBlankAndComments(newlines bool) {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == '\n' && newlines:
			p.pos++
			p.line++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// endOfLine requires nothing but blanks and a comment before the line end.
func (p *tomlParser) endOfLine() error {
	p.skipBlankAndComments(false)
	if p.pos < len(p.src) && p.src[p.pos] != '\n' {
		return p.errorf("unexpected %q after a value", p.src[p.pos:min(p.pos+10, len(p.src))])
	}
	return nil
}

// writeTOML writes a document: each table's values, then its sub-tables as [sections].
func writeTOML(root *tomlTable) string {
	var b strings.Builder
	writeTOMLTable(&b, nil, root)
	return strings.TrimLeft(b.String(), "\n")
}

func writeTOMLTable(b *strings.Builder, path []string, t *tomlTable) {
	for _, k := range t.keys {
		e := t.entries[k]
		switch {
		case e.value != nil:
			fmt.Fprintf(b, "%s = %s\n", tomlKey(k), e.value.text())
		case e.table != nil && e.table.inlineRaw != "":
			fmt.Fprintf(b, "%s = %s\n", tomlKey(k), e.table.inlineRaw)
		}
	}
	for _, k := range t.keys {
		e := t.entries[k]
		sub := append(slices.Clone(path), k)
		switch {
		case e.table != nil && e.table.inlineRaw == "":
			if e.table.hasValues() || len(e.table.keys) == 0 {
				fmt.Fprintf(b, "\n[%s]\n", tomlPath(sub))
			}
			writeTOMLTable(b, sub, e.table)
		case len(e.tables) > 0:
			for _, elem := range e.tables {
				fmt.Fprintf(b, "\n[[%s]]\n", tomlPath(sub))
				writeTOMLTable(b, sub, elem)
			}
		}
	}
}

// hasValues reports whether the table has entries written as key = value.
func (t *tomlTable) hasValues() bool {
	for _, e := range t.entries {
		if e.value != nil || (e.table != nil && e.table.inlineRaw != "") {
			return true
		}
	}
	return false
}

// text is the value as TOML: its source when it was read, else built.
func (v *tomlValue) text() string {
	if v.raw != "" {
		return v.raw
	}
	switch v.kind {
	case "string":
		return tomlQuote(v.str)
	case "array":
		items := make([]string, 0, len(v.items))
		for _, item := range v.items {
			items = append(items, item.text())
		}
		return "[" + strings.Join(items, ", ") + "]"
	default:
		return v.str
	}
}

func tomlKey(k string) string {
	if k != "" && bareKey.FindString(k) == k {
		return k
	}
	return tomlQuote(k)
}

// tomlQuote writes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlPath(path []string) string {
	parts := make([]string, 0, len(path))
	for _, k := range path {
		parts = append(parts, tomlKey(k))
	}
	return strings.Join(parts, ".")
}

// plain converts a table to maps, slices and Go values, for comparisons in tests and checks.
func (t *tomlTable) plain() map[string]any {
	out := map[string]any{}
	for k, e := range t.entries {
		switch {
		case e.value != nil:
			out[k] = e.value.plain()
		case e.table != nil:
			out[k] = e.table.plain()
		default:
			var list []any
			for _, elem := range e.tables {
				list = append(list, elem.plain())
			}
			out[k] = list
		}
	}
	return out
}

func (v *tomlValue) plain() any {
	switch v.kind {
	case "string":
		return v.str
	case "integer":
		i, err := strconv.ParseInt(strings.ReplaceAll(v.str, "_", ""), 0, 64)
		if err != nil {
			return v.str
		}
		return i
	case "boolean":
		return v.str == "true"
	case "array":
		list := []any{}
		for _, item := range v.items {
			list = append(list, item.plain())
		}
		return list
	default:
		return v.str
	}
}
