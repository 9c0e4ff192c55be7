package authz

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// AdminAccessKey is the access key of the administrator identity every world has: a session of
// the role AdminRoleName, allowed every action on every resource. It stands for the person who
// fixes the account through the console or the CLI (iam:PutRolePolicy, eks:CreateAccessEntry),
// so it does not depend on what the world's IAM holds and no world can take it away.
const AdminAccessKey = "AKIDJOINERADMIN"

// AdminRoleName is the role the administrator's session is of. It is not one of the world's
// roles: GetRole does not find it.
const AdminRoleName = "JoinerAdmin"

// Principal is the identity behind an access key, and the region the call was signed for.
type Principal struct {
	Role *state.Role
	// ARN is the assumed-role session ARN the caller acts as.
	ARN string
	// Region is the region of the call's signature: aws:RequestedRegion.
	Region string
	// Admin is true for the administrator (AdminAccessKey).
	Admin bool
}

// Identify returns the principal of the call's access key, or EC2's AuthFailure when it is
// unknown. AdminAccessKey is always known. The role is the world's own, so its policies are read
// as they are at the time of the call: a PutRolePolicy applies from the next call.
func Identify(w *state.World, call wire.Call) (Principal, error) {
	if call.AccessKey == AdminAccessKey {
		role := &state.Role{
			Name: AdminRoleName, ID: "AROAJOINERADMIN0000000", Path: "/",
			ARN:      fmt.Sprintf("arn:aws:iam::%s:role/%s", w.AccountID, AdminRoleName),
			Policies: map[string]string{"AdministratorAccess": state.AllowAllPolicy},
		}
		return Principal{Role: role, Admin: true, Region: call.Region,
			ARN: fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", w.AccountID, role.Name, call.AccessKey)}, nil
	}
	roleName, ok := w.IAM.AccessKeys[call.AccessKey]
	if !ok {
		return Principal{}, wire.NewError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	role, ok := w.IAM.Roles[roleName]
	if !ok {
		return Principal{}, wire.NewError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	return Principal{Role: role, Region: call.Region, ARN: fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", w.AccountID, role.Name, call.AccessKey)}, nil
}

// globalContext adds the global condition keys AWS sets on every request to ctx, unless the
// service already set them: aws:RequestedRegion (the signing region; us-east-1 for IAM, as the
// SDK signs it), aws:PrincipalArn (the role's ARN, not the session's), aws:PrincipalAccount and
// aws:PrincipalType.
func globalContext(w *state.World, p Principal, ctx map[string][]string) map[string][]string {
	out := make(map[string][]string, len(ctx)+4)
	for k, v := range ctx {
		out[k] = v
	}
	global := map[string]string{
		"aws:RequestedRegion": p.Region, "aws:PrincipalArn": p.Role.ARN,
		"aws:PrincipalAccount": w.AccountID, "aws:PrincipalType": "AssumedRole",
	}
	for k, v := range global {
		if v == "" || hasKey(out, k) {
			continue
		}
		out[k] = []string{v}
	}
	return out
}

func hasKey(ctx map[string][]string, key string) bool {
	for k := range ctx {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
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
		req.Context = globalContext(w, p, req.Context)
		d := policy.Evaluate(policies, req)
		w.IAM.RecordDecision(state.Decision{Time: w.Now, Principal: p.ARN, Role: p.Role.ARN, Action: req.Action,
			Resource: req.Resource, Region: p.Region, Allowed: d.Allowed})
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

// Policies parses a role's inline policies, in name order, then the AWS managed policies
// attached to it that the emulator knows (state.ManagedPolicyDocument), in attachment order. A
// managed policy it does not know grants nothing.
func Policies(r *state.Role) ([]policy.Policy, error) {
	names := state.SortedKeys(r.Policies)
	out := make([]policy.Policy, 0, len(names)+len(r.ManagedPolicyARNs))
	for _, n := range names {
		doc, err := policy.Parse(r.Policies[n])
		if err != nil {
			return nil, wire.NewError(http.StatusInternalServerError, "InternalError", "role %s policy %s: %v", r.Name, n, err)
		}
		out = append(out, policy.Policy{Name: n, Document: doc})
	}
	for _, arn := range r.ManagedPolicyARNs {
		text, ok := state.ManagedPolicyDocument(arn)
		if !ok {
			continue
		}
		doc, err := policy.Parse(text)
		if err != nil {
			return nil, wire.NewError(http.StatusInternalServerError, "InternalError", "managed policy %s: %v", arn, err)
		}
		out = append(out, policy.Policy{Name: arn[strings.LastIndex(arn, "/")+1:], Document: doc})
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
