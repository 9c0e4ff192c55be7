package iam

import (
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

const ns = "https://iam.amazonaws.com/doc/2010-05-08/"

// Handler serves the IAM query API over a State.
type Handler struct {
	state *state.State
}

// New returns the IAM handler over st.
func New(st *state.State) *Handler { return &Handler{state: st} }

type operation func(w *state.World, call wire.Call, f wire.Form) (any, error)

func operations() map[string]operation {
	return map[string]operation{
		"GetRole":                       getRole,
		"GetInstanceProfile":            getInstanceProfile,
		"CreateInstanceProfile":         createInstanceProfile,
		"DeleteInstanceProfile":         deleteInstanceProfile,
		"AddRoleToInstanceProfile":      addRoleToInstanceProfile,
		"RemoveRoleFromInstanceProfile": removeRoleFromInstanceProfile,
		"ListInstanceProfiles":          listInstanceProfiles,
		"TagInstanceProfile":            tagInstanceProfile,
		"CreateRole":                    createRole,
		"PutRolePolicy":                 putRolePolicy,
		"GetRolePolicy":                 getRolePolicy,
		"DeleteRolePolicy":              deleteRolePolicy,
		"ListRolePolicies":              listRolePolicies,
		"AttachRolePolicy":              attachRolePolicy,
		"DetachRolePolicy":              detachRolePolicy,
		"ListAttachedRolePolicies":      listAttachedRolePolicies,
		"ListRoles":                     listRoles,
		"GetUser":                       getUser,
		"ListUsers":                     listUsers,
		"ListAttachedUserPolicies":      listAttachedUserPolicies,
	}
}

// Serve answers one IAM request from the caller in call.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	form, err := wire.ParseForm(r)
	if err != nil {
		wire.WriteQueryError(w, call.RequestID, wire.NewError(http.StatusBadRequest, "MalformedQueryString", "%v", err))
		return
	}
	action := form.String("Action")
	op, ok := operations()[action]
	if !ok {
		wire.WriteQueryError(w, call.RequestID, wire.NewError(http.StatusBadRequest, "InvalidAction", "Could not find operation %s for version 2010-05-08", action))
		return
	}
	var resp any
	err = h.state.Update(func(world *state.World) error {
		var err error
		resp, err = op(world, call, form)
		return err
	})
	if err != nil {
		wire.WriteQueryError(w, call.RequestID, err)
		return
	}
	wire.WriteXML(w, resp)
}

func authorize(w *state.World, call wire.Call, action, resource string, ctx map[string][]string) error {
	p, err := authz.Identify(w, call)
	if err != nil {
		return wire.NewError(http.StatusForbidden, "InvalidClientTokenId", "The security token included in the request is invalid.")
	}
	return authz.Authorize(w, p, authz.IAM, policy.Request{Action: action, Resource: resource, Context: ctx})
}

var namePattern = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)

// nameLength is the longest name the IAM API reference allows for the parameter (its Length
// Constraints): 64 characters for a RoleName, 128 for an InstanceProfileName, a PolicyName and
// GetUser's UserName. (ListAttachedUserPolicies allows a UserName of 64; a longer one names no
// user, NoSuchEntity rather than ValidationError, a difference left alone.)
func nameLength(key string) int {
	if key == "RoleName" {
		return 64
	}
	return 128
}

// Actions lists the IAM actions the handler serves, sorted.
func Actions() []string { return slices.Sorted(maps.Keys(operations())) }

// validation is IAM's ValidationError for a parameter outside its constraint, as IAM words it.
func validation(format string, args ...any) error {
	return wire.NewError(http.StatusBadRequest, "ValidationError", "1 validation error detected: "+format, args...)
}

// maxItems reads MaxItems of a List* request: 100 when absent, else 1 to 1000 (the IAM API
// reference's Valid Range for every List action).
func maxItems(f wire.Form) (int, error) {
	n, err := f.Int("MaxItems", 100)
	if err != nil {
		return 0, err
	}
	switch {
	case n < 1:
		return 0, validation("Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value greater than or equal to 1", n)
	case n > 1000:
		return 0, validation("Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value less than or equal to 1000", n)
	}
	return n, nil
}

// page is the page of items, at most limit of them, that the request's Marker starts, and the
// marker of the next page ("" on the last); scope binds markers to the call (and principal) that
// issued them, so another call refuses them.
func page[X any](f wire.Form, scope string, limit int, items []X) ([]X, string, error) {
	start, end, next, err := wire.Page(scope, len(items), limit, f.String("Marker"))
	if err != nil {
		return nil, "", err
	}
	return items[start:end], next, nil
}

