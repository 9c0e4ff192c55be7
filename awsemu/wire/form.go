package wire

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Form is a decoded query-protocol request body.
type Form struct {
	values url.Values
}

// ParseForm reads the form of a query-protocol request. The query string is merged in, as AWS
// accepts parameters in either place.
func ParseForm(r *http.Request) (Form, error) {
	if err := r.ParseForm(); err != nil {
		return Form{}, fmt.Errorf("parsing the request form, %w", err)
	}
	return Form{values: r.Form}, nil
}

// NewForm wraps already-decoded values.
func NewForm(v url.Values) Form { return Form{values: v} }

// String returns the value of key, or "".
func (f Form) String(key string) string { return f.values.Get(key) }

// Has reports whether key was sent.
func (f Form) Has(key string) bool { return f.values.Has(key) }

// Bool returns key as a boolean; absent or unparsable is false.
func (f Form) Bool(key string) bool {
	b, _ := strconv.ParseBool(f.values.Get(key))
	return b
}

// Int returns key as an integer, or def when absent. A malformed number is an error.
func (f Form) Int(key string, def int) (int, error) {
	s := f.values.Get(key)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, InvalidParameterValue(fmt.Sprintf("Value (%s) for parameter %s is invalid. Expected a number.", s, key))
	}
	return n, nil
}

// Float returns key as a float, or def when absent.
func (f Form) Float(key string, def float64) float64 {
	v, err := strconv.ParseFloat(f.values.Get(key), 64)
	if err != nil {
		return def
	}
	return v
}

// Indexed returns the prefixes of a list of structures or scalars, "P.1", "P.2", …, in order, up
// to the first missing index. For EC2 flat lists pass "Filter"; for AWS query lists pass
// "Roles.member".
func (f Form) Indexed(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		p := prefix + "." + strconv.Itoa(i)
		if !f.hasPrefix(p) {
			return out
		}
		out = append(out, p)
	}
}

// List returns the scalar values of the list at prefix (`P.1`, `P.2`, …).
func (f Form) List(prefix string) []string {
	var out []string
	for _, p := range f.Indexed(prefix) {
		out = append(out, f.values.Get(p))
	}
	return out
}

func (f Form) hasPrefix(p string) bool {
	if f.values.Has(p) {
		return true
	}
	for k := range f.values {
		if strings.HasPrefix(k, p+".") {
			return true
		}
	}
	return false
}

// Filter is one EC2 filter: a name and the values any of which may match.
type Filter struct {
	Name   string
	Values []string
}

// Filters returns the EC2 filters (`Filter.N.Name`, `Filter.N.Value.M`).
func (f Form) Filters() []Filter {
	var out []Filter
	for _, p := range f.Indexed("Filter") {
		out = append(out, Filter{Name: f.String(p + ".Name"), Values: f.List(p + ".Value")})
	}
	return out
}

// Tag is a resource tag.
type Tag struct {
	Key   string
	Value string
}

// Tags returns the tags of the list at prefix (`P.N.Key`, `P.N.Value`).
func (f Form) Tags(prefix string) []Tag {
	var out []Tag
	for _, p := range f.Indexed(prefix) {
		out = append(out, Tag{Key: f.String(p + ".Key"), Value: f.String(p + ".Value")})
	}
	return out
}

// TagSpecification is the tags to apply to one kind of resource a request creates.
type TagSpecification struct {
	ResourceType string
	Tags         []Tag
}

// TagSpecifications returns the EC2 tag specifications at prefix (`TagSpecification`).
func (f Form) TagSpecifications(prefix string) []TagSpecification {
	var out []TagSpecification
	for _, p := range f.Indexed(prefix) {
		out = append(out, TagSpecification{ResourceType: f.String(p + ".ResourceType"), Tags: f.Tags(p + ".Tag")})
	}
	return out
}

// Match reports whether the filter matches any of the resource's values for its name. Filter
// values may use EC2's wildcards: `*` for any run of characters, `?` for one.
func (flt Filter) Match(have []string) bool {
	for _, want := range flt.Values {
		for _, h := range have {
			if Wildcard(want, h) {
				return true
			}
		}
	}
	return false
}

// Wildcard reports whether s matches pattern, where `*` matches any run of characters and `?`
// exactly one. Matching is case-sensitive.
func Wildcard(pattern, s string) bool {
	p, str := matchRunes(pattern), matchRunes(s)
	// Iterative match with backtracking to the last star.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(p) && p[pi] == '*': // before the literal case: a star in the pattern is always a wildcard
			star, mark = pi, si
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == str[si]):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchRunes is s as runes, except that each byte of invalid UTF-8 becomes a distinct negative
// value: []rune(s) would turn every such byte into U+FFFD, and "\xe8" would match "\xff".
func matchRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = -1 - rune(s[i])
		}
		out = append(out, r)
		i += size
	}
	return out
}

// Canonical is the form without the given keys, encoded with its keys sorted: two requests with
// the same parameters have the same canonical form (an idempotency token's parameter check).
func (f Form) Canonical(except ...string) string {
	v := url.Values{}
	for k, vs := range f.values {
		if !slices.Contains(except, k) {
			v[k] = vs
		}
	}
	return v.Encode()
}
