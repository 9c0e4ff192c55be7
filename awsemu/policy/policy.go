package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Document is an IAM policy document.
type Document struct {
	Version   string      `json:"Version,omitempty"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement of a policy document.
type Statement struct {
	Sid         string     `json:"Sid,omitempty"`
	Effect      string     `json:"Effect"`
	Action      Strings    `json:"Action,omitempty"`
	NotAction   Strings    `json:"NotAction,omitempty"`
	Resource    Strings    `json:"Resource,omitempty"`
	NotResource Strings    `json:"NotResource,omitempty"`
	Condition   Conditions `json:"Condition,omitempty"`
}

// Conditions maps an operator ("StringEquals", "ForAnyValue:StringLike") to keys and the values
// any of which may match.
type Conditions map[string]map[string]Strings

// Strings is a policy value that may be written as one string or a list.
type Strings []string

// UnmarshalJSON accepts a string, a list of strings, or (for conditions) booleans and numbers.
func (s *Strings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return fmt.Errorf("decoding a list of values, %w", err)
		}
		out := make([]string, 0, len(raw))
		for _, r := range raw {
			v, err := scalar(r)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		*s = out
		return nil
	}
	v, err := scalar(b)
	if err != nil {
		return err
	}
	*s = Strings{v}
	return nil
}

func scalar(b []byte) (string, error) {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		return str, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("decoding a policy value, %w", err)
	}
	switch v := v.(type) {
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("policy value %s is not a string, number or boolean", b)
}

// UnmarshalJSON accepts Statement written as one object or a list.
func (d *Document) UnmarshalJSON(b []byte) error {
	var raw struct {
		Version   string          `json:"Version"`
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("decoding a policy document, %w", err)
	}
	d.Version = raw.Version
	st := bytes.TrimSpace(raw.Statement)
	if len(st) > 0 && st[0] == '{' {
		var one Statement
		if err := json.Unmarshal(st, &one); err != nil {
			return fmt.Errorf("decoding a statement, %w", err)
		}
		d.Statement = []Statement{one}
		return nil
	}
	if err := json.Unmarshal(st, &d.Statement); err != nil {
		return fmt.Errorf("decoding statements, %w", err)
	}
	return nil
}

// Parse decodes a JSON policy document and checks what evaluation relies on.
func Parse(doc string) (Document, error) {
	var d Document
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return Document{}, fmt.Errorf("parsing policy, %w", err)
	}
	for i, s := range d.Statement {
		if s.Effect != "Allow" && s.Effect != "Deny" {
			return Document{}, fmt.Errorf("statement %d: Effect must be Allow or Deny, got %q", i, s.Effect)
		}
		if (len(s.Action) == 0) == (len(s.NotAction) == 0) {
			return Document{}, fmt.Errorf("statement %d: exactly one of Action and NotAction is required", i)
		}
		if (len(s.Resource) == 0) == (len(s.NotResource) == 0) {
			return Document{}, fmt.Errorf("statement %d: exactly one of Resource and NotResource is required", i)
		}
		for op := range s.Condition {
			if _, _, _, err := parseOperator(op); err != nil {
				return Document{}, fmt.Errorf("statement %d, %w", i, err)
			}
		}
	}
	return d, nil
}

// Policy is a named document attached to the principal.
type Policy struct {
	Name     string
	Document Document
}

// Request is what is being authorized: one action on one resource, with the request context.
type Request struct {
	// Action is "service:Operation", e.g. "ec2:RunInstances".
	Action string
	// Resource is the ARN of the resource, or "*" for actions without resource-level permissions.
	Resource string
	// Context maps condition keys ("aws:RequestTag/team", "ec2:InstanceType") to their values.
	// Keys are matched case-insensitively; multi-valued keys such as aws:TagKeys hold several.
	Context map[string][]string
}

// MatchedStatement names a statement that applied to the request.
type MatchedStatement struct {
	Policy string `json:"policyName"`
	Sid    string `json:"sid,omitempty"`
	Effect string `json:"effect"`
	Index  int    `json:"index"`
}

// Decision is the outcome of evaluation.
type Decision struct {
	Allowed      bool
	ExplicitDeny bool
	// Matched lists the statements that applied: the denying ones if any denied, else the
	// allowing ones.
	Matched []MatchedStatement
}

// Evaluate decides the request against the principal's policies.
func Evaluate(policies []Policy, req Request) Decision {
	ctx := make(map[string][]string, len(req.Context))
	for k, v := range req.Context {
		ctx[strings.ToLower(k)] = v
	}
	var allows, denies []MatchedStatement
	for _, p := range policies {
		for i, s := range p.Document.Statement {
			if !s.applies(req, ctx) {
				continue
			}
			m := MatchedStatement{Policy: p.Name, Sid: s.Sid, Effect: s.Effect, Index: i}
			if s.Effect == "Deny" {
				denies = append(denies, m)
			} else {
				allows = append(allows, m)
			}
		}
	}
	switch {
	case len(denies) > 0:
		return Decision{ExplicitDeny: true, Matched: denies}
	case len(allows) > 0:
		return Decision{Allowed: true, Matched: allows}
	}
	return Decision{}
}

func (s Statement) applies(req Request, ctx map[string][]string) bool {
	if len(s.Action) > 0 && !matchAny(s.Action, req.Action, true) {
		return false
	}
	if len(s.NotAction) > 0 && matchAny(s.NotAction, req.Action, true) {
		return false
	}
	if len(s.Resource) > 0 && !matchAny(s.Resource, req.Resource, false) {
		return false
	}
	if len(s.NotResource) > 0 && matchAny(s.NotResource, req.Resource, false) {
		return false
	}
	for op, keys := range s.Condition {
		for key, values := range keys {
			if !condition(op, ctx[strings.ToLower(key)], ctx, strings.ToLower(key), values) {
				return false
			}
		}
	}
	return true
}

func matchAny(patterns []string, s string, foldCase bool) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		if foldCase {
			return Wildcard(strings.ToLower(p), strings.ToLower(s))
		}
		return Wildcard(p, s)
	})
}

// Wildcard reports whether s matches pattern with `*` (any run) and `?` (one character).
func Wildcard(pattern, s string) bool {
	p, str := []rune(pattern), []rune(s)
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == str[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
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
