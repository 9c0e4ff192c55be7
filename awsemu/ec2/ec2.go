package ec2

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

const ns = wire.EC2Namespace

// Handler serves the EC2 query API over a State.
type Handler struct {
	state *state.State
}

// New returns the EC2 handler over st.
func New(st *state.State) *Handler { return &Handler{state: st} }

// request is one decoded call: who, where, and the form.
type request struct {
	call wire.Call
	form wire.Form
}

type operation func(h *Handler, req request) (any, error)

func operations() map[string]operation {
	return map[string]operation{
		"DescribeInstanceTypes":         (*Handler).describeInstanceTypes,
		"DescribeInstanceTypeOfferings": (*Handler).describeInstanceTypeOfferings,
		"DescribeAvailabilityZones":     (*Handler).describeAvailabilityZones,
		"DescribeSpotPriceHistory":      (*Handler).describeSpotPriceHistory,
		"DescribeSubnets":               (*Handler).describeSubnets,
		"DescribeSecurityGroups":        (*Handler).describeSecurityGroups,
		"DescribeVpcs":                  (*Handler).describeVpcs,
		"DescribeImages":                (*Handler).describeImages,
		"DeregisterImage":               (*Handler).deregisterImage,
		"CreateLaunchTemplate":          (*Handler).createLaunchTemplate,
		"DescribeLaunchTemplates":       (*Handler).describeLaunchTemplates,
		"DeleteLaunchTemplate":          (*Handler).deleteLaunchTemplate,
		"CreateFleet":                   (*Handler).createFleet,
		"RunInstances":                  (*Handler).runInstances,
		"DescribeInstances":             (*Handler).describeInstances,
		"DescribeInstanceStatus":        (*Handler).describeInstanceStatus,
		"TerminateInstances":            (*Handler).terminateInstances,
		"CreateTags":                    (*Handler).createTags,
		"GetConsoleOutput":              (*Handler).getConsoleOutput,
		"DescribeCapacityReservations":  (*Handler).describeCapacityReservations,
	}
}

// Serve answers one EC2 request from the caller in call.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	form, err := wire.ParseForm(r)
	if err != nil {
		wire.WriteEC2Error(w, call.RequestID, wire.NewError(http.StatusBadRequest, "MalformedQueryString", "%v", err))
		return
	}
	action := form.String("Action")
	op, ok := operations()[action]
	if !ok {
		wire.WriteEC2Error(w, call.RequestID, wire.NewError(http.StatusBadRequest, "InvalidAction",
			"The action %s is not valid for this web service.", action))
		return
	}
	resp, err := op(h, request{call: call, form: form})
	if err != nil {
		wire.WriteEC2Error(w, call.RequestID, err)
		return
	}
	_ = h.state.Update(func(w *state.World) error {
		w.Calls[action]++
		return nil
	})
	wire.WriteXML(w, resp)
}

// authorize identifies the caller and checks reqs. With dryRun it returns DryRunOperation when
// allowed, so callers return whatever authorize returns before doing anything.
func authorize(w *state.World, req request, reqs ...policy.Request) error {
	p, err := authz.Identify(w, req.call)
	if err != nil {
		return err
	}
	if err := authz.Authorize(w, p, authz.EC2, reqs...); err != nil {
		return err
	}
	if req.form.Bool("DryRun") {
		return wire.DryRunOperation()
	}
	return nil
}

// describe authorizes a read-only action that has no resource-level permissions.
func describe(w *state.World, req request) error {
	return authorize(w, req, policy.Request{Action: "ec2:" + req.form.String("Action"), Resource: "*"})
}

// arn builds an EC2 resource ARN; images are account-less.
func arn(w *state.World, region, kind, id string) string {
	if kind == "image" {
		return fmt.Sprintf("arn:aws:ec2:%s::image/%s", region, id)
	}
	return fmt.Sprintf("arn:aws:ec2:%s:%s:%s/%s", region, w.AccountID, kind, id)
}

// describedRegion authorizes a Describe* call (as describe does) and then returns the region it
// is for (as region does): an unauthorized caller is refused before the region is looked at.
func describedRegion(w *state.World, req request) (*state.Region, error) {
	if err := describe(w, req); err != nil {
		return nil, err
	}
	return region(w, req)
}

