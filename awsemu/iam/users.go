package iam

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// The account's principals as IAM lists them: GetUser, ListUsers, ListRoles and
// ListAttachedUserPolicies, over the roles and users a world seeds.

type userXML struct {
	Path       string   `xml:"Path"`
	UserName   string   `xml:"UserName"`
	UserID     string   `xml:"UserId"`
	ARN        string   `xml:"Arn"`
	CreateDate string   `xml:"CreateDate"`
	Tags       []tagXML `xml:"Tags>member,omitempty"`
}

func userXMLOf(u *state.User) userXML {
	return userXML{Path: u.Path, UserName: u.Name, UserID: u.ID, ARN: u.ARN, CreateDate: u.CreatedAt.UTC().Format(time.RFC3339), Tags: tagsXML(u.Tags)}
}

// userARN is the ARN of the named user: the existing user's, with its path, else the path-less
// ARN a request for a user that does not exist is authorized against.
func userARN(w *state.World, name string) string {
	if u := w.IAM.Users[name]; u != nil {
		return u.ARN
	}
	return fmt.Sprintf("arn:aws:iam::%s:user/%s", w.AccountID, name)
}

type getUserResponse struct {
	XMLName  xml.Name    `xml:"GetUserResponse"`
	XMLNS    string      `xml:"xmlns,attr"`
	User     userXML     `xml:"GetUserResult>User"`
	Metadata metadataXML `xml:"ResponseMetadata"`
}

// userFor reads the request's UserName, authorizes action on that user (with the user's tags as
// the resource context, when the user exists) and returns it, or NoSuchEntity when the user
// does not exist, checked after authorization as IAM does.
func userFor(w *state.World, call wire.Call, f wire.Form, action string) (*state.User, error) {
	name, err := requireName(f, "UserName")
	if err != nil {
		return nil, err
	}
	u := w.IAM.Users[name]
	var ctx map[string][]string
	if u != nil {
		ctx = resourceContext(u.Tags)
	}
	if err := authorize(w, call, action, userARN(w, name), ctx); err != nil {
		return nil, err
	}
	if u == nil {
		return nil, wire.NewError(http.StatusNotFound, "NoSuchEntity", "The user with name %s cannot be found.", name)
	}
	return u, nil
}

