package ec2

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// candidate is one (launch template config, override) pair of a fleet request.
type candidate struct {
	ltID, ltName, version string
	override              fleetOverridesXML
	priority              float64
	price                 float64
}

func fleetCandidates(f wire.Form) []candidate {
	var out []candidate
	for _, cfg := range f.Indexed("LaunchTemplateConfigs") {
		spec := cfg + ".LaunchTemplateSpecification."
		base := candidate{ltID: f.String(spec + "LaunchTemplateId"), ltName: f.String(spec + "LaunchTemplateName"), version: f.String(spec + "Version")}
		overrides := f.Indexed(cfg + ".Overrides")
		if len(overrides) == 0 {
			out = append(out, base)
			continue
		}
		for _, o := range overrides {
			c := base
			c.override = fleetOverridesXML{
				InstanceType: f.String(o + ".InstanceType"), SubnetID: f.String(o + ".SubnetId"),
				AvailabilityZone: f.String(o + ".AvailabilityZone"), ImageID: f.String(o + ".ImageId"), Priority: f.String(o + ".Priority"),
			}
			c.priority = f.Float(o+".Priority", math.Inf(1))
			out = append(out, c)
		}
	}
	return out
}

func (c candidate) xml() ltAndOverridesXML {
	return ltAndOverridesXML{Spec: fleetLTSpecXML{LaunchTemplateID: c.ltID, LaunchTemplateName: c.ltName, Version: c.version}, Overrides: c.override}
}

func (h *Handler) createFleet(req request) (any, error) {
	f := req.form
	total, capacityType, strategy, err := fleetTarget(f)
	if err != nil {
		return nil, err
	}
	specs := f.TagSpecifications("TagSpecification")
	candidates := fleetCandidates(f)
	if len(candidates) == 0 {
		return nil, wire.MissingParameter("LaunchTemplateConfigs")
	}
	var out createFleetResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		p, err := authz.Identify(w, req.call)
		if err != nil {
			return err
		}
		fleetTags := specTags(specs, "fleet")
		if err := authz.Authorize(w, p, authz.EC2, fleetPermissions(w, r, fleetTags)...); err != nil {
			return err
		}
		token, params := f.String("ClientToken"), f.Canonical("ClientToken")
		if f.Bool("DryRun") {
			token = ""
		}
		if replayed, ok, err := replay(r, token, params); ok || err != nil {
			out, out.RequestID = replayed, req.call.RequestID
			return err
		}
		// Only a request that launched is remembered: one that failed may be tried again.
		defer func() {
			if token != "" && len(out.Instances) > 0 {
				r.ClientTokens[token] = state.Idempotent{Params: params, Result: out}
			}
		}()
		fleetID := newFleetID(w)
		out = createFleetResponse{XMLNS: ns, RequestID: req.call.RequestID, FleetID: fleetID}
		order(w, r, candidates, capacityType, strategy)
		remaining := total
		for _, c := range candidates {
			if remaining == 0 {
				break
			}
			res, err := fleetLaunch(w, r, p, c, capacityType, specs)
			if err == nil && req.form.Bool("DryRun") {
				return wire.DryRunOperation()
			}
			if err != nil {
				var we *wire.Error
				if !errors.As(err, &we) {
					return err
				}
				out.Errors = append(out.Errors, fleetErrorXML{LaunchTemplateAndOverrides: c.xml(), Lifecycle: capacityType, ErrorCode: we.Code, ErrorMessage: we.Message})
				continue
			}
			fi := fleetInstanceXML{LaunchTemplateAndOverrides: c.xml(), Lifecycle: capacityType, InstanceType: res.it.Name}
			reservation := "r-" + w.NewID("")[1:]
			for ; remaining > 0; remaining-- {
				inst := start(w, r, res, reservation)
				inst.FleetID = fleetID
				inst.Tags["aws:ec2:fleet-id"] = fleetID
				fi.InstanceIDs = append(fi.InstanceIDs, inst.ID)
			}
			out.Instances = append(out.Instances, fi)
		}
		if req.form.Bool("DryRun") && len(out.Errors) > 0 {
			return wire.NewError(out.Errors[0].status(), out.Errors[0].ErrorCode, "%s", out.Errors[0].ErrorMessage)
		}
		return nil
	})
	return out, err
}

