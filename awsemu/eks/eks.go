package eks

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// Handler serves the EKS API over a State.
type Handler struct {
	state *state.State
}

// New returns the EKS handler over st.
func New(st *state.State) *Handler { return &Handler{state: st} }

type accessEntryJSON struct {
	AccessEntryARN   string            `json:"accessEntryArn"`
	ClusterName      string            `json:"clusterName"`
	PrincipalARN     string            `json:"principalArn"`
	KubernetesGroups []string          `json:"kubernetesGroups"`
	Username         string            `json:"username"`
	Type             string            `json:"type"`
	CreatedAt        float64           `json:"createdAt"`
	ModifiedAt       float64           `json:"modifiedAt"`
	Tags             map[string]string `json:"tags"`
}

type clusterJSON struct {
	Name                 string  `json:"name"`
	ARN                  string  `json:"arn"`
	Version              string  `json:"version"`
	Endpoint             string  `json:"endpoint"`
	Status               string  `json:"status"`
	RoleARN              string  `json:"roleArn"`
	CreatedAt            float64 `json:"createdAt"`
	PlatformVersion      string  `json:"platformVersion"`
	CertificateAuthority struct {
		Data string `json:"data"`
	} `json:"certificateAuthority"`
	KubernetesNetworkConfig struct {
		ServiceIPv4CIDR string `json:"serviceIpv4Cidr"`
		IPFamily        string `json:"ipFamily"`
	} `json:"kubernetesNetworkConfig"`
	AccessConfig struct {
		AuthenticationMode string `json:"authenticationMode"`
	} `json:"accessConfig"`
}

type createAccessEntryInput struct {
	PrincipalARN     string            `json:"principalArn"`
	KubernetesGroups []string          `json:"kubernetesGroups"`
	Username         string            `json:"username"`
	Type             string            `json:"type"`
	Tags             map[string]string `json:"tags"`
}