func requireName(f wire.Form, key string) (string, error) {
	name := f.String(key)
	if name == "" {
		return "", wire.NewError(http.StatusBadRequest, "ValidationError", "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", lowerFirst(key))
	}
	if limit := nameLength(key); len(name) > limit {
		return "", validation("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", name, lowerFirst(key), limit)
	}
	if !namePattern.MatchString(name) {
		return "", wire.NewError(http.StatusBadRequest, "ValidationError", "The specified value for %s is invalid. It must contain only alphanumeric characters and/or the following: +=,.@_-", lowerFirst(key))
	}
	return name, nil
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

func noSuchProfile(name string) error {
	return wire.NewError(http.StatusNotFound, "NoSuchEntity", "Instance Profile %s cannot be found.", name)
}

func profileARN(w *state.World, name string) string {
	return fmt.Sprintf("arn:aws:iam::%s:instance-profile/%s", w.AccountID, name)
}

type tagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type roleXML struct {
	Path                     string   `xml:"Path"`
	RoleName                 string   `xml:"RoleName"`
	RoleID                   string   `xml:"RoleId"`
	ARN                      string   `xml:"Arn"`
	CreateDate               string   `xml:"CreateDate"`
	AssumeRolePolicyDocument string   `xml:"AssumeRolePolicyDocument"`
	Description              string   `xml:"Description,omitempty"`
	MaxSessionDuration       int      `xml:"MaxSessionDuration"`
	Tags                     []tagXML `xml:"Tags>member,omitempty"`
}

type profileXML struct {
	InstanceProfileID   string    `xml:"InstanceProfileId"`
	InstanceProfileName string    `xml:"InstanceProfileName"`
	Path                string    `xml:"Path"`
	ARN                 string    `xml:"Arn"`
	CreateDate          string    `xml:"CreateDate"`
	Roles               []roleXML `xml:"Roles>member"`
	Tags                []tagXML  `xml:"Tags>member,omitempty"`
}

type metadataXML = wire.ResponseMetadata

func tagsXML(t state.Tags) []tagXML {
	var out []tagXML
	for _, k := range state.SortedKeys(t) {
		out = append(out, tagXML{Key: k, Value: t[k]})
	}
	return out
}

func roleXMLOf(r *state.Role) roleXML {
	return roleXML{
		Path: r.Path, RoleName: r.Name, RoleID: r.ID, ARN: r.ARN, CreateDate: r.CreatedAt.UTC().Format(time.RFC3339),
		AssumeRolePolicyDocument: encodeDocument(r.AssumeRolePolicyDocument), Description: r.Description, MaxSessionDuration: 3600, Tags: tagsXML(r.Tags),
	}
}

func profileXMLOf(w *state.World, p *state.InstanceProfile) profileXML {
	x := profileXML{
		InstanceProfileID: p.ID, InstanceProfileName: p.Name, Path: p.Path, ARN: p.ARN,
		CreateDate: p.CreatedAt.UTC().Format(time.RFC3339), Roles: []roleXML{}, Tags: tagsXML(p.Tags),
	}
	if r := w.IAM.Roles[p.RoleName]; r != nil {
		x.Roles = append(x.Roles, roleXMLOf(r))
	}
	return x
}

type getRoleResponse struct {
	XMLName  xml.Name    `xml:"GetRoleResponse"`
	XMLNS    string      `xml:"xmlns,attr"`
	Role     roleXML     `xml:"GetRoleResult>Role"`
	Metadata metadataXML `xml:"ResponseMetadata"`
}

func getRole(w *state.World, call wire.Call, f wire.Form) (any, error) {
	name, err := requireName(f, "RoleName")
	if err != nil {
		return nil, err
	}
	if err := authorize(w, call, "iam:GetRole", roleARN(w, name), nil); err != nil {
		return nil, err
	}
	r := w.IAM.Roles[name]
	if r == nil {
		return nil, wire.NewError(http.StatusNotFound, "NoSuchEntity", "The role with name %s cannot be found.", name)
	}
	return getRoleResponse{XMLNS: ns, Role: roleXMLOf(r), Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

type getInstanceProfileResponse struct {
	XMLName  xml.Name    `xml:"GetInstanceProfileResponse"`
	XMLNS    string      `xml:"xmlns,attr"`
	Profile  profileXML  `xml:"GetInstanceProfileResult>InstanceProfile"`
	Metadata metadataXML `xml:"ResponseMetadata"`
}

func getInstanceProfile(w *state.World, call wire.Call, f wire.Form) (any, error) {
	name, err := requireName(f, "InstanceProfileName")
	if err != nil {
		return nil, err
	}
	if err := authorize(w, call, "iam:GetInstanceProfile", profileARN(w, name), nil); err != nil {
		return nil, err
	}
	p := w.IAM.InstanceProfiles[name]
	if p == nil {
		return nil, noSuchProfile(name)
	}
	return getInstanceProfileResponse{XMLNS: ns, Profile: profileXMLOf(w, p), Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

type createInstanceProfileResponse struct {
	XMLName  xml.Name    `xml:"CreateInstanceProfileResponse"`
	XMLNS    string      `xml:"xmlns,attr"`
	Profile  profileXML  `xml:"CreateInstanceProfileResult>InstanceProfile"`
	Metadata metadataXML `xml:"ResponseMetadata"`
}

func queryTags(f wire.Form) state.Tags {
	out := state.Tags{}
	for _, t := range f.Tags("Tags.member") {
		out[t.Key] = t.Value
	}
	return out
}

func requestContext(tags state.Tags) map[string][]string {
	ctx := map[string][]string{}
	for _, k := range state.SortedKeys(tags) {
		ctx["aws:RequestTag/"+k] = []string{tags[k]}
		ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], k)
	}
	return ctx
}

func resourceContext(tags state.Tags) map[string][]string {
	ctx := map[string][]string{}
	for k, v := range tags {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
	return ctx
}

func createInstanceProfile(w *state.World, call wire.Call, f wire.Form) (any, error) {
	name, err := requireName(f, "InstanceProfileName")
	if err != nil {
		return nil, err
	}
	path, err := entityPath(f)
	if err != nil {
		return nil, err
	}
	tags := queryTags(f)
	if err := authorize(w, call, "iam:CreateInstanceProfile", profileARN(w, name), requestContext(tags)); err != nil {
		return nil, err
	}
	// Tagging on creation needs iam:TagInstanceProfile as well, as AWS authorizes tag-on-create
	// (the EC2 User Guide's "Grant permission to tag resources during creation" states it for
	// ec2:CreateTags; IAM's tagging actions work alike). The context is the request's tags as
	// aws:RequestTag/KEY and aws:TagKeys (IAM User Guide, "Controlling access during AWS
	// requests"), and, the profile being created with them, as its aws:ResourceTag/KEY: Karpenter's
	// documented controller policy (v1, AllowScopedInstanceProfileTagActions) allows
	// iam:TagInstanceProfile only where aws:ResourceTag and aws:RequestTag both name the cluster,
	// region and node class, and Karpenter (pkg/providers/instanceprofile) creates its profiles
	// with those tags in the one CreateInstanceProfile call, which AWS allows under that policy.
	if len(tags) > 0 {
		ctx := requestContext(tags)
		for k, v := range resourceContext(tags) {
			ctx[k] = v
		}
		if err := authorize(w, call, "iam:TagInstanceProfile", profileARN(w, name), ctx); err != nil {
			return nil, err
		}
	}
	if w.IAM.InstanceProfiles[name] != nil {
		return nil, wire.NewError(http.StatusConflict, "EntityAlreadyExists", "Instance Profile %s already exists.", name)
	}
	p := w.PutInstanceProfile(name)
	p.Path = path
	p.Tags = tags
	return createInstanceProfileResponse{XMLNS: ns, Profile: profileXMLOf(w, p), Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

type emptyResponse struct {
	XMLName  xml.Name
	XMLNS    string      `xml:"xmlns,attr"`
	Metadata metadataXML `xml:"ResponseMetadata"`
}

func empty(action string, call wire.Call) emptyResponse {
	return emptyResponse{XMLName: xml.Name{Local: action + "Response"}, XMLNS: ns, Metadata: metadataXML{RequestID: call.RequestID}}
}

func deleteInstanceProfile(w *state.World, call wire.Call, f wire.Form) (any, error) {
	name, err := requireName(f, "InstanceProfileName")
	if err != nil {
		return nil, err
	}
	p := w.IAM.InstanceProfiles[name]
	var tags state.Tags
	if p != nil {
		tags = p.Tags
	}
	if err := authorize(w, call, "iam:DeleteInstanceProfile", profileARN(w, name), resourceContext(tags)); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, noSuchProfile(name)
	}
	if p.RoleName != "" {
		return nil, wire.NewError(http.StatusConflict, "DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.")
	}
	delete(w.IAM.InstanceProfiles, name)
	return empty("DeleteInstanceProfile", call), nil
}

// profileRoleRequest reads the instance profile and role names of Add/RemoveRoleFromInstanceProfile
// and authorizes action on the profile (with its tags, as AWS does) before saying it is missing.
func profileRoleRequest(w *state.World, call wire.Call, f wire.Form, action string) (*state.InstanceProfile, string, error) {
	name, err := requireName(f, "InstanceProfileName")
	if err != nil {
		return nil, "", err
	}
	roleName, err := requireName(f, "RoleName")
	if err != nil {
		return nil, "", err
	}
	p := w.IAM.InstanceProfiles[name]
	var tags state.Tags
	if p != nil {
		tags = p.Tags
	}
	if err := authorize(w, call, action, profileARN(w, name), resourceContext(tags)); err != nil {
		return nil, "", err
	}
	if p == nil {
		return nil, "", noSuchProfile(name)
	}
	return p, roleName, nil
}

func addRoleToInstanceProfile(w *state.World, call wire.Call, f wire.Form) (any, error) {
	p, roleName, err := profileRoleRequest(w, call, f, "iam:AddRoleToInstanceProfile")
	if err != nil {
		return nil, err
	}
	role := w.IAM.Roles[roleName]
	if role == nil {
		return nil, wire.NewError(http.StatusNotFound, "NoSuchEntity", "The role with name %s cannot be found.", roleName)
	}
	// Adding a role to a profile passes it: AWS checks iam:PassRole here too, to EC2 (the service
	// instance profiles are for), so a PassRole allowed only for iam:PassedToService
	// ec2.amazonaws.com, as Karpenter's controller policy writes it, allows it.
	if err := authorize(w, call, "iam:PassRole", role.ARN, map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}); err != nil {
		return nil, err
	}
	if p.RoleName != "" {
		return nil, wire.NewError(http.StatusConflict, "LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1")
	}
	p.RoleName = roleName
	return empty("AddRoleToInstanceProfile", call), nil
}

func removeRoleFromInstanceProfile(w *state.World, call wire.Call, f wire.Form) (any, error) {
	p, roleName, err := profileRoleRequest(w, call, f, "iam:RemoveRoleFromInstanceProfile")
	if err != nil {
		return nil, err
	}
	if p.RoleName != roleName {
		return nil, wire.NewError(http.StatusNotFound, "NoSuchEntity", "The role with name %s cannot be found.", roleName)
	}
	p.RoleName = ""
	return empty("RemoveRoleFromInstanceProfile", call), nil
}

type listInstanceProfilesResponse struct {
	XMLName     xml.Name     `xml:"ListInstanceProfilesResponse"`
	XMLNS       string       `xml:"xmlns,attr"`
	Profiles    []profileXML `xml:"ListInstanceProfilesResult>InstanceProfiles>member"`
	IsTruncated bool         `xml:"ListInstanceProfilesResult>IsTruncated"`
	Marker      string       `xml:"ListInstanceProfilesResult>Marker,omitempty"`
	Metadata    metadataXML  `xml:"ResponseMetadata"`
}

func listInstanceProfiles(w *state.World, call wire.Call, f wire.Form) (any, error) {
	if err := authorize(w, call, "iam:ListInstanceProfiles", profileARN(w, "*"), nil); err != nil {
		return nil, err
	}
	limit, err := maxItems(f)
	if err != nil {
		return nil, err
	}
	prefix := f.String("PathPrefix")
	if prefix == "" {
		prefix = "/"
	}
	var matched []profileXML
	for _, name := range state.SortedKeys(w.IAM.InstanceProfiles) {
		if p := w.IAM.InstanceProfiles[name]; strings.HasPrefix(p.Path, prefix) {
			matched = append(matched, profileXMLOf(w, p))
		}
	}
	profiles, next, err := page(f, "ListInstanceProfiles", limit, matched)
	if err != nil {
		return nil, err
	}
	return listInstanceProfilesResponse{XMLNS: ns, Profiles: profiles, IsTruncated: next != "", Marker: next,
		Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

func tagInstanceProfile(w *state.World, call wire.Call, f wire.Form) (any, error) {
	name, err := requireName(f, "InstanceProfileName")
	if err != nil {
		return nil, err
	}
	tags := queryTags(f)
	p := w.IAM.InstanceProfiles[name]
	ctx := requestContext(tags)
	if p != nil {
		for k, v := range resourceContext(p.Tags) {
			ctx[k] = v
		}
	}
	if err := authorize(w, call, "iam:TagInstanceProfile", profileARN(w, name), ctx); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, noSuchProfile(name)
	}
	for k, v := range tags {
		p.Tags[k] = v
	}
	return empty("TagInstanceProfile", call), nil
}
