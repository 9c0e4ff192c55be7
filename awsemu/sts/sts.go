package sts

import (
	"encoding/xml"
	"net/http"

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
		switch action := form.String("Action"); action {
		case "GetCallerIdentity":
			// GetCallerIdentity needs no permission: AWS answers it even under an explicit deny.
			resp = getCallerIdentityResponse{XMLNS: ns, ARN: p.ARN, UserID: p.Role.ID + ":" + call.AccessKey, Account: world.AccountID,
				Metadata: wire.ResponseMetadata{RequestID: call.RequestID}}
		case "DecodeAuthorizationMessage":
			if err := authz.Authorize(world, p, authz.IAM, policy.Request{Action: "sts:DecodeAuthorizationMessage", Resource: "*"}); err != nil {
				return err
			}
			msg, ok := world.IAM.AuthorizationMessages[form.String("EncodedMessage")]
			if !ok {
				return wire.NewError(http.StatusBadRequest, "InvalidAuthorizationMessageException", "The message is invalid.")
			}
			resp = decodeResponse{XMLNS: ns, Decoded: msg, Metadata: wire.ResponseMetadata{RequestID: call.RequestID}}
		default:
			return wire.NewError(http.StatusBadRequest, "InvalidAction", "Could not find operation %s for version 2011-06-15", action)
		}
		return nil
	})
	if err != nil {
		wire.WriteQueryError(w, call.RequestID, err)
		return
	}
	wire.WriteXML(w, resp)
}