// Serve answers one EKS request from the caller in call.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	var out any
	err := h.state.Update(func(world *state.World) error {
		p, err := authz.Identify(world, call.AccessKey)
		if err != nil {
			return wire.NewError(http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		}
		region, err := world.Region(call.Region)
		if err != nil {
			return wire.NewError(http.StatusBadRequest, "InvalidParameterException", "%v", err)
		}
		if len(parts) < 2 || parts[0] != "clusters" {
			return wire.NewError(http.StatusNotFound, "NotFoundException", "no EKS resource at %s", r.URL.Path)
		}
		name, _ := url.PathUnescape(parts[1])
		c := region.Clusters[name]
		route := r.Method + " " + strings.Join(append([]string{"clusters", "{name}"}, parts[2:min(len(parts), 3)]...), "/")
		if len(parts) == 4 {
			route += "/{principalArn}"
		}
		action := map[string]string{
			"GET clusters/{name}": "eks:DescribeCluster", "GET clusters/{name}/access-entries": "eks:ListAccessEntries",
			"POST clusters/{name}/access-entries": "eks:CreateAccessEntry", "GET clusters/{name}/access-entries/{principalArn}": "eks:DescribeAccessEntry",
		}[route]
		if action == "" {
			return wire.NewError(http.StatusNotFound, "NotFoundException", "the emulator does not serve %s", route)
		}
		resource := "arn:aws:eks:" + region.Name + ":" + world.AccountID + ":cluster/" + name
		if err := authz.Authorize(world, p, authz.IAM, policy.Request{Action: action, Resource: resource}); err != nil {
			return wire.NewError(http.StatusForbidden, "AccessDeniedException", "%s", wire.AsError(err).Message)
		}
		if c == nil {
			return wire.NewError(http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: %s.", name)
		}
		switch action {
		case "eks:DescribeCluster":
			out = map[string]any{"cluster": clusterOf(c)}
		case "eks:ListAccessEntries":
			out, err = list(r, c)
		case "eks:CreateAccessEntry":
			out, err = create(world, region, c, r)
		case "eks:DescribeAccessEntry":
			principal, _ := url.PathUnescape(parts[3])
			e := c.AccessEntries[principal]
			if e == nil {
				return wire.NewError(http.StatusNotFound, "ResourceNotFoundException", "The specified principalArn could not be found. You can view your available access entries with 'list-access-entries'.")
			}
			out = map[string]any{"accessEntry": entryOf(c, e)}
		}
		return err
	})
	if err != nil {
		writeError(w, call.RequestID, err)
		return
	}
	body, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", call.RequestID)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, requestID string, err error) {
	e := wire.AsError(err)
	body, _ := json.Marshal(map[string]string{"__type": e.Code, "message": e.Message})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", requestID)
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func clusterOf(c *state.Cluster) clusterJSON {
	out := clusterJSON{Name: c.Name, ARN: c.ARN, Version: c.Version, Endpoint: c.Endpoint, Status: "ACTIVE", RoleARN: c.RoleARN,
		CreatedAt: epoch(c.CreatedAt), PlatformVersion: "eks.1"}
	out.CertificateAuthority.Data = c.CertificateData
	out.KubernetesNetworkConfig.ServiceIPv4CIDR, out.KubernetesNetworkConfig.IPFamily = c.ServiceIPv4CIDR, "ipv4"
	out.AccessConfig.AuthenticationMode = c.AuthenticationMode
	return out
}

func entryOf(c *state.Cluster, e *state.AccessEntry) accessEntryJSON {
	return accessEntryJSON{AccessEntryARN: e.ARN, ClusterName: c.Name, PrincipalARN: e.PrincipalARN, KubernetesGroups: e.KubernetesGroups,
		Username: e.Username, Type: e.Type, CreatedAt: epoch(e.CreatedAt), ModifiedAt: epoch(e.CreatedAt), Tags: e.Tags}
}

func list(r *http.Request, c *state.Cluster) (any, error) {
	q := r.URL.Query()
	limit := 100
	if s := q.Get("maxResults"); s != "" {
		f := wire.NewForm(url.Values{"m": {s}})
		n, err := f.Int("m", 100)
		if err != nil || n < 1 || n > 100 {
			return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterException", "maxResults must be between 1 and 100")
		}
		limit = n
	}
	principals := state.SortedKeys(c.AccessEntries)
	start, end, next, err := wire.Page("ListAccessEntries", len(principals), limit, q.Get("nextToken"))
	if err != nil {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterException", "%s", wire.AsError(err).Message)
	}
	out := map[string]any{"accessEntries": principals[start:end]}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

func create(w *state.World, region *state.Region, c *state.Cluster, r *http.Request) (any, error) {
	var in createAccessEntryInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterException", "%v", err)
	}
	if in.Type == "" {
		in.Type = state.AccessEntryStandard
	}
	switch in.Type {
	case state.AccessEntryStandard:
	case state.AccessEntryEC2Linux, "EC2_WINDOWS", "FARGATE_LINUX":
		if len(in.KubernetesGroups) > 0 || in.Username != "" {
			return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterException",
				"The kubernetesGroups and username prop cannot be specified for access entry with type %s.", in.Type)
		}
	default:
		return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterException", "The type %s is not valid.", in.Type)
	}
	if !strings.HasPrefix(in.PrincipalARN, "arn:aws:iam::") {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidParameterException", "The principalArn parameter format is not valid")
	}
	if c.AccessEntries[in.PrincipalARN] != nil {
		return nil, wire.NewError(http.StatusConflict, "ResourceInUseException", "The specified access entry resource is already in use on this cluster.")
	}
	e := w.PutAccessEntry(region, c, in.PrincipalARN, in.Type)
	if in.Type == state.AccessEntryStandard {
		e.KubernetesGroups = in.KubernetesGroups
		if in.Username != "" {
			e.Username = in.Username
		}
	}
	for k, v := range in.Tags {
		e.Tags[k] = v
	}
	return map[string]any{"accessEntry": entryOf(c, e)}, nil
}
