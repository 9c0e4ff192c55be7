package ec2

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// launchSpec is one fully resolved way to launch an instance: a launch template's data with a
// fleet override or RunInstances parameters applied on top.
type launchSpec struct {
	action       string // the API action that launches: RunInstances or CreateFleet
	lt           *state.LaunchTemplate
	data         state.LaunchTemplateData
	instanceType string
	subnetID     string
	zone         string
	capacityType string
	instanceTags state.Tags
	volumeTags   state.Tags
	// networkInterfaceTags and spotRequestTags tag the network interface and the Spot Instance
	// request the launch creates.
	networkInterfaceTags state.Tags
	spotRequestTags      state.Tags
}

// resolved is a launchSpec checked against the world.
type resolved struct {
	spec    launchSpec
	it      catalog.InstanceType
	image   *state.Image
	subnet  *state.Subnet
	groups  []*state.SecurityGroup
	profile *state.InstanceProfile
}

// resolve checks that everything the spec names exists and fits, with EC2's error codes.
func resolve(w *state.World, r *state.Region, s launchSpec) (*resolved, error) {
	out := &resolved{spec: s}
	it, ok := w.Catalog.Type(s.instanceType)
	if !ok || len(it.Offerings[r.Name]) == 0 {
		return nil, wire.InvalidParameterValue(fmt.Sprintf("Invalid value '%s' for InstanceType.", s.instanceType))
	}
	out.it = it
	if s.data.ImageID == "" {
		return nil, wire.MissingParameter("ImageId")
	}
	if out.image = r.Images[s.data.ImageID]; out.image == nil {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist", s.data.ImageID)
	}
	if out.image.Architecture != it.Architecture {
		return nil, wire.InvalidParameterValue(fmt.Sprintf("The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. Specify an instance type and an AMI that have matching architectures, and try again. You can use 'describe-instance-types' or 'describe-images' to discover the architecture of the instance type or AMI.", it.Architecture, out.image.Architecture))
	}
	if err := resolveSubnet(r, out); err != nil {
		return nil, err
	}
	if !it.Offered(r.Name, out.subnet.Zone) {
		return nil, wire.NewError(http.StatusBadRequest, "Unsupported",
			"Your requested instance type (%s) is not supported in your requested Availability Zone (%s). Please retry your request by not specifying an Availability Zone or choosing %s.",
			it.Name, out.subnet.Zone, strings.Join(it.Offerings[r.Name], ", "))
	}
	for _, id := range s.data.SecurityGroupIDs {
		g := r.SecurityGroups[id]
		if g == nil {
			return nil, wire.NewError(http.StatusBadRequest, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
		}
		out.groups = append(out.groups, g)
	}
	if err := resolveProfile(w, out); err != nil {
		return nil, err
	}
	return out, nil
}

func resolveSubnet(r *state.Region, out *resolved) error {
	s := out.spec
	if s.subnetID != "" {
		if out.subnet = r.Subnets[s.subnetID]; out.subnet == nil {
			return wire.NewError(http.StatusBadRequest, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", s.subnetID)
		}
		return nil
	}
	// Without a subnet EC2 uses the default subnet of the zone; the emulator picks the first
	// subnet of the zone (or of the region).
	for _, id := range state.SortedKeys(r.Subnets) {
		if sub := r.Subnets[id]; s.zone == "" || sub.Zone == s.zone {
			out.subnet = sub
			return nil
		}
	}
	return wire.NewError(http.StatusBadRequest, "MissingInput", "No subnets found for the default VPC. Please specify a subnet.")
}

func resolveProfile(w *state.World, out *resolved) error {
	d := out.spec.data
	switch {
	case d.InstanceProfileName != "":
		out.profile = w.IAM.InstanceProfiles[d.InstanceProfileName]
	case d.InstanceProfileARN != "":
		for _, p := range w.IAM.InstanceProfiles {
			if p.ARN == d.InstanceProfileARN {
				out.profile = p
			}
		}
	default:
		return nil
	}
	if out.profile == nil {
		return wire.InvalidParameterValue(fmt.Sprintf("Value (%s) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name", d.InstanceProfileName+d.InstanceProfileARN))
	}
	return nil
}

// permissions lists what launching res needs: RunInstances on every resource it touches or
// creates, CreateTags on what it tags, and iam:PassRole on the instance profile's role.
//
// A resource created with tags is authorized as AWS documents tag-on-create (EC2 User Guide,
// "Grant permission to tag resources during creation"): the creating action (ec2:RunInstances,
// also for CreateFleet's launches) on the new resource with aws:RequestTag/KEY and aws:TagKeys of
// the tags it is created with, and, since tags are specified, ec2:CreateTags on it with
// ec2:CreateAction naming the API call. That holds for every resource a launch tags: the
// instance, its volumes, its network interface and its Spot Instance request, each with its own
// tags (the request's TagSpecification of that resource type over the launch template's).
func permissions(w *state.World, r *state.Region, res *resolved) []policy.Request {
	s := res.spec
	run := func(kind, id string, ctx map[string][]string) policy.Request {
		return policy.Request{Action: "ec2:RunInstances", Resource: arn(w, r.Name, kind, id), Context: ctx}
	}
	instCtx := requestContext(map[string][]string{
		"ec2:InstanceType": {res.it.Name}, "ec2:AvailabilityZone": {res.subnet.Zone}, "ec2:Region": {r.Name},
	}, s.instanceTags)
	if res.profile != nil {
		instCtx["ec2:InstanceProfile"] = []string{res.profile.ARN}
	}
	reqs := []policy.Request{
		run("instance", "*", instCtx),
		run("volume", "*", requestContext(map[string][]string{"ec2:AvailabilityZone": {res.subnet.Zone}}, s.volumeTags)),
		run("network-interface", "*", requestContext(map[string][]string{"ec2:Subnet": {arn(w, r.Name, "subnet", res.subnet.ID)}}, s.networkInterfaceTags)),
		run("subnet", res.subnet.ID, resourceContext(map[string][]string{"ec2:AvailabilityZone": {res.subnet.Zone}, "ec2:Vpc": {arn(w, r.Name, "vpc", res.subnet.VPCID)}}, res.subnet.Tags)),
		run("image", res.image.ID, resourceContext(map[string][]string{"ec2:Owner": {ownerOf(res.image)}}, res.image.Tags)),
	}
	for _, g := range res.groups {
		reqs = append(reqs, run("security-group", g.ID, resourceContext(nil, g.Tags)))
	}
	if s.lt != nil {
		reqs = append(reqs, run("launch-template", s.lt.ID, resourceContext(nil, s.lt.Tags)))
	}
	tagged := []struct {
		kind string
		tags state.Tags
	}{{"instance", s.instanceTags}, {"volume", s.volumeTags}, {"network-interface", s.networkInterfaceTags}}
	if s.capacityType == state.CapacitySpot {
		reqs = append(reqs, run("spot-instances-request", "*", requestContext(nil, s.spotRequestTags)))
		tagged = append(tagged, struct {
			kind string
			tags state.Tags
		}{"spot-instances-request", s.spotRequestTags})
	}
	for _, t := range tagged {
		if len(t.tags) > 0 {
			reqs = append(reqs, policy.Request{Action: "ec2:CreateTags", Resource: arn(w, r.Name, t.kind, "*"),
				Context: requestContext(map[string][]string{"ec2:CreateAction": {s.action}}, t.tags)})
		}
	}
	if res.profile != nil && res.profile.RoleName != "" {
		if role := w.IAM.Roles[res.profile.RoleName]; role != nil {
			reqs = append(reqs, policy.Request{Action: "iam:PassRole", Resource: role.ARN,
				Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}})
		}
	}
	return reqs
}

func ownerOf(img *state.Image) string {
	if img.OwnerAlias != "" {
		return img.OwnerAlias
	}
	return img.OwnerID
}

// capacityError returns InsufficientFreeAddressesInSubnet when the subnet has no free address,
// and InsufficientInstanceCapacity when the pool is out of capacity.
func capacityError(w *state.World, r *state.Region, res *resolved) error {
	if res.subnet.AvailableIPs <= 0 {
		return wire.NewError(http.StatusBadRequest, "InsufficientFreeAddressesInSubnet",
			"There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", res.subnet.ID)
	}
	pool := state.Pool{InstanceType: res.it.Name, Zone: res.subnet.Zone, CapacityType: res.spec.capacityType}
	if !w.Faults.InsufficientCapacity[pool] {
		return nil
	}
	w.Faults.Injected.InsufficientCapacity++
	if res.spec.capacityType == state.CapacitySpot {
		return wire.NewError(http.StatusInternalServerError, "InsufficientInstanceCapacity",
			"There is no Spot capacity available that matches your request.")
	}
	others := slices.DeleteFunc(slices.Clone(res.it.Offerings[r.Name]), func(z string) bool { return z == res.subnet.Zone })
	return wire.NewError(http.StatusInternalServerError, "InsufficientInstanceCapacity",
		"We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an Availability Zone in your request or choosing %s.",
		res.it.Name, res.subnet.Zone, res.it.Name, strings.Join(others, ", "))
}

// start creates the instance for a resolved spec. The caller has authorized it.
func start(w *state.World, r *state.Region, res *resolved, reservationID string) *state.Instance {
	s := res.spec
	id := w.NewID("i")
	ip := res.subnet.NextPrivateIP() // capacityError has refused a subnet without a free address
	inst := &state.Instance{
		ID: id, Region: r.Name, Zone: res.subnet.Zone, ZoneID: res.subnet.ZoneID, SubnetID: res.subnet.ID, VPCID: res.subnet.VPCID,
		InstanceType: res.it.Name, Architecture: res.it.Architecture, Hypervisor: res.it.Hypervisor, ImageID: res.image.ID,
		CapacityType: s.capacityType, PrivateIP: ip, PrivateDNSName: privateDNSName(ip, r.Name),
		UserData: s.data.UserData, Tags: state.Tags{}, LaunchTime: w.Now, State: state.InstancePending, StateChangedAt: w.Now,
		ReservationID: reservationID,
	}
	for k, v := range s.instanceTags {
		inst.Tags[k] = v
	}
	if s.lt != nil {
		inst.LaunchTemplateID = s.lt.ID
		inst.Tags["aws:ec2launchtemplate:id"] = s.lt.ID
		inst.Tags["aws:ec2launchtemplate:version"] = "1"
	}
	for _, g := range res.groups {
		inst.SecurityGroupIDs = append(inst.SecurityGroupIDs, g.ID)
	}
	if res.profile != nil {
		inst.InstanceProfileARN, inst.InstanceProfileID = res.profile.ARN, res.profile.ID
	}
	r.Instances[id] = inst
	return inst
}

// privateDNSName is EC2's IP-based hostname: ip-10-0-1-2.REGION.compute.internal, except in
// us-east-1, which keeps EC2's first scheme, ip-10-0-1-2.ec2.internal (so Node names differ).
func privateDNSName(ip, region string) string {
	if region == "us-east-1" {
		return "ip-" + strings.ReplaceAll(ip, ".", "-") + ".ec2.internal"
	}
	return "ip-" + strings.ReplaceAll(ip, ".", "-") + "." + region + ".compute.internal"
}
