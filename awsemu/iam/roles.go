package iam

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// IAM's quotas that the role operations enforce.
const (
	// inlinePolicyBytes is the most a role's inline policies may total, whitespace excluded.
	inlinePolicyBytes = 10240
	// managedPoliciesPerRole is the default quota of managed policies attached to one role.
	managedPoliciesPerRole = 10
)

var pathPattern = regexp.MustCompile(`^(/|/[\x21-\x7E]+/)$`)

// roleARN is the ARN of the named role: the existing role's, with its path, else the path-less
// ARN a request for a role that does not exist is authorized against.
func roleARN(w *state.World, name string) string {
	if r := w.IAM.Roles[name]; r != nil {
		return r.ARN
	}
	return fmt.Sprintf("arn:aws:iam::%s:role/%s", w.AccountID, name)
}

func noSuchRole(name string) error {
	return wire.NewError(http.StatusNotFound, "NoSuchEntity", "The role with name %s cannot be found.", name)
}

// roleFor authorizes action on the named role and returns it, or NoSuchEntity. Authorization
// comes first, as in AWS: a caller without the permission learns nothing about the role.
func roleFor(w *state.World, call wire.Call, f wire.Form, action string, ctx map[string][]string) (*state.Role, error) {
	name, err := requireName(f, "RoleName")
	if err != nil {
		return nil, err
	}
	r := w.IAM.Roles[name]
	if r != nil {
		if ctx == nil {
			ctx = map[string][]string{}
		}
		for k, v := range resourceContext(r.Tags) {
			ctx[k] = v
		}
	}
	if err := authorize(w, call, action, roleARN(w, name), ctx); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, noSuchRole(name)
	}
	return r, nil
}

type createRoleResponse struct {
	XMLName  xml.Name    `xml:"CreateRoleResponse"`
	XMLNS    string      `xml:"xmlns,attr"`
	Role     roleXML     `xml:"CreateRoleResult>Role"`
	Metadata metadataXML `xml:"ResponseMetadata"`
}

