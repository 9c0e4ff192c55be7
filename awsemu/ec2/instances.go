package ec2

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

func instanceXMLOf(w *state.World, i *state.Instance) instanceXML {
	x := instanceXML{
		InstanceID: i.ID, ImageID: i.ImageID, State: stateXML{Code: state.StateCode(i.State), Name: i.State},
		PrivateDNSName: i.PrivateDNSName, InstanceType: i.InstanceType, LaunchTime: i.LaunchTime.UTC().Format(time.RFC3339),
		Placement: placementXML{AvailabilityZone: i.Zone, AvailabilityZoneID: i.ZoneID, Tenancy: "default"},
		SubnetID:  i.SubnetID, VPCID: i.VPCID, PrivateIPAddress: i.PrivateIP, Architecture: i.Architecture,
		RootDeviceType: "ebs", RootDeviceName: "/dev/xvda", VirtualizationType: "hvm", Hypervisor: "xen", Tags: tagsXML(i.Tags),
	}
	if i.Hypervisor == "nitro" || i.Hypervisor == "" {
		x.Hypervisor = "xen" // EC2 reports "xen" for every HVM instance, Nitro included
	}
	if i.CapacityType == state.CapacitySpot {
		x.InstanceLifecycle = "spot"
	}
	for _, g := range i.SecurityGroupIDs {
		x.Groups = append(x.Groups, groupXML{GroupID: g, GroupName: groupName(w, i.Region, g)})
	}
	if i.InstanceProfileARN != "" {
		x.IAMInstanceProfile = &profileXML{ARN: i.InstanceProfileARN, ID: i.InstanceProfileID}
	}
	if i.State == state.InstanceShuttingDown || i.State == state.InstanceTerminated {
		x.StateReason = &stateReasonXML{Code: "Client.UserInitiatedShutdown", Message: "Client.UserInitiatedShutdown: User initiated shutdown"}
		x.Reason = "User initiated (" + i.StateChangedAt.UTC().Format("2006-01-02 15:04:05 MST") + ")"
		x.PrivateDNSName, x.PrivateIPAddress = "", ""
	}
	return x
}

func groupName(w *state.World, region, id string) string {
	if g := w.Regions[region].SecurityGroups[id]; g != nil {
		return g.Name
	}
	return ""
}

func instanceFields(i *state.Instance) fields {
	f := fields{
		"instance-id": {i.ID}, "instance-state-name": {i.State}, "instance-type": {i.InstanceType},
		"availability-zone": {i.Zone}, "subnet-id": {i.SubnetID}, "vpc-id": {i.VPCID}, "image-id": {i.ImageID},
		"private-dns-name": {i.PrivateDNSName}, "private-ip-address": {i.PrivateIP}, "architecture": {i.Architecture},
		"iam-instance-profile.arn": {i.InstanceProfileARN}, "reservation-id": {i.ReservationID},
		"instance-state-code": {strconv.Itoa(state.StateCode(i.State))},
	}
	if i.CapacityType == state.CapacitySpot {
		f["instance-lifecycle"] = []string{"spot"}
	} else {
		f["instance-lifecycle"] = nil
	}
	return f
}

func (h *Handler) describeInstances(req request) (any, error) {
	limit, err := maxResults(req.form, 5, 1000)
	if err != nil {
		return nil, err
	}
	ids := idSet(req.form, "InstanceId")
	if ids != nil && limit > 0 {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter instancesSet cannot be used with the parameter maxResults")
	}
	var out describeInstancesResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		if miss := missing(ids, func(id string) bool { return visible(w, r.Instances[id]) }); len(miss) > 0 {
			return errInstanceNotFound(miss)
		}
		var matched []*state.Instance
		for _, id := range state.SortedKeys(r.Instances) {
			inst := r.Instances[id]
			if (ids != nil && !ids[id]) || !visible(w, inst) {
				continue
			}
			ok, err := matchFilters(req.form.Filters(), instanceFields(inst), inst.Tags)
			if err != nil {
				return err
			}
			if ok {
				matched = append(matched, inst)
			}
		}
		shown, next, err := onePage(req, "DescribeInstances", limit, matched)
		if err != nil {
			return err
		}
		out = describeInstancesResponse{XMLNS: ns, RequestID: req.call.RequestID, Reservations: reservations(w, shown), NextToken: next}
		return nil
	})
	return out, err
}

