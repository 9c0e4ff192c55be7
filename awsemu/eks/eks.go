package eks

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
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

// route is one request: the operation it names and the path parameters.
type route struct {
	action                        string
	cluster, principal, policyARN string
}

// routes maps a method and path shape to the EKS action (its IAM name) it serves.
func routes() map[string]string {
	return map[string]string{
		"GET access-policies":                                                              "eks:ListAccessPolicies",
		"GET clusters/{name}":                                                              "eks:DescribeCluster",
		"POST clusters/{name}/update-config":                                               "eks:UpdateClusterConfig",
		"GET clusters/{name}/access-entries":                                               "eks:ListAccessEntries",
		"POST clusters/{name}/access-entries":                                              "eks:CreateAccessEntry",
		"GET clusters/{name}/access-entries/{principalArn}":                                "eks:DescribeAccessEntry",
		"POST clusters/{name}/access-entries/{principalArn}":                               "eks:UpdateAccessEntry",
		"DELETE clusters/{name}/access-entries/{principalArn}":                             "eks:DeleteAccessEntry",
		"GET clusters/{name}/access-entries/{principalArn}/access-policies":                "eks:ListAssociatedAccessPolicies",
		"POST clusters/{name}/access-entries/{principalArn}/access-policies":               "eks:AssociateAccessPolicy",
		"DELETE clusters/{name}/access-entries/{principalArn}/access-policies/{policyArn}": "eks:DisassociateAccessPolicy",
		"GET clusters/{name}/pod-identity-associations":                                    "eks:ListPodIdentityAssociations",
		"GET clusters/{name}/pod-identity-associations/{principalArn}":                     "eks:DescribePodIdentityAssociation",
	}
}

// Actions lists the EKS actions the handler serves, sorted, without the "eks:" prefix.
func Actions() []string {
	var out []string
	for _, a := range routes() {
		out = append(out, strings.TrimPrefix(a, "eks:"))
	}
	slices.Sort(out)
	return out
}

// routeOf maps a method and path to an EKS operation, as the REST-JSON protocol lays them out.
func routeOf(method string, parts []string) (route, bool) {
	var rt route
	if len(parts) == 1 {
		rt.action = routes()[method+" "+parts[0]]
		return rt, rt.action != ""
	}
	if len(parts) < 2 || parts[0] != "clusters" {
		return rt, false
	}
	unescape := func(s string) string {
		v, err := url.PathUnescape(s)
		if err != nil {
			return s
		}
		return v
	}
	rt.cluster = unescape(parts[1])
	if len(parts) >= 4 {
		rt.principal = unescape(parts[3])
	}
	if len(parts) >= 6 {
		rt.policyARN = unescape(parts[5])
	}
	shape := []string{"clusters", "{name}"}
	if len(parts) > 2 {
		shape = append(shape, parts[2])
	}
	if len(parts) > 3 {
		shape = append(shape, "{principalArn}")
	}
	if len(parts) > 4 {
		shape = append(shape, parts[4])
	}
	if len(parts) > 5 {
		shape = append(shape, "{policyArn}")
	}
	if len(parts) > 6 {
		return rt, false
	}
	rt.action = routes()[method+" "+strings.Join(shape, "/")]
	return rt, rt.action != ""
}

// call is one request being served.
type call struct {
	world   *state.World
	region  *state.Region
	cluster *state.Cluster
	route   route
	req     *http.Request
	p       authz.Principal
}

// Serve answers one EKS request from the caller in c.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, wc wire.Call) {
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	var out any
	err := h.state.Update(func(world *state.World) error {
		p, err := authz.Identify(world, wc)
		if err != nil {
			return wire.NewError(http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		}
		region, err := world.Region(wc.Region)
		if err != nil {
			return wire.NewError(http.StatusBadRequest, "InvalidParameterException", "%v", err)
		}
		rt, ok := routeOf(r.Method, parts)
		if !ok {
			return wire.NewError(http.StatusNotFound, "NotFoundException", "the emulator does not serve %s %s", r.Method, r.URL.Path)
		}
		c := &call{world: world, region: region, cluster: region.Clusters[rt.cluster], route: rt, req: r, p: p}
		out, err = c.serve()
		return err
	})
	if err != nil {
		writeError(w, wc.RequestID, err)
		return
	}
	body, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", wc.RequestID)
	_, _ = w.Write(body)
}

