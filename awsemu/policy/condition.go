package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

type setQualifier int

const (
	single setQualifier = iota
	forAnyValue
	forAllValues
)

// matcher compares one request value with one policy value.
type matcher func(have, want string) bool

// operator returns the matcher of a base operator and whether it is negated.
func operator(name string) (m matcher, negated bool, ok bool) {
	equal := func(h, w string) bool { return h == w }
	like := func(h, w string) bool { return Wildcard(w, h) }
	switch name {
	case "StringEquals":
		return equal, false, true
	case "StringNotEquals":
		return equal, true, true
	case "StringEqualsIgnoreCase", "Bool":
		return strings.EqualFold, false, true
	case "StringNotEqualsIgnoreCase":
		return strings.EqualFold, true, true
	case "StringLike", "ArnEquals", "ArnLike":
		return like, false, true
	case "StringNotLike", "ArnNotEquals", "ArnNotLike":
		return like, true, true
	case "NumericEquals":
		return numeric(func(a, b float64) bool { return a == b }), false, true
	case "NumericNotEquals":
		return numeric(func(a, b float64) bool { return a == b }), true, true
	case "NumericLessThan":
		return numeric(func(a, b float64) bool { return a < b }), false, true
	case "NumericLessThanEquals":
		return numeric(func(a, b float64) bool { return a <= b }), false, true
	case "NumericGreaterThan":
		return numeric(func(a, b float64) bool { return a > b }), false, true
	case "NumericGreaterThanEquals":
		return numeric(func(a, b float64) bool { return a >= b }), false, true
	}
	return nil, false, false
}

func numeric(cmp func(a, b float64) bool) matcher {
	return func(h, w string) bool {
		a, err1 := strconv.ParseFloat(h, 64)
		b, err2 := strconv.ParseFloat(w, 64)
		return err1 == nil && err2 == nil && cmp(a, b)
	}
}

// parseOperator splits "ForAnyValue:StringLikeIfExists" into its parts.
func parseOperator(op string) (base string, set setQualifier, ifExists bool, err error) {
	switch {
	case strings.HasPrefix(op, "ForAnyValue:"):
		set, op = forAnyValue, strings.TrimPrefix(op, "ForAnyValue:")
	case strings.HasPrefix(op, "ForAllValues:"):
		set, op = forAllValues, strings.TrimPrefix(op, "ForAllValues:")
	}
	if op != "Null" {
		op, ifExists = strings.CutSuffix(op, "IfExists")
	}
	if _, _, ok := operator(op); !ok && op != "Null" {
		return "", 0, false, fmt.Errorf("unsupported condition operator %q", op)
	}
	return op, set, ifExists, nil
}

// condition decides one (operator, key, values) entry against the request's values for the key.
func condition(op string, have []string, ctx map[string][]string, key string, want []string) bool {
	base, set, ifExists, err := parseOperator(op)
	if err != nil {
		return false // Parse refuses such documents; an unparsed one never matches
	}
	_, present := ctx[key]
	if base == "Null" {
		// "true" means the key must be absent; "false" that it must be present.
		return slices.ContainsFunc(want, func(w string) bool { return strings.EqualFold(w, strconv.FormatBool(!present)) })
	}
	match, negated, _ := operator(base)
	if !present {
		switch {
		case ifExists:
			return true
		case set == forAllValues:
			return true // vacuously: no value fails
		case set == forAnyValue:
			return false
		}
		return negated
	}
	matchesSome := func(h string) bool {
		return slices.ContainsFunc(want, func(w string) bool { return match(h, w) })
	}
	switch set {
	case forAnyValue:
		return slices.ContainsFunc(have, func(h string) bool { return matchesSome(h) != negated })
	case forAllValues:
		return !slices.ContainsFunc(have, func(h string) bool { return matchesSome(h) == negated })
	}
	// A single-valued key: a negated operator holds when no policy value matches.
	if len(have) == 0 {
		return negated
	}
	return matchesSome(have[0]) != negated
}
