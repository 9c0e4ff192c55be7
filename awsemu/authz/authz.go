package authz

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// Principal is the identity behind an access key.
type Principal struct {
	Role *state.Role
	// ARN is the assumed-role session ARN the caller acts as.
	ARN string
}

// Identify returns the principal of an access key, or EC2's AuthFailure when it is unknown.
func Identify(w *state.World, accessKey string) (Principal, error) {
	roleName, ok := w.IAM.AccessKeys[accessKey]
	if !ok {
		return Principal{}, wire.NewError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	role, ok := w.IAM.Roles[roleName]
	if !ok {
		return Principal{}, wire.NewError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	return Principal{Role: role, ARN: fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", w.AccountID, role.Name, accessKey)}, nil
}

// Style selects the error a denial becomes.
type Style int

const (
	// EC2 denials are UnauthorizedOperation (403) with an encoded message.
	EC2 Style = iota
	// IAM denials are AccessDenied (403) with a plain message, as IAM and STS answer.
	IAM
)

// Authorize evaluates every request for the principal and returns nil if all are allowed, else
// the error for the first denied one. EC2-style errors carry an encoded message recorded in the
// world for DecodeAuthorizationMessage.
func Authorize(w *state.World, p Principal, style Style, reqs ...policy.Request) error {
	policies, err := Policies(p.Role)
	if err != nil {
		return err
	}
	for _, req := range reqs {
		d := policy.Evaluate(policies, req)
		if d.Allowed {
			continue
		}
		reason := "no identity-based policy allows the " + req.Action + " action"
		if d.ExplicitDeny {
			reason = "of an explicit deny in an identity-based policy"
		}
		msg := fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s because %s", p.ARN, req.Action, req.Resource, reason)
		if style == IAM {
			return wire.NewError(http.StatusForbidden, "AccessDenied", "%s", msg)
		}
		token, err := record(w, p, req, d)
		if err != nil {
			return err
		}
		return wire.NewError(http.StatusForbidden, "UnauthorizedOperation",
			"You are not authorized to perform this operation. %s. Encoded authorization failure message: %s", msg, token)
	}
	return nil
}

// Policies parses a role's inline policies, in name order.
func Policies(r *state.Role) ([]policy.Policy, error) {
	names := state.SortedKeys(r.Policies)
	out := make([]policy.Policy, 0, len(names))
	for _, n := range names {
		doc, err := policy.Parse(r.Policies[n])
		if err != nil {
			return nil, wire.NewError(http.StatusInternalServerError, "InternalError", "role %s policy %s: %v", r.Name, n, err)
		}
		out = append(out, policy.Policy{Name: n, Document: doc})
	}
	return out, nil
}

// Message is the decoded form of an authorization failure, in the shape STS returns.
type Message struct {
	Allowed           bool               `json:"allowed"`
	ExplicitDeny      bool               `json:"explicitDeny"`
	MatchedStatements itemsOf[statement] `json:"matchedStatements"`
	Failures          itemsOf[string]    `json:"failures"`
	Context           messageContext     `json:"context"`
}

type itemsOf[T any] struct {
	Items []T `json:"items"`
}

type statement struct {
	StatementID string `json:"statementId,omitempty"`
	Effect      string `json:"effect"`
	Source      string `json:"source"`
}

type messageContext struct {
	Principal  principal            `json:"principal"`
	Action     string               `json:"action"`
	Resource   string               `json:"resource"`
	Conditions itemsOf[conditionKV] `json:"conditions"`
}

type principal struct {
	ID  string `json:"id"`
	ARN string `json:"arn"`
}

type conditionKV struct {
	Key    string            `json:"key"`
	Values itemsOf[valueOne] `json:"values"`
}

type valueOne struct {
	Value string `json:"value"`
}

func record(w *state.World, p Principal, req policy.Request, d policy.Decision) (string, error) {
	m := Message{
		Allowed: d.Allowed, ExplicitDeny: d.ExplicitDeny,
		MatchedStatements: itemsOf[statement]{Items: []statement{}}, Failures: itemsOf[string]{Items: []string{}},
		Context: messageContext{Principal: principal{ID: p.Role.ID, ARN: p.ARN}, Action: req.Action, Resource: req.Resource,
			Conditions: itemsOf[conditionKV]{Items: []conditionKV{}}},
	}
	for _, s := range d.Matched {
		m.MatchedStatements.Items = append(m.MatchedStatements.Items, statement{StatementID: s.Sid, Effect: s.Effect, Source: "role/" + p.Role.Name + "/policy/" + s.Policy})
	}
	keys := make([]string, 0, len(req.Context))
	for k := range req.Context {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kv := conditionKV{Key: k}
		for _, v := range req.Context[k] {
			kv.Values.Items = append(kv.Values.Items, valueOne{Value: v})
		}
		m.Context.Conditions.Items = append(m.Context.Conditions.Items, kv)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encoding an authorization message, %w", err)
	}
	sum := sha256.Sum256(body)
	token := base64.RawURLEncoding.EncodeToString(sum[:]) + base64.RawURLEncoding.EncodeToString(body)[:24]
	w.IAM.AuthorizationMessages[token] = string(body)
	return token, nil
}
