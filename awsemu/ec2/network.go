package ec2

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

func (h *Handler) describeSubnets(req request) (any, error) {
	limit, err := maxResults(req.form, 5, 1000)
	if err != nil {
		return nil, err
	}
	var out describeSubnetsResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		ids := idSet(req.form, "SubnetId")
		if miss := missing(ids, func(id string) bool { return r.Subnets[id] != nil }); len(miss) > 0 {
			return wire.NewError(http.StatusBadRequest, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", strings.Join(miss, ", "))
		}
		var matched []subnetXML
		for _, id := range state.SortedKeys(r.Subnets) {
			s := r.Subnets[id]
			if ids != nil && !ids[id] {
				continue
			}
			ok, err := matchFilters(req.form.Filters(), fields{
				"subnet-id": {s.ID}, "vpc-id": {s.VPCID}, "availability-zone": {s.Zone}, "availability-zone-id": {s.ZoneID},
				"cidr-block": {s.CIDR}, "state": {"available"}, "default-for-az": {"false"},
				"map-public-ip-on-launch": {boolString(s.MapPublicIPOnStart)}, "owner-id": {w.AccountID},
				"available-ip-address-count": {strconv.Itoa(int(s.AvailableIPs))},
			}, s.Tags)
			if err != nil {
				return err
			}
			if ok {
				matched = append(matched, subnetXML{
					SubnetID: s.ID, SubnetARN: arn(w, r.Name, "subnet", s.ID), State: "available", VPCID: s.VPCID, OwnerID: w.AccountID,
					CIDRBlock: s.CIDR, AvailableIPCount: s.AvailableIPs, AvailabilityZone: s.Zone, AvailabilityZoneID: s.ZoneID,
					MapPublicIPOnLaunch: s.MapPublicIPOnStart, Tags: tagsXML(s.Tags),
				})
			}
		}
		shown, next, err := onePage(req, "DescribeSubnets", limit, matched)
		if err != nil {
			return err
		}
		out = describeSubnetsResponse{XMLNS: ns, RequestID: req.call.RequestID, Subnets: shown, NextToken: next}
		return nil
	})
	return out, err
}

func (h *Handler) describeSecurityGroups(req request) (any, error) {
	limit, err := maxResults(req.form, 5, 1000)
	if err != nil {
		return nil, err
	}
	var out describeSecurityGroupsResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		ids, names := idSet(req.form, "GroupId"), idSet(req.form, "GroupName")
		if miss := missing(ids, func(id string) bool { return r.SecurityGroups[id] != nil }); len(miss) > 0 {
			return wire.NewError(http.StatusBadRequest, "InvalidGroup.NotFound", "The security group '%s' does not exist", strings.Join(miss, ", "))
		}
		var matched []securityGroupXML
		for _, id := range state.SortedKeys(r.SecurityGroups) {
			g := r.SecurityGroups[id]
			if (ids != nil && !ids[id]) || (names != nil && !names[g.Name]) {
				continue
			}
			ok, err := matchFilters(req.form.Filters(), fields{
				"group-id": {g.ID}, "group-name": {g.Name}, "vpc-id": {g.VPCID}, "description": {g.Description}, "owner-id": {w.AccountID},
			}, g.Tags)
			if err != nil {
				return err
			}
			if ok {
				matched = append(matched, securityGroupXML{
					GroupID: g.ID, GroupName: g.Name, GroupDescription: g.Description, VPCID: g.VPCID, OwnerID: w.AccountID,
					ARN: arn(w, r.Name, "security-group", g.ID), Tags: tagsXML(g.Tags),
				})
			}
		}
		shown, next, err := onePage(req, "DescribeSecurityGroups", limit, matched)
		if err != nil {
			return err
		}
		out = describeSecurityGroupsResponse{XMLNS: ns, RequestID: req.call.RequestID, SecurityGroups: shown, NextToken: next}
		return nil
	})
	return out, err
}

