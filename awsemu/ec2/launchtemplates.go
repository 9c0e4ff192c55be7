package ec2

import (
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

var launchTemplateNamePattern = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)

func errLaunchTemplateNameNotFound() error {
	return wire.NewError(http.StatusBadRequest, "InvalidLaunchTemplateName.NotFoundException",
		"At least one of the launch templates specified in the request does not exist.")
}

func errLaunchTemplateIDNotFound(id string) error {
	return wire.NewError(http.StatusBadRequest, "InvalidLaunchTemplateId.NotFound",
		"The specified launch template, with template ID %s, does not exist.", id)
}

// requestContext adds aws:RequestTag/KEY and aws:TagKeys for tags a request applies.
func requestContext(ctx map[string][]string, tags state.Tags) map[string][]string {
	if ctx == nil {
		ctx = map[string][]string{}
	}
	for _, k := range state.SortedKeys(tags) {
		ctx["aws:RequestTag/"+k] = []string{tags[k]}
		ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], k)
	}
	return ctx
}

// resourceContext adds aws:ResourceTag/KEY for an existing resource's tags.
func resourceContext(ctx map[string][]string, tags state.Tags) map[string][]string {
	if ctx == nil {
		ctx = map[string][]string{}
	}
	for k, v := range tags {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
	return ctx
}

func specTags(specs []wire.TagSpecification, resourceType string) state.Tags {
	out := state.Tags{}
	for _, s := range specs {
		if s.ResourceType == resourceType {
			for _, t := range s.Tags {
				out[t.Key] = t.Value
			}
		}
	}
	return out
}

func (h *Handler) createLaunchTemplate(req request) (any, error) {
	f := req.form
	name := f.String("LaunchTemplateName")
	if name == "" {
		return nil, wire.MissingParameter("LaunchTemplateName")
	}
	if !launchTemplateNamePattern.MatchString(name) {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidLaunchTemplateName.MalformedException",
			"A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'")
	}
	data := launchTemplateData(f, "LaunchTemplateData.")
	tags := specTags(f.TagSpecifications("TagSpecification"), "launch-template")
	var out createLaunchTemplateResponse
	err := h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		reqs := []policy.Request{{Action: "ec2:CreateLaunchTemplate", Resource: arn(w, r.Name, "launch-template", "*"), Context: requestContext(nil, tags)}}
		// Tagging on creation needs ec2:CreateTags as well, with ec2:CreateAction naming the call.
		if len(tags) > 0 {
			reqs = append(reqs, policy.Request{Action: "ec2:CreateTags", Resource: arn(w, r.Name, "launch-template", "*"),
				Context: requestContext(map[string][]string{"ec2:CreateAction": {"CreateLaunchTemplate"}}, tags)})
		}
		if err := authorize(w, req, reqs...); err != nil {
			return err
		}
		if _, exists := r.LaunchTemplateByName(name); exists {
			return wire.NewError(http.StatusBadRequest, "InvalidLaunchTemplateName.AlreadyExistsException",
				"Launch template name already in use.")
		}
		p, err := authz.Identify(w, req.call)
		if err != nil {
			return err
		}
		lt := &state.LaunchTemplate{ID: w.NewID("lt"), Name: name, CreatedBy: p.ARN, CreatedAt: w.Now, Tags: tags, Data: data}
		r.LaunchTemplates[lt.ID] = lt
		out = createLaunchTemplateResponse{XMLNS: ns, RequestID: req.call.RequestID, LaunchTemplate: launchTemplateXMLOf(lt)}
		return nil
	})
	return out, err
}

// launchTemplateData decodes RequestLaunchTemplateData (and RunInstances' equivalent fields,
// which share names) under prefix.
func launchTemplateData(f wire.Form, prefix string) state.LaunchTemplateData {
	specs := f.TagSpecifications(prefix + "TagSpecification")
	d := state.LaunchTemplateData{
		ImageID: f.String(prefix + "ImageId"), InstanceType: f.String(prefix + "InstanceType"), UserData: f.String(prefix + "UserData"),
		InstanceProfileName: f.String(prefix + "IamInstanceProfile.Name"), InstanceProfileARN: f.String(prefix + "IamInstanceProfile.Arn"),
		SecurityGroupIDs:   f.List(prefix + "SecurityGroupId"),
		MetadataHTTPTokens: f.String(prefix + "MetadataOptions.HttpTokens"),
		InstanceTags:       specTags(specs, "instance"), VolumeTags: specTags(specs, "volume"),
		NetworkInterfaceTags: specTags(specs, "network-interface"), SpotRequestTags: specTags(specs, "spot-instances-request"),
	}
	d.MetadataHopLimit, _ = f.Int(prefix+"MetadataOptions.HttpPutResponseHopLimit", 1)
	for _, bd := range f.Indexed(prefix + "BlockDeviceMapping") {
		if n, _ := f.Int(bd+".Ebs.VolumeSize", 0); n > 0 {
			d.RootVolumeSizeGiB = n
		}
	}
	for _, ni := range f.Indexed(prefix + "NetworkInterface") {
		d.AssociatePublicAddress = d.AssociatePublicAddress || f.Bool(ni+".AssociatePublicIpAddress")
		d.SecurityGroupIDs = append(d.SecurityGroupIDs, f.List(ni+".SecurityGroupId")...)
	}
	return d
}

