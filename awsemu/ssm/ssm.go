package ssm

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// Handler serves SSM parameters over a State.
type Handler struct {
	state *state.State
}

// New returns the SSM handler over st.
func New(st *state.State) *Handler { return &Handler{state: st} }

// Parameter is one SSM parameter as GetParameter returns it.
type Parameter struct {
	Name             string  `json:"Name"`
	Type             string  `json:"Type"`
	Value            string  `json:"Value"`
	Version          int64   `json:"Version"`
	LastModifiedDate float64 `json:"LastModifiedDate"`
	ARN              string  `json:"ARN"`
	DataType         string  `json:"DataType"`
}

type getParameterInput struct {
	Name string `json:"Name"`
}

type getParametersInput struct {
	Names []string `json:"Names"`
}

type getParameterOutput struct {
	Parameter Parameter `json:"Parameter"`
}

type getParametersOutput struct {
	Parameters        []Parameter `json:"Parameters"`
	InvalidParameters []string    `json:"InvalidParameters"`
}

// operation serves one action: it decodes the request body itself and answers from params, the
// region's public parameters, on behalf of p.
type operation func(world *state.World, p authz.Principal, region string, params map[string]Parameter, r *http.Request) (any, error)

func operations() map[string]operation {
	return map[string]operation{
		"GetParameter":  getParameter,
		"GetParameters": getParameters,
	}
}

// Actions lists the SSM actions the handler serves, sorted.
func Actions() []string { return slices.Sorted(maps.Keys(operations())) }

// Serve answers one SSM request from the caller in call.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	var out any
	err := h.state.Update(func(world *state.World) error {
		p, err := authz.Identify(world, call)
		if err != nil {
			return wire.NewError(http.StatusBadRequest, "UnrecognizedClientException", "The security token included in the request is invalid.")
		}
		op, ok := operations()[wire.Target(r)]
		if !ok {
			return wire.NewError(http.StatusBadRequest, "UnknownOperationException", "The emulator does not serve SSM %s", wire.Target(r))
		}
		out, err = op(world, p, call.Region, Parameters(world, call.Region), r)
		return err
	})
	if err != nil {
		wire.WriteJSONError(w, call.RequestID, err)
		return
	}
	wire.WriteJSON(w, call.RequestID, out)
}

// validation is the JSON services' ValidationException for a member outside its constraint.
func validation(format string, args ...any) error {
	return wire.NewError(http.StatusBadRequest, "ValidationException", "1 validation error detected: "+format, args...)
}

// checkName refuses a parameter name outside the API reference's Length Constraints (1 to 2048).
func checkName(name, at string) error {
	switch {
	case name == "":
		return validation("Value null at '%s' failed to satisfy constraint: Member must not be null", at)
	case len(name) > 2048:
		return validation("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to 2048", name, at)
	}
	return nil
}

func getParameter(world *state.World, p authz.Principal, region string, params map[string]Parameter, r *http.Request) (any, error) {
	var in getParameterInput
	if err := wire.DecodeJSON(r, &in); err != nil {
		return nil, err
	}
	if err := checkName(in.Name, "name"); err != nil {
		return nil, err
	}
	if err := authorize(world, p, "ssm:GetParameter", region, in.Name); err != nil {
		return nil, err
	}
	param, ok := params[in.Name]
	if !ok {
		return nil, wire.NewError(http.StatusBadRequest, "ParameterNotFound", "Parameter %s not found.", in.Name)
	}
	return getParameterOutput{Parameter: param}, nil
}