// reservations groups instances by the request that launched them, in launch order.
func reservations(w *state.World, insts []*state.Instance) []reservationXML {
	var out []reservationXML
	index := map[string]int{}
	for _, inst := range insts {
		i, ok := index[inst.ReservationID]
		if !ok {
			i = len(out)
			index[inst.ReservationID] = i
			out = append(out, reservationXML{ReservationID: inst.ReservationID, OwnerID: w.AccountID})
		}
		out[i].Instances = append(out[i].Instances, instanceXMLOf(w, inst))
	}
	return out
}

func errInstanceNotFound(ids []string) error {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = "'" + id + "'"
	}
	if len(ids) == 1 {
		return wire.NewError(http.StatusBadRequest, "InvalidInstanceID.NotFound", "The instance ID %s does not exist", quoted[0])
	}
	return wire.NewError(http.StatusBadRequest, "InvalidInstanceID.NotFound", "The instance IDs %s do not exist", strings.Join(quoted, ", "))
}

func (h *Handler) describeInstanceStatus(req request) (any, error) {
	limit, err := maxResults(req.form, 5, 1000)
	if err != nil {
		return nil, err
	}
	ids := idSet(req.form, "InstanceId")
	if ids != nil && limit > 0 {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter instancesSet cannot be used with the parameter maxResults")
	}
	all := req.form.Bool("IncludeAllInstances")
	// Filter names are checked up front: the loop below matches only the instances it reports.
	if err := checkFilterNames(req.form.Filters(), statusFields("")); err != nil {
		return nil, err
	}
	var out describeInstanceStatusResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		if miss := missing(ids, func(id string) bool { return visible(w, r.Instances[id]) }); len(miss) > 0 {
			return errInstanceNotFound(miss)
		}
		var matched []instanceStatusXML
		for _, id := range state.SortedKeys(r.Instances) {
			inst := r.Instances[id]
			if (ids != nil && !ids[id]) || !visible(w, inst) || (!all && inst.State != state.InstanceRunning) {
				continue
			}
			status := "initializing"
			switch {
			case inst.State != state.InstanceRunning:
				status = "not-applicable"
			case w.Now.Sub(inst.StateChangedAt) >= 2*time.Minute:
				status = "ok"
			}
			x := instanceStatusXML{InstanceID: inst.ID, AvailabilityZone: inst.Zone,
				InstanceState:  stateXML{Code: state.StateCode(inst.State), Name: inst.State},
				InstanceStatus: statusSummaryXML{Status: status}, SystemStatus: statusSummaryXML{Status: status}}
			f := statusFields(status)
			f["availability-zone"], f["instance-state-name"] = []string{inst.Zone}, []string{inst.State}
			f["instance-state-code"] = []string{strconv.Itoa(state.StateCode(inst.State))}
			ok, err := matchFilters(req.form.Filters(), f, nil)
			if err != nil {
				return err
			}
			if ok {
				matched = append(matched, x)
			}
		}
		shown, next, err := onePage(req, "DescribeInstanceStatus", limit, matched)
		if err != nil {
			return err
		}
		out = describeInstanceStatusResponse{XMLNS: ns, RequestID: req.call.RequestID, Statuses: shown, NextToken: next}
		return nil
	})
	return out, err
}

func (h *Handler) terminateInstances(req request) (any, error) {
	ids := req.form.List("InstanceId")
	if len(ids) == 0 {
		return nil, wire.MissingParameter("InstanceId")
	}
	var out terminateInstancesResponse
	err := h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		if miss := missing(idSet(req.form, "InstanceId"), func(id string) bool { return r.Instances[id] != nil }); len(miss) > 0 {
			return errInstanceNotFound(miss)
		}
		var reqs []policy.Request
		for _, id := range ids {
			reqs = append(reqs, policy.Request{Action: "ec2:TerminateInstances", Resource: arn(w, r.Name, "instance", id),
				Context: resourceContext(nil, r.Instances[id].Tags)})
		}
		if err := authorize(w, req, reqs...); err != nil {
			return err
		}
		out = terminateInstancesResponse{XMLNS: ns, RequestID: req.call.RequestID}
		for _, id := range ids {
			inst := r.Instances[id]
			prev := inst.Terminate(w.Now, "Client.UserInitiatedShutdown")
			if prev != inst.State {
				if err := w.Event(r, inst, state.EventStateChange); err != nil {
					return err
				}
			}
			out.Instances = append(out.Instances, stateChangeXML{InstanceID: id,
				CurrentState:  stateXML{Code: state.StateCode(inst.State), Name: inst.State},
				PreviousState: stateXML{Code: state.StateCode(prev), Name: prev}})
		}
		return nil
	})
	return out, err
}