// fleetTarget reads a CreateFleet's target: how many instances, of which capacity type, with
// which allocation strategy; only instant fleets are served.
func fleetTarget(f wire.Form) (total int, capacityType, strategy string, err error) {
	if t := f.String("Type"); t != "instant" {
		return 0, "", "", wire.InvalidParameterValue("The emulator supports only fleets of type instant, got '" + t + "'.")
	}
	total, err = f.Int("TargetCapacitySpecification.TotalTargetCapacity", 0)
	if err != nil {
		return 0, "", "", err
	}
	if total < 1 {
		return 0, "", "", wire.MissingParameter("TargetCapacitySpecification.TotalTargetCapacity")
	}
	capacityType = f.String("TargetCapacitySpecification.DefaultTargetCapacityType")
	if capacityType != state.CapacitySpot && capacityType != state.CapacityOnDemand {
		return 0, "", "", wire.InvalidParameterValue("Value (" + capacityType + ") for parameter DefaultTargetCapacityType is invalid.")
	}
	strategy = f.String("OnDemandOptions.AllocationStrategy")
	if capacityType == state.CapacitySpot {
		strategy = f.String("SpotOptions.AllocationStrategy")
	}
	return total, capacityType, strategy, nil
}

// replay answers a CreateFleet whose client token launched already: with the first answer when
// the parameters are the same, else with IdempotentParameterMismatch. ok is false for a new
// token (or none).
func replay(r *state.Region, token, params string) (out createFleetResponse, ok bool, err error) {
	done, seen := r.ClientTokens[token]
	switch {
	case token == "" || !seen:
		return out, false, nil
	case done.Params != params:
		return out, false, wire.NewError(http.StatusBadRequest, "IdempotentParameterMismatch",
			"Client token %s was already used for a request with different parameters.", token)
	}
	return done.Result.(createFleetResponse), true, nil
}

func (e fleetErrorXML) status() int {
	if e.ErrorCode == "UnauthorizedOperation" {
		return http.StatusForbidden
	}
	return http.StatusBadRequest
}

// order sorts candidates the way the allocation strategy tries them: prioritized by Priority,
// otherwise by price (on-demand price, or the current spot price of the override's zone).
func order(w *state.World, r *state.Region, cs []candidate, capacityType, strategy string) {
	for i := range cs {
		cs[i].price = math.Inf(1)
		zone := cs[i].override.AvailabilityZone
		if s := r.Subnets[cs[i].override.SubnetID]; s != nil {
			zone = s.Zone
		}
		if p, ok := w.HourlyPrice(cs[i].override.InstanceType, r.Name, zone, capacityType); ok {
			cs[i].price = p
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if strategy == "prioritized" && cs[i].priority != cs[j].priority {
			return cs[i].priority < cs[j].priority
		}
		return cs[i].price < cs[j].price
	})
}

// fleetLaunch resolves and authorizes one candidate; a nil error means it can launch now.
func fleetLaunch(w *state.World, r *state.Region, p authz.Principal, c candidate, capacityType string, specs []wire.TagSpecification) (*resolved, error) {
	lt, err := findLaunchTemplate(r, c.ltID, c.ltName)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(c.version); err != nil {
		return nil, err
	}
	data := lt.Data
	if c.override.ImageID != "" {
		data.ImageID = c.override.ImageID
	}
	spec := launchSpec{
		action: "CreateFleet", lt: lt, data: data, instanceType: c.override.InstanceType, subnetID: c.override.SubnetID,
		zone: c.override.AvailabilityZone, capacityType: capacityType,
		instanceTags: merge(data.InstanceTags, specTags(specs, "instance")), volumeTags: merge(data.VolumeTags, specTags(specs, "volume")),
		// CreateFleet's TagSpecifications tag the fleet, instances and volumes; network interfaces
		// and Spot requests take the launch template's tags.
		networkInterfaceTags: data.NetworkInterfaceTags, spotRequestTags: data.SpotRequestTags,
	}
	if spec.instanceType == "" {
		spec.instanceType = data.InstanceType
	}
	res, err := resolve(w, r, spec)
	if err != nil {
		return nil, err
	}
	if err := authz.Authorize(w, p, authz.EC2, permissions(w, r, res)...); err != nil {
		return nil, err
	}
	if err := capacityError(w, r, res); err != nil {
		return nil, err
	}
	return res, nil
}