// getParameters answers up to 10 names (the API reference's limit on Names) at once; those not
// found are listed as InvalidParameters.
func getParameters(world *state.World, p authz.Principal, region string, params map[string]Parameter, r *http.Request) (any, error) {
	var in getParametersInput
	if err := wire.DecodeJSON(r, &in); err != nil {
		return nil, err
	}
	switch {
	case in.Names == nil:
		return nil, validation("Value null at 'names' failed to satisfy constraint: Member must not be null")
	case len(in.Names) < 1:
		return nil, validation("Value '[]' at 'names' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(in.Names) > 10:
		return nil, validation("Value '[%s]' at 'names' failed to satisfy constraint: Member must have length less than or equal to 10", strings.Join(in.Names, ", "))
	}
	res := getParametersOutput{Parameters: []Parameter{}, InvalidParameters: []string{}}
	for _, n := range in.Names {
		if err := checkName(n, "names.member"); err != nil {
			return nil, err
		}
		if err := authorize(world, p, "ssm:GetParameters", region, n); err != nil {
			return nil, err
		}
		if param, ok := params[n]; ok {
			res.Parameters = append(res.Parameters, param)
		} else {
			res.InvalidParameters = append(res.InvalidParameters, n)
		}
	}
	return res, nil
}

// authorize checks action (the operation's own: ssm:GetParameters for GetParameters) on the
// parameter's ARN.
func authorize(w *state.World, p authz.Principal, action, region, name string) error {
	err := authz.Authorize(w, p, authz.IAM, policy.Request{Action: action, Resource: arn(region, name)})
	if err != nil {
		e := wire.AsError(err)
		return wire.NewError(http.StatusBadRequest, "AccessDeniedException", "%s", e.Message)
	}
	return nil
}

// arn is a public parameter's ARN as IAM evaluates it: no account (AWS publishes it), the
// resource type "parameter" and the name without its leading slash after it.
func arn(region, name string) string {
	return fmt.Sprintf("arn:aws:ssm:%s::parameter/%s", region, strings.TrimPrefix(name, "/"))
}

// Parameters returns the public AMI parameters of a region by name.
func Parameters(w *state.World, region string) map[string]Parameter {
	r, ok := w.Regions[region]
	if !ok {
		return nil
	}
	out := map[string]Parameter{}
	newest := map[string]*state.Image{} // alias path → newest image
	for _, id := range state.SortedKeys(r.Images) {
		img := r.Images[id]
		if img.OwnerID != state.EKSAMIOwner {
			continue // an account's own image, not one AWS publishes
		}
		base, release, ok := paths(img)
		if !ok {
			continue
		}
		put(out, region, release, img)
		if cur := newest[base]; cur == nil || img.CreationDate.After(cur.CreationDate) {
			newest[base] = img
		}
	}
	for alias, img := range newest {
		put(out, region, alias, img)
	}
	return out
}

func put(out map[string]Parameter, region, name string, img *state.Image) {
	out[name] = Parameter{
		Name: name, Type: "String", Value: img.ID, Version: 1, LastModifiedDate: float64(img.CreationDate.Unix()),
		ARN: arn(region, name), DataType: "aws:ec2:image",
	}
}

// paths returns the alias Parameter (recommended/latest) of the image's line and the Parameter
// of its own release, as AWS publishes them.
func paths(img *state.Image) (alias, release string, ok bool) {
	v, stamp := img.KubernetesVersion, img.Name[strings.LastIndex(img.Name, "-")+1:]
	arm := img.Architecture == "arm64"
	switch img.Family {
	case state.FamilyAL2023:
		arch := "x86_64"
		if arm {
			arch = "arm64"
		}
		dir := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s", v, arch, img.Variant)
		return dir + "/recommended/image_id", dir + "/" + img.Name + "/image_id", true
	case state.FamilyAL2:
		line := "amazon-linux-2"
		switch {
		case arm:
			line += "-arm64"
		case img.Variant == "nvidia":
			line += "-gpu"
		}
		dir := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/%s", v, line)
		return dir + "/recommended/image_id", dir + "/" + img.Name + "/image_id", true
	case state.FamilyBottlerocket:
		arch := "x86_64"
		if arm {
			arch = "arm64"
		}
		dir := fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/%s", v, arch)
		return dir + "/latest/image_id", dir + "/" + strings.TrimPrefix(stamp, "v") + "/image_id", true
	}
	return "", "", false
}