func (c *call) serve() (any, error) {
	if err := c.authorize(); err != nil {
		return nil, err
	}
	if c.route.action == "eks:ListAccessPolicies" {
		return c.listAccessPolicies()
	}
	if c.cluster == nil {
		return nil, wire.NewError(http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: %s.", c.route.cluster)
	}
	switch c.route.action {
	case "eks:DescribeCluster":
		return map[string]any{"cluster": c.describeCluster()}, nil
	case "eks:UpdateClusterConfig":
		return c.updateConfig()
	case "eks:ListPodIdentityAssociations", "eks:DescribePodIdentityAssociation":
		return c.podIdentity()
	}
	if m := c.cluster.AuthenticationMode; m == "CONFIG_MAP" {
		return nil, wire.NewError(http.StatusBadRequest, "InvalidRequestException",
			"The cluster's authentication mode must be set to one of [API, API_AND_CONFIG_MAP] to perform this operation.")
	}
	switch c.route.action {
	case "eks:ListAccessEntries":
		return c.list()
	case "eks:CreateAccessEntry":
		return c.create()
	}
	e := c.entry()
	if e == nil {
		return nil, wire.NewError(http.StatusNotFound, "ResourceNotFoundException",
			"The specified principalArn could not be found. You can view your available access entries with 'list-access-entries'.")
	}
	switch c.route.action {
	case "eks:DescribeAccessEntry":
		return map[string]any{"accessEntry": entryOf(c.cluster, e)}, nil
	case "eks:UpdateAccessEntry":
		return c.update(e)
	case "eks:DeleteAccessEntry":
		delete(c.cluster.AccessEntries, e.PrincipalARN)
		return map[string]any{}, nil
	case "eks:ListAssociatedAccessPolicies":
		return c.listAssociated(e)
	case "eks:AssociateAccessPolicy":
		return c.associate(e)
	default: // eks:DisassociateAccessPolicy
		return c.disassociate(e)
	}
}

// authorize checks the caller's IAM permission for the operation: on the cluster for the
// cluster-level operations, on the access entry for the others (the entry's ARN when it exists,
// else every entry of the cluster).
func (c *call) authorize() error {
	resource := "arn:aws:eks:" + c.region.Name + ":" + c.world.AccountID + ":cluster/" + c.route.cluster
	ctx := map[string][]string{}
	switch c.route.action {
	case "eks:ListAccessPolicies":
		resource = "*"
	case "eks:DescribeCluster", "eks:UpdateClusterConfig", "eks:ListAccessEntries", "eks:CreateAccessEntry", "eks:ListPodIdentityAssociations":
	case "eks:DescribePodIdentityAssociation":
		resource = c.podIdentityARN()
	default:
		resource = "arn:aws:eks:" + c.region.Name + ":" + c.world.AccountID + ":access-entry/" + c.route.cluster + "/*"
		if c.cluster != nil {
			if e := c.entry(); e != nil {
				resource = e.ARN
				ctx["eks:principalArn"] = []string{e.PrincipalARN}
				ctx["eks:accessEntryType"] = []string{e.Type}
			}
		}
	}
	if c.route.policyARN != "" {
		ctx["eks:policyArn"] = []string{c.route.policyARN}
	}
	err := authz.Authorize(c.world, c.p, authz.IAM, policy.Request{Action: c.route.action, Resource: resource, Context: ctx})
	if err != nil {
		return wire.NewError(http.StatusForbidden, "AccessDeniedException", "%s", wire.AsError(err).Message)
	}
	return nil
}

// entry finds the access entry of the route's principal. EKS keeps the principal's identity,
// not the spelling of its ARN, so an ARN with or without the role's path finds it.
func (c *call) entry() *state.AccessEntry {
	if e := c.cluster.AccessEntries[c.route.principal]; e != nil {
		return e
	}
	want := canonicalARN(c.route.principal)
	for _, p := range state.SortedKeys(c.cluster.AccessEntries) {
		if canonicalARN(p) == want {
			return c.cluster.AccessEntries[p]
		}
	}
	return nil
}

// canonicalARN removes the path of a role or user ARN.
func canonicalARN(arn string) string {
	for _, kind := range []string{":role/", ":user/"} {
		if prefix, name, ok := strings.Cut(arn, kind); ok {
			return prefix + kind + name[strings.LastIndex(name, "/")+1:]
		}
	}
	return arn
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
	groups := e.KubernetesGroups
	if groups == nil {
		groups = []string{}
	}
	modified := e.ModifiedAt
	if modified.IsZero() {
		modified = e.CreatedAt
	}
	return accessEntryJSON{AccessEntryARN: e.ARN, ClusterName: c.Name, PrincipalARN: e.PrincipalARN, KubernetesGroups: groups,
		Username: e.Username, Type: e.Type, CreatedAt: epoch(e.CreatedAt), ModifiedAt: epoch(modified), Tags: e.Tags}
}

// page reads maxResults and nextToken and returns the window of n items to answer.
func (c *call) page(scope string, n int) (start, end int, next string, err error) {
	q := c.req.URL.Query()
	limit := 100
	if s := q.Get("maxResults"); s != "" {
		f := wire.NewForm(url.Values{"m": {s}})
		v, err := f.Int("m", 100)
		if err != nil || v < 1 || v > 100 {
			return 0, 0, "", wire.NewError(http.StatusBadRequest, "InvalidParameterException", "maxResults must be between 1 and 100")
		}
		limit = v
	}
	start, end, next, err = wire.Page(scope, n, limit, q.Get("nextToken"))
	if err != nil {
		return 0, 0, "", wire.NewError(http.StatusBadRequest, "InvalidParameterException", "%s", wire.AsError(err).Message)
	}
	return start, end, next, nil
}

func (c *call) list() (any, error) {
	principals := state.SortedKeys(c.cluster.AccessEntries)
	start, end, next, err := c.page("ListAccessEntries", len(principals))
	if err != nil {
		return nil, err
	}
	out := map[string]any{"accessEntries": principals[start:end]}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}
