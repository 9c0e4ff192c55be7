package sts

import (
	"encoding/xml"
	"maps"
	"net/http"
	"slices"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

const ns = "https://sts.amazonaws.com/doc/2011-06-15/"

// Handler serves the STS query API over a State.
type Handler struct {
	state *state.State
}

// New returns the STS handler over st.
func New(st *state.State) *Handler { return &Handler{state: st} }

type getCallerIdentityResponse struct {
	XMLName  xml.Name              `xml:"GetCallerIdentityResponse"`
	XMLNS    string                `xml:"xmlns,attr"`
	ARN      string                `xml:"GetCallerIdentityResult>Arn"`
	UserID   string                `xml:"GetCallerIdentityResult>UserId"`
	Account  string                `xml:"GetCallerIdentityResult>Account"`
	Metadata wire.ResponseMetadata `xml:"ResponseMetadata"`
}

type decodeResponse struct {
	XMLName  xml.Name              `xml:"DecodeAuthorizationMessageResponse"`
	XMLNS    string                `xml:"xmlns,attr"`
	Decoded  string                `xml:"DecodeAuthorizationMessageResult>DecodedMessage"`
	Metadata wire.ResponseMetadata `xml:"ResponseMetadata"`
}

// Serve answers one STS request from the caller in call.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	form, err := wire.ParseForm(r)
	if err != nil {
		wire.WriteQueryError(w, call.RequestID, wire.NewError(http.StatusBadRequest, "MalformedQueryString", "%v", err))
		return
	}
	var resp any
	err = h.state.Update(func(world *state.World) error {
		p, err := authz.Identify(world, call)
		if err != nil {
			return wire.NewError(http.StatusForbidden, "InvalidClientTokenId", "The security token included in the request is invalid.")
		}
		action := form.String("Action")
		op, ok := operations()[action]
		if !ok {
			return wire.NewError(http.StatusBadRequest, "InvalidAction", "Could not find operation %s for version 2011-06-15", action)
		}
		resp, err = op(world, p, call, form)
		return err
	})
	if err != nil {
		wire.WriteQueryError(w, call.RequestID, err)
		return
	}
	wire.WriteXML(w, resp)
}

// operation serves one action for the caller p.
type operation func(world *state.World, p authz.Principal, call wire.Call, form wire.Form) (any, error)

func operations() map[string]operation {
	return map[string]operation{
		"GetCallerIdentity":          getCallerIdentity,
		"DecodeAuthorizationMessage": decodeAuthorizationMessage,
	}
}

// Actions lists the STS actions the handler serves, sorted.
func Actions() []string { return slices.Sorted(maps.Keys(operations())) }

func getCallerIdentity(world *state.World, p authz.Principal, call wire.Call, _ wire.Form) (any, error) {
	return getCallerIdentityResponse{XMLNS: ns, ARN: p.ARN, UserID: p.Role.ID + ":" + call.AccessKey, Account: world.AccountID,
		Metadata: wire.ResponseMetadata{RequestID: call.RequestID}}, nil
}

// decodeAuthorizationMessage decodes a message an authorization failure encoded. EncodedMessage
// is required (the API reference: 1 to 10240 characters).
func decodeAuthorizationMessage(world *state.World, p authz.Principal, call wire.Call, form wire.Form) (any, error) {
	encoded := form.String("EncodedMessage")
	switch {
	case encoded == "":
		return nil, wire.NewError(http.StatusBadRequest, "ValidationError",
			"1 validation error detected: Value null at 'encodedMessage' failed to satisfy constraint: Member must not be null")
	case len(encoded) > 10240:
		return nil, wire.NewError(http.StatusBadRequest, "ValidationError",
			"1 validation error detected: Value at 'encodedMessage' failed to satisfy constraint: Member must have length less than or equal to 10240")
	}
	if err := authz.Authorize(world, p, authz.IAM, policy.Request{Action: "sts:DecodeAuthorizationMessage", Resource: "*"}); err != nil {
		return nil, err
	}
	msg, ok := world.IAM.AuthorizationMessages[encoded]
	if !ok {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidAuthorizationMessageException", "The message is invalid.")
	}
	return decodeResponse{XMLNS: ns, Decoded: msg, Metadata: wire.ResponseMetadata{RequestID: call.RequestID}}, nil
}