// onePage is the page of items, at most limit of them, that the request's NextToken starts, and
// the token of the next page ("" on the last); op (the action) binds tokens to the call that
// issued them, so another call refuses them.
func onePage[X any](req request, op string, limit int, items []X) ([]X, string, error) {
	start, end, next, err := wire.Page(op, len(items), limit, req.form.String("NextToken"))
	if err != nil {
		return nil, "", err
	}
	return items[start:end], next, nil
}

func region(w *state.World, req request) (*state.Region, error) {
	r, ok := w.Regions[req.call.Region]
	if !ok {
		return nil, wire.NewError(http.StatusUnauthorized, "AuthFailure", "region %q is not emulated", req.call.Region)
	}
	return r, nil
}

func tagsXML(t state.Tags) []tagXML {
	out := make([]tagXML, 0, len(t))
	for _, k := range state.SortedKeys(t) {
		out = append(out, tagXML{Key: k, Value: t[k]})
	}
	return out
}

// tagFilter matches the `tag:KEY`, `tag-key` and `tag-value` filters against tags. ok is false
// when the filter is not a tag filter.
func tagFilter(f wire.Filter, t state.Tags) (match, ok bool) {
	switch {
	case strings.HasPrefix(f.Name, "tag:"):
		v, has := t[strings.TrimPrefix(f.Name, "tag:")]
		return has && f.Match([]string{v}), true
	case f.Name == "tag-key":
		return f.Match(state.SortedKeys(t)), true
	case f.Name == "tag-value":
		vals := make([]string, 0, len(t))
		for _, v := range t {
			vals = append(vals, v)
		}
		return f.Match(vals), true
	}
	return false, false
}

// fields maps a filter name to the resource's values for it.
type fields map[string][]string

// matchFilters reports whether a resource with the given field values and tags passes every
// filter. An unknown filter name is EC2's InvalidParameterValue.
func matchFilters(filters []wire.Filter, f fields, t state.Tags) (bool, error) {
	for _, flt := range filters {
		if m, ok := tagFilter(flt, t); ok {
			if !m {
				return false, nil
			}
			continue
		}
		have, known := f[flt.Name]
		if !known {
			return false, wire.InvalidParameterValue(fmt.Sprintf("The filter '%s' is invalid", flt.Name))
		}
		if !flt.Match(have) {
			return false, nil
		}
	}
	return true, nil
}

// Actions lists the EC2 actions the handler serves, sorted.
func Actions() []string { return slices.Sorted(maps.Keys(operations())) }

// maxResults reads MaxResults within the range the EC2 API reference gives the operation
// (Valid Range, lo to hi); absent, it is 0.
func maxResults(form wire.Form, lo, hi int) (int, error) {
	n, err := form.Int("MaxResults", 0)
	if err != nil {
		return 0, err
	}
	if form.Has("MaxResults") && (n < lo || n > hi) {
		return 0, wire.InvalidParameterValue(fmt.Sprintf("Value ( %d ) for parameter maxResults is invalid. Parameter must be between %d and %d.", n, lo, hi))
	}
	return n, nil
}

// pageSize reads MaxResults of an operation for which the EC2 API reference states no range
// (DescribeSpotPriceHistory, DescribeImages): any value is accepted and a page holds at most that
// many items; absent or below 1, it is 0.
func pageSize(form wire.Form) (int, error) {
	n, err := form.Int("MaxResults", 0)
	if err != nil {
		return 0, err
	}
	return max(n, 0), nil
}

// idSet returns the ids requested in the list at key, or nil for all.
func idSet(form wire.Form, key string) map[string]bool {
	ids := form.List(key)
	if len(ids) == 0 {
		return nil
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// missing returns the requested ids not found, sorted, for NotFound errors.
func missing(want map[string]bool, found func(string) bool) []string {
	var out []string
	for id := range want {
		if !found(id) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func tagsFrom(tags []wire.Tag) state.Tags {
	out := state.Tags{}
	for _, t := range tags {
		out[t.Key] = t.Value
	}
	return out
}