func merge(a, b state.Tags) state.Tags {
	out := state.Tags{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func (h *Handler) runInstances(req request) (any, error) {
	f := req.form
	minCount, err := f.Int("MinCount", 0)
	if err != nil {
		return nil, err
	}
	maxCount, err := f.Int("MaxCount", 0)
	if err != nil {
		return nil, err
	}
	if minCount < 1 || maxCount < minCount {
		return nil, wire.InvalidParameterValue("Invalid value for MinCount/MaxCount: MinCount must be at least 1 and at most MaxCount.")
	}
	specs := f.TagSpecifications("TagSpecification")
	var out runInstancesResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		spec, err := runSpec(r, f, specs)
		if err != nil {
			return err
		}
		res, err := resolve(w, r, spec)
		if err != nil {
			return err
		}
		if err := authorize(w, req, permissions(w, r, res)...); err != nil {
			return err
		}
		if err := capacityError(w, r, res); err != nil {
			return err
		}
		reservation := "r-" + w.NewID("")[1:]
		out = runInstancesResponse{XMLNS: ns, RequestID: req.call.RequestID, ReservationID: reservation, OwnerID: w.AccountID}
		for range maxCount {
			out.Instances = append(out.Instances, instanceXMLOf(w, start(w, r, res, reservation)))
		}
		return nil
	})
	return out, err
}

// runSpec merges RunInstances parameters over its launch template, if any.
func runSpec(r *state.Region, f wire.Form, specs []wire.TagSpecification) (launchSpec, error) {
	spec := launchSpec{action: "RunInstances", capacityType: state.CapacityOnDemand}
	if id, name := f.String("LaunchTemplate.LaunchTemplateId"), f.String("LaunchTemplate.LaunchTemplateName"); id != "" || name != "" {
		lt, err := findLaunchTemplate(r, id, name)
		if err != nil {
			return spec, err
		}
		if err := checkVersion(f.String("LaunchTemplate.Version")); err != nil {
			return spec, err
		}
		spec.lt, spec.data = lt, lt.Data
	}
	params := launchTemplateData(f, "")
	if params.ImageID != "" {
		spec.data.ImageID = params.ImageID
	}
	if params.UserData != "" {
		spec.data.UserData = params.UserData
	}
	if params.InstanceProfileName != "" || params.InstanceProfileARN != "" {
		spec.data.InstanceProfileName, spec.data.InstanceProfileARN = params.InstanceProfileName, params.InstanceProfileARN
	}
	if len(params.SecurityGroupIDs) > 0 {
		spec.data.SecurityGroupIDs = params.SecurityGroupIDs
	}
	spec.instanceType = f.String("InstanceType")
	if spec.instanceType == "" {
		spec.instanceType = spec.data.InstanceType
	}
	if spec.instanceType == "" {
		spec.instanceType = "m1.small" // EC2's historical default, which the catalogue does not carry
	}
	spec.subnetID, spec.zone = f.String("SubnetId"), f.String("Placement.AvailabilityZone")
	if f.String("InstanceMarketOptions.MarketType") == state.CapacitySpot {
		spec.capacityType = state.CapacitySpot
	}
	spec.instanceTags = merge(spec.data.InstanceTags, specTags(specs, "instance"))
	spec.volumeTags = merge(spec.data.VolumeTags, specTags(specs, "volume"))
	spec.networkInterfaceTags = merge(spec.data.NetworkInterfaceTags, specTags(specs, "network-interface"))
	spec.spotRequestTags = merge(spec.data.SpotRequestTags, specTags(specs, "spot-instances-request"))
	return spec, nil
}

// newFleetID returns a fleet id in EC2's UUID form, counting up like every emulator id.
func newFleetID(w *state.World) string {
	hex := fmt.Sprintf("%032s", w.NewID("")[1:])
	return "fleet-" + hex[0:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:32]
}

// fleetPermissions are what CreateFleet needs on the fleet itself: ec2:CreateFleet, and
// ec2:CreateTags when the fleet is tagged on creation.
func fleetPermissions(w *state.World, r *state.Region, tags state.Tags) []policy.Request {
	reqs := []policy.Request{{Action: "ec2:CreateFleet", Resource: arn(w, r.Name, "fleet", "*"), Context: requestContext(nil, tags)}}
	if len(tags) > 0 {
		reqs = append(reqs, policy.Request{Action: "ec2:CreateTags", Resource: arn(w, r.Name, "fleet", "*"),
			Context: requestContext(map[string][]string{"ec2:CreateAction": {"CreateFleet"}}, tags)})
	}
	return reqs
}
