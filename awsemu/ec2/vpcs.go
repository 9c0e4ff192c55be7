package ec2

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// vpcXML is a VPC as DescribeVpcs returns it. The emulated VPCs have one IPv4 CIDR block, the
// default DHCP options and tenancy, and are not the region's default VPC.
type vpcXML struct {
	VPCID                   string               `xml:"vpcId"`
	OwnerID                 string               `xml:"ownerId"`
	State                   string               `xml:"state"`
	CIDRBlock               string               `xml:"cidrBlock"`
	CIDRBlockAssociationSet []vpcCIDRAssociation `xml:"cidrBlockAssociationSet>item"`
	DHCPOptionsID           string               `xml:"dhcpOptionsId"`
	InstanceTenancy         string               `xml:"instanceTenancy"`
	IsDefault               bool                 `xml:"isDefault"`
	Tags                    []tagXML             `xml:"tagSet>item"`
}

type vpcCIDRAssociation struct {
	AssociationID  string `xml:"associationId"`
	CIDRBlock      string `xml:"cidrBlock"`
	CIDRBlockState struct {
		State string `xml:"state"`
	} `xml:"cidrBlockState"`
}

type describeVpcsResponse struct {
	XMLName   xml.Name `xml:"DescribeVpcsResponse"`
	XMLNS     string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	VPCs      []vpcXML `xml:"vpcSet>item"`
	NextToken string   `xml:"nextToken,omitempty"`
}

// dhcpOptionsID is the id of the DHCP options every emulated VPC uses: a region's default set.
const dhcpOptionsID = "dopt-0e0d0c0b0a0908070"

// describeVpcs lists the region's VPCs as EC2's DescribeVpcs does: by VpcId (an unknown id is
// InvalidVpcID.NotFound), by the filters EC2 documents for the fields the emulator keeps, paged by
// MaxResults (5 to 1000) and NextToken.
func (h *Handler) describeVpcs(req request) (any, error) {
	limit, err := maxResults(req.form, 5, 1000)
	if err != nil {
		return nil, err
	}
	var out describeVpcsResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		ids := idSet(req.form, "VpcId")
		if miss := missing(ids, func(id string) bool { return r.VPCs[id] != nil }); len(miss) > 0 {
			return wire.NewError(http.StatusBadRequest, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", strings.Join(miss, ", "))
		}
		var matched []vpcXML
		for _, id := range state.SortedKeys(r.VPCs) {
			v := r.VPCs[id]
			if ids != nil && !ids[id] {
				continue
			}
			assoc := v.ID + "-cidr-assoc"
			ok, err := matchFilters(req.form.Filters(), fields{
				"vpc-id": {v.ID}, "cidr": {v.CIDR}, "cidr-block-association.cidr-block": {v.CIDR},
				"cidr-block-association.association-id": {assoc}, "cidr-block-association.state": {"associated"},
				"state": {"available"}, "is-default": {"false"}, "owner-id": {w.AccountID}, "dhcp-options-id": {dhcpOptionsID},
			}, v.Tags)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			x := vpcXML{VPCID: v.ID, OwnerID: w.AccountID, State: "available", CIDRBlock: v.CIDR, DHCPOptionsID: dhcpOptionsID,
				InstanceTenancy: "default", Tags: tagsXML(v.Tags)}
			a := vpcCIDRAssociation{AssociationID: assoc, CIDRBlock: v.CIDR}
			a.CIDRBlockState.State = "associated"
			x.CIDRBlockAssociationSet = []vpcCIDRAssociation{a}
			matched = append(matched, x)
		}
		shown, next, err := onePage(req, "DescribeVpcs", limit, matched)
		if err != nil {
			return err
		}
		out = describeVpcsResponse{XMLNS: ns, RequestID: req.call.RequestID, VPCs: shown, NextToken: next}
		return nil
	})
	return out, err
}
