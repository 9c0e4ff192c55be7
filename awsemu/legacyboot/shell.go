package legacyboot

import (
	"fmt"
	"strings"
)

// shellWords splits one logical shell command line into words the way bash does for the subset
// userData uses: single quotes (literal), double quotes (with \" \\ \$ escapes and $VAR
// expansion), backslash escapes, and $VAR / ${VAR} expansion from vars. Unset variables expand to
// "" as bash does without `set -u`. An unterminated quote is an error, as bash reports one.
func shellWords(line string, vars map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\'':
			j := indexRune(rs, i+1, '\'')
			if j < 0 {
				return nil, fmt.Errorf("unexpected EOF while looking for matching `''")
			}
			cur.WriteString(string(rs[i+1 : j]))
			i, inWord = j, true
		case c == '"':
			j, err := doubleQuoted(rs, i+1, vars, &cur)
			if err != nil {
				return nil, err
			}
			i, inWord = j, true
		case c == '\\' && i+1 < len(rs):
			cur.WriteRune(rs[i+1])
			i, inWord = i+1, true
		case c == '$':
			n, val := expand(rs, i, vars)
			cur.WriteString(val)
			i, inWord = i+n-1, true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '#' && !inWord:
			i = len(rs)
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func indexRune(rs []rune, from int, r rune) int {
	for i := from; i < len(rs); i++ {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

// doubleQuoted copies a double-quoted string starting after the opening quote and returns the
// index of the closing quote.
func doubleQuoted(rs []rune, i int, vars map[string]string, cur *strings.Builder) (int, error) {
	for ; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '"':
			return i, nil
		case c == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
			cur.WriteRune(rs[i+1])
			i++
		case c == '$':
			n, val := expand(rs, i, vars)
			cur.WriteString(val)
			i += n - 1
		default:
			cur.WriteRune(c)
		}
	}
	return 0, fmt.Errorf("unexpected EOF while looking for matching `\"'")
}

// expand reads $NAME or ${NAME} at rs[i] and returns how many runes it spans and its value.
func expand(rs []rune, i int, vars map[string]string) (int, string) {
	if i+1 < len(rs) && rs[i+1] == '{' {
		j := indexRune(rs, i+2, '}')
		if j < 0 {
			return 1, "$"
		}
		return j - i + 1, vars[string(rs[i+2:j])]
	}
	j := i + 1
	for j < len(rs) && (rs[j] == '_' || rs[j] >= 'a' && rs[j] <= 'z' || rs[j] >= 'A' && rs[j] <= 'Z' || rs[j] >= '0' && rs[j] <= '9') {
		j++
	}
	if j == i+1 {
		return 1, "$"
	}
	return j - i, vars[string(rs[i+1:j])]
}

// logicalLines joins backslash-newline continuations and returns the script's lines.
func logicalLines(script string) []string {
	return strings.Split(strings.ReplaceAll(strings.ReplaceAll(script, "\r\n", "\n"), "\\\n", ""), "\n")
}

// assignment recognises `NAME=value` and `export NAME=value` lines and evaluates the value.
func assignment(words []string) (name, value string, ok bool) {
	if len(words) == 2 && words[0] == "export" {
		words = words[1:]
	}
	if len(words) != 1 {
		return "", "", false
	}
	name, value, ok = strings.Cut(words[0], "=")
	if !ok || name == "" || strings.ContainsAny(name, "-./") {
		return "", "", false
	}
	return name, value, true
}

// systemdWords splits an environment variable's value the way systemd expands `$VAR` (unbraced)
// in ExecStart: into words at whitespace, honouring and removing single and double quotes.
func systemdWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