func launchTemplateXMLOf(lt *state.LaunchTemplate) launchTemplateXML {
	return launchTemplateXML{
		LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, CreateTime: lt.CreatedAt.UTC().Format(time.RFC3339),
		CreatedBy: lt.CreatedBy, DefaultVersionNumber: 1, LatestVersionNumber: 1, Tags: tagsXML(lt.Tags),
	}
}

func (h *Handler) describeLaunchTemplates(req request) (any, error) {
	limit, err := maxResults(req.form, 1, 200)
	if err != nil {
		return nil, err
	}
	var out describeLaunchTemplatesResponse
	err = h.state.Update(func(w *state.World) error {
		r, err := describedRegion(w, req)
		if err != nil {
			return err
		}
		ids, names := idSet(req.form, "LaunchTemplateId"), idSet(req.form, "LaunchTemplateName")
		if miss := missing(ids, func(id string) bool { return r.LaunchTemplates[id] != nil }); len(miss) > 0 {
			return errLaunchTemplateIDNotFound(miss[0])
		}
		if miss := missing(names, func(n string) bool { _, ok := r.LaunchTemplateByName(n); return ok }); len(miss) > 0 {
			return errLaunchTemplateNameNotFound()
		}
		var matched []launchTemplateXML
		for _, id := range state.SortedKeys(r.LaunchTemplates) {
			lt := r.LaunchTemplates[id]
			if (ids != nil && !ids[id]) || (names != nil && !names[lt.Name]) {
				continue
			}
			ok, err := matchFilters(req.form.Filters(), fields{
				"launch-template-name": {lt.Name}, "create-time": {lt.CreatedAt.UTC().Format(time.RFC3339)},
			}, lt.Tags)
			if err != nil {
				return err
			}
			if ok {
				matched = append(matched, launchTemplateXMLOf(lt))
			}
		}
		shown, next, err := onePage(req, "DescribeLaunchTemplates", limit, matched)
		if err != nil {
			return err
		}
		out = describeLaunchTemplatesResponse{XMLNS: ns, RequestID: req.call.RequestID, LaunchTemplates: shown, NextToken: next}
		return nil
	})
	return out, err
}

func (h *Handler) deleteLaunchTemplate(req request) (any, error) {
	id, name := req.form.String("LaunchTemplateId"), req.form.String("LaunchTemplateName")
	if id == "" && name == "" {
		return nil, wire.MissingParameter("LaunchTemplateId or LaunchTemplateName")
	}
	var out deleteLaunchTemplateResponse
	err := h.state.Update(func(w *state.World) error {
		r, err := region(w, req)
		if err != nil {
			return err
		}
		lt, err := findLaunchTemplate(r, id, name)
		if err != nil {
			return err
		}
		if err := authorize(w, req, policy.Request{Action: "ec2:DeleteLaunchTemplate", Resource: arn(w, r.Name, "launch-template", lt.ID),
			Context: resourceContext(nil, lt.Tags)}); err != nil {
			return err
		}
		delete(r.LaunchTemplates, lt.ID)
		out = deleteLaunchTemplateResponse{XMLNS: ns, RequestID: req.call.RequestID, LaunchTemplate: launchTemplateXMLOf(lt)}
		return nil
	})
	return out, err
}

// findLaunchTemplate resolves a launch template by id or name with EC2's errors.
func findLaunchTemplate(r *state.Region, id, name string) (*state.LaunchTemplate, error) {
	if id != "" {
		lt, ok := r.LaunchTemplates[id]
		if !ok {
			return nil, errLaunchTemplateIDNotFound(id)
		}
		return lt, nil
	}
	lt, ok := r.LaunchTemplateByName(name)
	if !ok {
		return nil, errLaunchTemplateNameNotFound()
	}
	return lt, nil
}

// checkVersion accepts the versions the emulator keeps: "", "1", "$Latest", "$Default".
func checkVersion(v string) error {
	switch strings.TrimSpace(v) {
	case "", "1", "$Latest", "$Default":
		return nil
	}
	return wire.NewError(http.StatusBadRequest, "InvalidLaunchTemplateId.VersionNotFound",
		"Could not find launch template version %s.", v)
}