// describeImages lists images, paged by MaxResults, for which the API reference states no range
// (upstream Karpenter sends 1000); without it every image is one page.
func (h *Handler) describeImages(req request) (any, error) {
	limit, err := pageSize(req.form)
	if err != nil {
		return nil, err
	}
	var out describeImagesResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		ids, owners := idSet(req.form, "ImageId"), idSet(req.form, "Owner")
		if miss := missing(ids, func(id string) bool { return r.Images[id] != nil }); len(miss) > 0 {
			return wire.NewError(http.StatusBadRequest, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist", strings.Join(miss, ", "))
		}
		includeDeprecated := req.form.Bool("IncludeDeprecated") || ids != nil
		var matched []imageXML
		for _, id := range state.SortedKeys(r.Images) {
			img := r.Images[id]
			if ids != nil && !ids[id] {
				continue
			}
			if owners != nil && !ownedBy(img, owners, w.AccountID) {
				continue
			}
			if img.Deprecated != nil && !img.Deprecated.After(w.Now) && !includeDeprecated {
				continue
			}
			ok, err := matchFilters(req.form.Filters(), fields{
				"image-id": {img.ID}, "name": {img.Name}, "architecture": {img.Architecture}, "owner-id": {img.OwnerID},
				"owner-alias": {img.OwnerAlias}, "state": {imageState(img)}, "image-type": {"machine"}, "is-public": {boolString(isPublic(img))},
				"virtualization-type": {or(img.VirtualizationType, "hvm")}, "root-device-type": {or(img.RootDeviceType, "ebs")},
				"root-device-name": {or(img.RootDeviceName, "/dev/xvda")}, "platform-details": {or(img.PlatformDetails, "Linux/UNIX")},
				"description": {img.Description},
			}, img.Tags)
			if err != nil {
				return err
			}
			if ok {
				matched = append(matched, imageXMLOf(img))
			}
		}
		shown, next, err := onePage(req, "DescribeImages", limit, matched)
		if err != nil {
			return err
		}
		out = describeImagesResponse{XMLNS: ns, RequestID: req.call.RequestID, Images: shown, NextToken: next}
		return nil
	})
	return out, err
}

// deregisterImage removes an image, as EC2's DeregisterImage does: DescribeImages no longer
// lists it and launches naming it fail with InvalidAMIID.NotFound. Instances already running
// from it keep running. Tests use it (with the administrator's key) to take an AMI away from an
// EC2NodeClass mid-run.
func (h *Handler) deregisterImage(req request) (any, error) {
	id := req.form.String("ImageId")
	if id == "" {
		return nil, wire.MissingParameter("ImageId")
	}
	err := h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		if err := authorize(w, req, policy.Request{Action: "ec2:DeregisterImage", Resource: arn(w, r.Name, "image", id)}); err != nil {
			return err
		}
		if r.Images[id] == nil {
			return wire.NewError(http.StatusBadRequest, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
		}
		delete(r.Images, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return deregisterImageResponse{XMLNS: ns, RequestID: req.call.RequestID, Return: true}, nil
}

func imageXMLOf(img *state.Image) imageXML {
	location := img.OwnerAlias
	if location == "" {
		location = img.OwnerID
	}
	x := imageXML{
		ImageID: img.ID, ImageLocation: fmt.Sprintf("%s/%s", location, img.Name), ImageState: imageState(img),
		ImageOwnerID: img.OwnerID, ImageOwnerAlias: img.OwnerAlias, CreationDate: img.CreationDate.UTC().Format("2006-01-02T15:04:05.000Z"),
		IsPublic: isPublic(img), Architecture: img.Architecture, ImageType: "machine", Name: img.Name, Description: img.Description,
		RootDeviceType: or(img.RootDeviceType, "ebs"), RootDeviceName: or(img.RootDeviceName, "/dev/xvda"),
		VirtualizationType: or(img.VirtualizationType, "hvm"), PlatformDetails: or(img.PlatformDetails, "Linux/UNIX"),
		Hypervisor: "xen", ENASupport: true, Tags: tagsXML(img.Tags),
	}
	if img.Deprecated != nil {
		x.DeprecationTime = img.Deprecated.UTC().Format(time.RFC3339)
	}
	return x
}

// ownedBy reports whether the image belongs to one of the requested owners: an account id, an
// alias such as "amazon", or "self".
func ownedBy(img *state.Image, owners map[string]bool, account string) bool {
	return owners[img.OwnerID] || owners[img.OwnerAlias] || (owners["self"] && img.OwnerID == account)
}

// imageState is the image's state; the EKS-optimized images are available.
func imageState(img *state.Image) string { return or(img.State, "available") }

// isPublic reports whether the image is public: Amazon's are, an account's own (custom AMIs
// from a world file) are not.
func isPublic(img *state.Image) bool { return img.OwnerAlias == "amazon" }

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