// getUser returns the named user. Without a UserName IAM returns the calling user; the
// emulator's callers are roles' sessions, for which IAM requires the name.
func getUser(w *state.World, call wire.Call, f wire.Form) (any, error) {
	if f.String("UserName") == "" {
		return nil, wire.NewError(http.StatusBadRequest, "ValidationError", "Must specify userName when calling with non-User credentials")
	}
	u, err := userFor(w, call, f, "iam:GetUser")
	if err != nil {
		return nil, err
	}
	return getUserResponse{XMLNS: ns, User: userXMLOf(u), Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

// listing reads the paging and PathPrefix of a List* request and authorizes action on the
// resources of kind under the prefix, as IAM scopes list permissions by path.
func listing(w *state.World, call wire.Call, f wire.Form, action, kind string) (prefix string, limit int, err error) {
	if limit, err = maxItems(f); err != nil {
		return "", 0, err
	}
	prefix = f.String("PathPrefix")
	if prefix == "" {
		prefix = "/"
	}
	if !strings.HasPrefix(prefix, "/") || len(prefix) > 512 {
		return "", 0, wire.NewError(http.StatusBadRequest, "ValidationError", "The specified value for pathPrefix is invalid. It must begin with / and contain only alphanumeric characters and/or / characters.")
	}
	if err := authorize(w, call, action, fmt.Sprintf("arn:aws:iam::%s:%s%s*", w.AccountID, kind, prefix), nil); err != nil {
		return "", 0, err
	}
	return prefix, limit, nil
}

type listUsersResponse struct {
	XMLName     xml.Name    `xml:"ListUsersResponse"`
	XMLNS       string      `xml:"xmlns,attr"`
	Users       []userXML   `xml:"ListUsersResult>Users>member"`
	IsTruncated bool        `xml:"ListUsersResult>IsTruncated"`
	Marker      string      `xml:"ListUsersResult>Marker,omitempty"`
	Metadata    metadataXML `xml:"ResponseMetadata"`
}

// listUsers lists the users whose path starts with PathPrefix, by name; as in IAM, without
// their tags.
func listUsers(w *state.World, call wire.Call, f wire.Form) (any, error) {
	users, next, err := listByPath(w, call, f, "iam:ListUsers", "user", w.IAM.Users,
		func(u *state.User) string { return u.Path },
		func(u *state.User) userXML { x := userXMLOf(u); x.Tags = nil; return x })
	if err != nil {
		return nil, err
	}
	return listUsersResponse{XMLNS: ns, Users: users, IsTruncated: next != "", Marker: next,
		Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

// listByPath is one page of the principals (by name) whose path starts with the request's
// PathPrefix, each as the List call shows it, and the marker of the next page ("" on the last).
// action and kind name the call and the principal type for listing's checks.
func listByPath[T, X any](w *state.World, call wire.Call, f wire.Form, action, kind string, items map[string]*T,
	path func(*T) string, listed func(*T) X) ([]X, string, error) {
	prefix, limit, err := listing(w, call, f, action, kind)
	if err != nil {
		return nil, "", err
	}
	matched := []X{}
	for _, name := range state.SortedKeys(items) {
		if item := items[name]; strings.HasPrefix(path(item), prefix) {
			matched = append(matched, listed(item))
		}
	}
	return page(f, action[len("iam:"):]+prefix, limit, matched)
}

type listRolesResponse struct {
	XMLName     xml.Name    `xml:"ListRolesResponse"`
	XMLNS       string      `xml:"xmlns,attr"`
	Roles       []roleXML   `xml:"ListRolesResult>Roles>member"`
	IsTruncated bool        `xml:"ListRolesResult>IsTruncated"`
	Marker      string      `xml:"ListRolesResult>Marker,omitempty"`
	Metadata    metadataXML `xml:"ResponseMetadata"`
}

// listRoles lists the roles whose path starts with PathPrefix, by name; as in IAM, without
// their tags (GetRole has them).
func listRoles(w *state.World, call wire.Call, f wire.Form) (any, error) {
	roles, next, err := listByPath(w, call, f, "iam:ListRoles", "role", w.IAM.Roles,
		func(r *state.Role) string { return r.Path },
		func(r *state.Role) roleXML { x := roleXMLOf(r); x.Tags = nil; return x })
	if err != nil {
		return nil, err
	}
	return listRolesResponse{XMLNS: ns, Roles: roles, IsTruncated: next != "", Marker: next,
		Metadata: metadataXML{RequestID: call.RequestID}}, nil
}

type listAttachedUserPoliciesResponse struct {
	XMLName     xml.Name            `xml:"ListAttachedUserPoliciesResponse"`
	XMLNS       string              `xml:"xmlns,attr"`
	Policies    []attachedPolicyXML `xml:"ListAttachedUserPoliciesResult>AttachedPolicies>member"`
	IsTruncated bool                `xml:"ListAttachedUserPoliciesResult>IsTruncated"`
	Marker      string              `xml:"ListAttachedUserPoliciesResult>Marker,omitempty"`
	Metadata    metadataXML         `xml:"ResponseMetadata"`
}

// listAttachedUserPolicies lists a user's managed policies in attachment order, those whose
// path starts with PathPrefix.
func listAttachedUserPolicies(w *state.World, call wire.Call, f wire.Form) (any, error) {
	u, err := userFor(w, call, f, "iam:ListAttachedUserPolicies")
	if err != nil {
		return nil, err
	}
	policies, next, err := attachedPolicies(f, "ListAttachedUserPolicies/"+u.Name, u.ManagedPolicyARNs)
	if err != nil {
		return nil, err
	}
	return listAttachedUserPoliciesResponse{XMLNS: ns, Policies: policies, IsTruncated: next != "", Marker: next,
		Metadata: metadataXML{RequestID: call.RequestID}}, nil
}