// taggable returns the tags of the resource with the given id and its ARN kind.
func taggable(r *state.Region, id string) (tags state.Tags, kind string, ok bool) {
	switch {
	case strings.HasPrefix(id, "i-"):
		if x := r.Instances[id]; x != nil {
			return x.Tags, "instance", true
		}
	case strings.HasPrefix(id, "lt-"):
		if x := r.LaunchTemplates[id]; x != nil {
			return x.Tags, "launch-template", true
		}
	case strings.HasPrefix(id, "subnet-"):
		if x := r.Subnets[id]; x != nil {
			return x.Tags, "subnet", true
		}
	case strings.HasPrefix(id, "sg-"):
		if x := r.SecurityGroups[id]; x != nil {
			return x.Tags, "security-group", true
		}
	case strings.HasPrefix(id, "ami-"):
		if x := r.Images[id]; x != nil {
			return x.Tags, "image", true
		}
	}
	return nil, "", false
}

func (h *Handler) createTags(req request) (any, error) {
	ids := req.form.List("ResourceId")
	if len(ids) == 0 {
		return nil, wire.MissingParameter("ResourceId")
	}
	if len(req.form.Tags("Tag")) == 0 {
		return nil, wire.MissingParameter("Tag") // Tags is required (the API reference)
	}
	tags := tagsFrom(req.form.Tags("Tag"))
	var out createTagsResponse
	err := h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		var reqs []policy.Request
		for _, id := range ids {
			have, kind, ok := taggable(r, id)
			if !ok {
				if strings.HasPrefix(id, "i-") {
					return errInstanceNotFound([]string{id})
				}
				return wire.NewError(http.StatusBadRequest, "InvalidID", "The ID '%s' is not valid", id)
			}
			reqs = append(reqs, policy.Request{Action: "ec2:CreateTags", Resource: arn(w, r.Name, kind, id),
				Context: requestContext(resourceContext(nil, have), tags)})
		}
		if err := authorize(w, req, reqs...); err != nil {
			return err
		}
		for _, id := range ids {
			have, _, _ := taggable(r, id)
			for k, v := range tags {
				have[k] = v
			}
		}
		out = createTagsResponse{XMLNS: ns, RequestID: req.call.RequestID, Return: true}
		return nil
	})
	return out, err
}

func (h *Handler) getConsoleOutput(req request) (any, error) {
	id := req.form.String("InstanceId")
	if id == "" {
		return nil, wire.MissingParameter("InstanceId")
	}
	var out getConsoleOutputResponse
	err := h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		inst := r.Instances[id]
		if inst == nil {
			return errInstanceNotFound([]string{id})
		}
		if err := authorize(w, req, policy.Request{Action: "ec2:GetConsoleOutput", Resource: arn(w, r.Name, "instance", id),
			Context: resourceContext(nil, inst.Tags)}); err != nil {
			return err
		}
		out = getConsoleOutputResponse{XMLNS: ns, RequestID: req.call.RequestID, InstanceID: id, Timestamp: w.Now.UTC().Format(time.RFC3339)}
		if len(inst.Console) > 0 {
			out.Output = base64.StdEncoding.EncodeToString([]byte(strings.Join(inst.Console, "\n") + "\n"))
		}
		return nil
	})
	return out, err
}

// visible reports whether reads see the instance yet, under the injected consistency lag; it
// counts an instance the lag hides (w.Faults.Injected.Hidden), so it is called in an Update.
func visible(w *state.World, i *state.Instance) bool {
	if i == nil {
		return false
	}
	if w.Now.Sub(i.LaunchTime) < w.Faults.DescribeInstancesLag {
		w.Faults.Injected.Hidden++
		return false
	}
	return true
}

// statusFields are the DescribeInstanceStatus filters the API reference documents, for an
// instance whose status checks are status. The emulated instances have no scheduled events, so
// the event.* filters match none.
func statusFields(status string) fields {
	reachability := "passed"
	if status == "initializing" {
		reachability = "initializing"
	}
	return fields{"availability-zone": {""}, "instance-state-name": {""}, "instance-state-code": {""},
		"instance-status.status": {status}, "system-status.status": {status},
		"instance-status.reachability": {reachability}, "system-status.reachability": {reachability},
		"event.code": nil, "event.description": nil, "event.instance-event-id": nil, "event.not-after": nil, "event.not-before": nil}
}
