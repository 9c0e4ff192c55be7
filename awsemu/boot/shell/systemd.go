package shell

import (
	"errors"
	"strings"
)

// SplitSystemd splits s into words the way systemd splits unit-file values (Environment=) and
// the expansion of an unbraced $VAR in ExecStart=: words are separated by blanks; single and
// double quotes group blanks into a word, anywhere in it, and are removed; a backslash escapes
// the next character, and C escapes \n, \t, \\, \", \' and \s (space) are decoded.
//
// With relax false (Environment=), an unterminated quote or a trailing backslash is an error;
// the words completed before it are returned with the error, since systemd has applied them by
// then. With relax true (ExecStart expansion), an unterminated quote runs to the end of the
// value.
func SplitSystemd(s string, relax bool) ([]string, error) {
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
			cur.WriteRune(unescape(rs[i]))
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

func unescape(c rune) rune {
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