// createRole creates a role with its trust policy, path, description and tags.
func createRole(w *state.World, call wire.Call, f wire.Form) (any, error) {
	name, err := requireName(f, "RoleName")
	if err != nil {
		return nil, err
	}
	path, err := entityPath(f)
	if err != nil {
		return nil, err
	}
	trust := f.String("AssumeRolePolicyDocument")
	if trust == "" {
		return nil, wire.NewError(http.StatusBadRequest, "ValidationError", "1 validation error detected: Value null at 'assumeRolePolicyDocument' failed to satisfy constraint: Member must not be null")
	}
	tags := queryTags(f)
	arn := fmt.Sprintf("arn:aws:iam::%s:role%s%s", w.AccountID, path, name)
	if err := authorize(w, call, "iam:CreateRole", arn, requestContext(tags)); err != nil {
		return nil, err
	}
	if err := checkTrustPolicy(trust); err != nil {
		return nil, err
	}
	for existing := range w.IAM.Roles {
		// Role names are unique in an account whatever their case.
		if strings.EqualFold(existing, name) {
			return nil, wire.NewError(http.StatusConflict, "EntityAlreadyExists", "Role with name %s already exists.", name)
		}
	}
	r := w.PutRole(name, nil)
	r.Path, r.ARN, r.AssumeRolePolicyDocument, r.Description, r.Tags = path, arn, trust, f.String("Description"), tags
	return createRoleResponse{XMLNS: ns, Role: roleXMLOf(r), Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

// checkTrustPolicy checks a role's trust policy as IAM does before storing it: JSON, with
// statements that each have an Effect, an Action and a Principal, and no Resource.
func checkTrustPolicy(doc string) error {
	var raw struct {
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return malformed("This policy contains invalid Json")
	}
	var stmts []map[string]json.RawMessage
	if err := json.Unmarshal(raw.Statement, &stmts); err != nil {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(raw.Statement, &one); err != nil {
			return malformed("Syntax errors in policy.")
		}
		stmts = []map[string]json.RawMessage{one}
	}
	if len(stmts) == 0 {
		return malformed("Syntax errors in policy.")
	}
	for _, s := range stmts {
		switch {
		case s["Resource"] != nil || s["NotResource"] != nil:
			return malformed("Has prohibited field Resource")
		case s["Principal"] == nil && s["NotPrincipal"] == nil:
			return malformed("Missing required field Principal")
		case s["Action"] == nil && s["NotAction"] == nil:
			return malformed("Missing required field Action")
		case string(s["Effect"]) != `"Allow"` && string(s["Effect"]) != `"Deny"`:
			return malformed("Missing required field Effect")
		}
	}
	return nil
}

func malformed(msg string) error {
	return wire.NewError(http.StatusBadRequest, "MalformedPolicyDocument", "%s", msg)
}

// putRolePolicy adds or replaces an inline policy of a role. Authorization reads the role's
// policies at each call, so the new document applies from the role's next call.
func putRolePolicy(w *state.World, call wire.Call, f wire.Form) (any, error) {
	r, err := roleFor(w, call, f, "iam:PutRolePolicy", nil)
	if err != nil {
		return nil, err
	}
	name, err := requireName(f, "PolicyName")
	if err != nil {
		return nil, err
	}
	doc := f.String("PolicyDocument")
	if doc == "" {
		return nil, wire.NewError(http.StatusBadRequest, "ValidationError", "1 validation error detected: Value null at 'policyDocument' failed to satisfy constraint: Member must not be null")
	}
	if !json.Valid([]byte(doc)) {
		return nil, malformed("This policy contains invalid Json")
	}
	if _, err := policy.Parse(doc); err != nil {
		return nil, malformed("Syntax errors in policy. " + err.Error())
	}
	total := compactLen(doc)
	for n, d := range r.Policies {
		if n != name {
			total += compactLen(d)
		}
	}
	if total > inlinePolicyBytes {
		return nil, wire.NewError(http.StatusConflict, "LimitExceeded", "Maximum policy size of %d bytes exceeded for role %s", inlinePolicyBytes, r.Name)
	}
	r.Policies[name] = doc
	return empty("PutRolePolicy", call), nil
}

// compactLen is the size IAM counts for a policy: its characters other than whitespace.
func compactLen(doc string) int {
	n := 0
	for _, c := range doc {
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			n++
		}
	}
	return n
}

type getRolePolicyResponse struct {
	XMLName        xml.Name    `xml:"GetRolePolicyResponse"`
	XMLNS          string      `xml:"xmlns,attr"`
	RoleName       string      `xml:"GetRolePolicyResult>RoleName"`
	PolicyName     string      `xml:"GetRolePolicyResult>PolicyName"`
	PolicyDocument string      `xml:"GetRolePolicyResult>PolicyDocument"`
	Metadata       metadataXML `xml:"ResponseMetadata"`
}

func noSuchRolePolicy(name string) error {
	return wire.NewError(http.StatusNotFound, "NoSuchEntity", "The role policy with name %s cannot be found.", name)
}

// getRolePolicy returns an inline policy URL-encoded, as IAM does.
func getRolePolicy(w *state.World, call wire.Call, f wire.Form) (any, error) {
	r, err := roleFor(w, call, f, "iam:GetRolePolicy", nil)
	if err != nil {
		return nil, err
	}
	name, err := requireName(f, "PolicyName")
	if err != nil {
		return nil, err
	}
	doc, ok := r.Policies[name]
	if !ok {
		return nil, noSuchRolePolicy(name)
	}
	return getRolePolicyResponse{XMLNS: ns, RoleName: r.Name, PolicyName: name, PolicyDocument: encodeDocument(doc),
		Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

func deleteRolePolicy(w *state.World, call wire.Call, f wire.Form) (any, error) {
	r, err := roleFor(w, call, f, "iam:DeleteRolePolicy", nil)
	if err != nil {
		return nil, err
	}
	name, err := requireName(f, "PolicyName")
	if err != nil {
		return nil, err
	}
	if _, ok := r.Policies[name]; !ok {
		return nil, noSuchRolePolicy(name)
	}
	delete(r.Policies, name)
	return empty("DeleteRolePolicy", call), nil
}

type listRolePoliciesResponse struct {
	XMLName     xml.Name    `xml:"ListRolePoliciesResponse"`
	XMLNS       string      `xml:"xmlns,attr"`
	Names       []string    `xml:"ListRolePoliciesResult>PolicyNames>member"`
	IsTruncated bool        `xml:"ListRolePoliciesResult>IsTruncated"`
	Marker      string      `xml:"ListRolePoliciesResult>Marker,omitempty"`
	Metadata    metadataXML `xml:"ResponseMetadata"`
}

func listRolePolicies(w *state.World, call wire.Call, f wire.Form) (any, error) {
	r, err := roleFor(w, call, f, "iam:ListRolePolicies", nil)
	if err != nil {
		return nil, err
	}
	limit, err := maxItems(f)
	if err != nil {
		return nil, err
	}
	names, next, err := page(f, "ListRolePolicies/"+r.Name, limit, state.SortedKeys(r.Policies))
	if err != nil {
		return nil, err
	}
	return listRolePoliciesResponse{XMLNS: ns, Names: names, IsTruncated: next != "", Marker: next,
		Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

// policyARN reads PolicyArn: an AWS managed policy the emulator knows, or the account's own
// (which the emulator has none of, so it is not found).
func policyARN(f wire.Form) (string, error) {
	arn := f.String("PolicyArn")
	if arn == "" {
		return "", wire.NewError(http.StatusBadRequest, "ValidationError", "1 validation error detected: Value null at 'policyArn' failed to satisfy constraint: Member must not be null")
	}
	if !strings.HasPrefix(arn, "arn:aws:iam::") || !strings.Contains(arn, ":policy/") {
		return "", wire.NewError(http.StatusBadRequest, "InvalidInput", "ARN %s is not valid.", arn)
	}
	return arn, nil
}

// attachRolePolicy attaches a managed policy to a role; attaching one already attached does
// nothing, as in IAM.
func attachRolePolicy(w *state.World, call wire.Call, f wire.Form) (any, error) {
	arn, err := policyARN(f)
	if err != nil {
		return nil, err
	}
	r, err := roleFor(w, call, f, "iam:AttachRolePolicy", map[string][]string{"iam:PolicyARN": {arn}})
	if err != nil {
		return nil, err
	}
	if _, ok := state.ManagedPolicyDocument(arn); !ok {
		return nil, wire.NewError(http.StatusNotFound, "NoSuchEntity", "Policy %s does not exist or is not attachable.", arn)
	}
	if slices.Contains(r.ManagedPolicyARNs, arn) {
		return empty("AttachRolePolicy", call), nil
	}
	if len(r.ManagedPolicyARNs) >= managedPoliciesPerRole {
		return nil, wire.NewError(http.StatusConflict, "LimitExceeded", "Cannot exceed quota for PoliciesPerRole: %d", managedPoliciesPerRole)
	}
	r.ManagedPolicyARNs = append(r.ManagedPolicyARNs, arn)
	return empty("AttachRolePolicy", call), nil
}

func detachRolePolicy(w *state.World, call wire.Call, f wire.Form) (any, error) {
	arn, err := policyARN(f)
	if err != nil {
		return nil, err
	}
	r, err := roleFor(w, call, f, "iam:DetachRolePolicy", map[string][]string{"iam:PolicyARN": {arn}})
	if err != nil {
		return nil, err
	}
	i := slices.Index(r.ManagedPolicyARNs, arn)
	if i < 0 {
		return nil, wire.NewError(http.StatusNotFound, "NoSuchEntity", "Policy %s was not found.", arn)
	}
	r.ManagedPolicyARNs = slices.Delete(r.ManagedPolicyARNs, i, i+1)
	return empty("DetachRolePolicy", call), nil
}

type attachedPolicyXML struct {
	PolicyName string `xml:"PolicyName"`
	PolicyArn  string `xml:"PolicyArn"`
}

type listAttachedRolePoliciesResponse struct {
	XMLName     xml.Name            `xml:"ListAttachedRolePoliciesResponse"`
	XMLNS       string              `xml:"xmlns,attr"`
	Policies    []attachedPolicyXML `xml:"ListAttachedRolePoliciesResult>AttachedPolicies>member"`
	IsTruncated bool                `xml:"ListAttachedRolePoliciesResult>IsTruncated"`
	Marker      string              `xml:"ListAttachedRolePoliciesResult>Marker,omitempty"`
	Metadata    metadataXML         `xml:"ResponseMetadata"`
}

// listAttachedRolePolicies lists a role's managed policies in attachment order, those whose
// path (the part of the ARN between "policy" and the name) starts with PathPrefix.
func listAttachedRolePolicies(w *state.World, call wire.Call, f wire.Form) (any, error) {
	r, err := roleFor(w, call, f, "iam:ListAttachedRolePolicies", nil)
	if err != nil {
		return nil, err
	}
	policies, next, err := attachedPolicies(f, "ListAttachedRolePolicies/"+r.Name, r.ManagedPolicyARNs)
	if err != nil {
		return nil, err
	}
	return listAttachedRolePoliciesResponse{XMLNS: ns, Policies: policies, IsTruncated: next != "", Marker: next,
		Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

// attachedPolicies is one page, by the request's MaxItems and Marker, of the managed policies
// arns (in attachment order) whose path (the part of the ARN between "policy" and the name)
// starts with the request's PathPrefix ("/" when absent), and the marker of the next page ("" on
// the last). scope binds the marker to the call and the principal.
func attachedPolicies(f wire.Form, scope string, arns []string) ([]attachedPolicyXML, string, error) {
	limit, err := maxItems(f)
	if err != nil {
		return nil, "", err
	}
	prefix := f.String("PathPrefix")
	if prefix == "" {
		prefix = "/"
	}
	matched := []attachedPolicyXML{}
	for _, arn := range arns {
		_, rest, _ := strings.Cut(arn, ":policy")
		i := strings.LastIndex(rest, "/")
		if path := rest[:i+1]; strings.HasPrefix(path, prefix) {
			matched = append(matched, attachedPolicyXML{PolicyName: rest[i+1:], PolicyArn: arn})
		}
	}
	return page(f, scope, limit, matched)
}

// encodeDocument percent-encodes a policy document as IAM returns it (RFC 3986: a space is
// %20, never "+"), so both url.QueryUnescape and url.PathUnescape read it back.
func encodeDocument(doc string) string {
	return strings.ReplaceAll(url.QueryEscape(doc), "+", "%20")
}

// entityPath reads the Path of a CreateRole or CreateInstanceProfile: "/" when absent, else a
// path of 1 to 512 characters that begins and ends with "/" (the IAM API reference's Pattern).
func entityPath(f wire.Form) (string, error) {
	path := f.String("Path")
	if path == "" {
		return "/", nil
	}
	if !pathPattern.MatchString(path) || len(path) > 512 {
		return "", wire.NewError(http.StatusBadRequest, "ValidationError", "The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	return path, nil
}
