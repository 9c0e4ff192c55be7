package eks

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// Access scopes of an associated access policy.
const (
	scopeCluster   = "cluster"
	scopeNamespace = "namespace"
)

// accessPolicyARNPrefix starts the ARN of every EKS access policy.
const accessPolicyARNPrefix = "arn:aws:eks::aws:cluster-access-policy/"

// accessPolicies are the EKS access policies the emulator knows (ListAccessPolicies' names).
var accessPolicies = []string{
	"AmazonEKSAdminPolicy", "AmazonEKSAdminViewPolicy", "AmazonEKSAutoNodePolicy", "AmazonEKSClusterAdminPolicy",
	"AmazonEKSEditPolicy", "AmazonEKSViewPolicy",
}

// reservedPrefixes are the prefixes no STANDARD entry's username may start with.
var reservedPrefixes = []string{"system:", "eks:", "aws:", "amazon:", "iam:"}

type createAccessEntryInput struct {
	PrincipalARN     string            `json:"principalArn"`
	KubernetesGroups []string          `json:"kubernetesGroups"`
	Username         string            `json:"username"`
	Type             string            `json:"type"`
	Tags             map[string]string `json:"tags"`
}

type updateAccessEntryInput struct {
	KubernetesGroups []string `json:"kubernetesGroups"`
	Username         *string  `json:"username"`
	// Type is not a member of UpdateAccessEntry: it is read only to refuse it.
	Type *string `json:"type"`
}

type accessScopeJSON struct {
	Type       string   `json:"type"`
	Namespaces []string `json:"namespaces"`
}

type associateInput struct {
	PolicyARN   string          `json:"policyArn"`
	AccessScope accessScopeJSON `json:"accessScope"`
}

type associatedJSON struct {
	PolicyARN    string          `json:"policyArn"`
	AccessScope  accessScopeJSON `json:"accessScope"`
	AssociatedAt float64         `json:"associatedAt"`
	ModifiedAt   float64         `json:"modifiedAt"`
}

func invalid(format string, args ...any) error {
	return wire.NewError(http.StatusBadRequest, "InvalidParameterException", format, args...)
}

func (c *call) decode(v any) error {
	if err := json.NewDecoder(c.req.Body).Decode(v); err != nil {
		return invalid("The request body is not valid JSON: %v", err)
	}
	return nil
}

// isNodeType reports whether entries of the type are for nodes: EKS sets their username and
// groups, and their principal must be a role of the cluster's account.
func isNodeType(typ string) bool {
	switch typ {
	case state.AccessEntryEC2Linux, state.AccessEntryEC2Windows, state.AccessEntryFargateLinux, state.AccessEntryHybridLinux:
		return true
	}
	return false
}

// checkIdentity checks the username and groups a STANDARD entry is given.
func checkIdentity(username string, groups []string) error {
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(username, p) {
			return invalid("The username must not begin with %s", p)
		}
	}
	for _, g := range groups {
		if strings.HasPrefix(g, "system:") {
			return invalid("The kubernetes group name %s is invalid, it cannot start with system:", g)
		}
		if g == "" {
			return invalid("The kubernetes group name must not be empty.")
		}
	}
	return nil
}

// checkPrincipal checks a principal ARN as EKS does on creation: an IAM role or user; for node
// types a role of the cluster's own account; and a role or user of this account must exist
// (with the path it is given, if it is given one).
func (c *call) checkPrincipal(arn, typ string) error {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "iam" || parts[4] == "" ||
		(!strings.HasPrefix(parts[5], "role/") && !strings.HasPrefix(parts[5], "user/")) {
		return invalid("The principalArn parameter format is not valid")
	}
	account, resource := parts[4], parts[5]
	if isNodeType(typ) && (!strings.HasPrefix(resource, "role/") || account != c.world.AccountID) {
		return invalid("The principalArn %s is not valid for type %s: it must be an IAM role of account %s.", arn, typ, c.world.AccountID)
	}
	if account != c.world.AccountID {
		return nil
	}
	name := resource[strings.LastIndex(resource, "/")+1:]
	existing := ""
	if strings.HasPrefix(resource, "role/") {
		if role := c.world.IAM.Roles[name]; role != nil {
			existing = role.ARN
		}
	} else if user := c.world.IAM.Users[name]; user != nil {
		existing = user.ARN
	}
	if existing == "" || (strings.Count(resource, "/") > 1 && existing != arn) {
		return invalid("The specified principalArn is invalid: invalid principal %s.", arn)
	}
	return nil
}

func (c *call) create() (any, error) {
	var in createAccessEntryInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.PrincipalARN == "" {
		return nil, invalid("principalArn is required.")
	}
	if in.Type == "" {
		in.Type = state.AccessEntryStandard
	}
	switch {
	case in.Type == state.AccessEntryStandard:
		if err := checkIdentity(in.Username, in.KubernetesGroups); err != nil {
			return nil, err
		}
	case isNodeType(in.Type):
		if len(in.KubernetesGroups) > 0 || in.Username != "" {
			return nil, invalid("The kubernetesGroups and username prop cannot be specified for access entry with type %s.", in.Type)
		}
	default:
		return nil, invalid("The type %s is not valid. Valid types are %s.", in.Type,
			strings.Join([]string{state.AccessEntryStandard, state.AccessEntryEC2Linux, state.AccessEntryEC2Windows, state.AccessEntryFargateLinux, state.AccessEntryHybridLinux}, ", "))
	}
	if err := c.checkPrincipal(in.PrincipalARN, in.Type); err != nil {
		return nil, err
	}
	c.route.principal = in.PrincipalARN
	if c.entry() != nil {
		return nil, wire.NewError(http.StatusConflict, "ResourceInUseException", "The specified access entry resource is already in use on this cluster.")
	}
	e := c.world.PutAccessEntry(c.region, c.cluster, in.PrincipalARN, in.Type)
	if in.Type == state.AccessEntryStandard {
		e.KubernetesGroups = in.KubernetesGroups
		if in.Username != "" {
			e.Username = in.Username
		}
	}
	for k, v := range in.Tags {
		e.Tags[k] = v
	}
	return map[string]any{"accessEntry": entryOf(c.cluster, e)}, nil
}

// update changes a STANDARD entry's username and groups: the ones given replace the entry's.
// The type of an entry cannot change: delete it and create it again.
func (c *call) update(e *state.AccessEntry) (any, error) {
	var in updateAccessEntryInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.Type != nil && *in.Type != e.Type {
		return nil, invalid("The type of an access entry cannot be changed (it is %s). Delete the access entry and create it again with type %s.", e.Type, *in.Type)
	}
	if e.Type != state.AccessEntryStandard {
		if in.KubernetesGroups != nil || in.Username != nil {
			return nil, invalid("The kubernetesGroups and username prop cannot be specified for access entry with type %s.", e.Type)
		}
		return map[string]any{"accessEntry": entryOf(c.cluster, e)}, nil
	}
	username := e.Username
	if in.Username != nil {
		username = *in.Username
	}
	groups := e.KubernetesGroups
	if in.KubernetesGroups != nil {
		groups = in.KubernetesGroups
	}
	if err := checkIdentity(username, groups); err != nil {
		return nil, err
	}
	if username == "" {
		username, _ = state.DefaultAccessEntryIdentity(e.PrincipalARN, e.Type)
	}
	e.Username, e.KubernetesGroups, e.ModifiedAt = username, groups, c.world.Now
	return map[string]any{"accessEntry": entryOf(c.cluster, e)}, nil
}

func associatedOf(a state.AccessPolicyAssociation) associatedJSON {
	ns := a.Namespaces
	if ns == nil {
		ns = []string{}
	}
	modified := a.ModifiedAt
	if modified.IsZero() {
		modified = a.AssociatedAt
	}
	return associatedJSON{PolicyARN: a.PolicyARN, AccessScope: accessScopeJSON{Type: a.ScopeType, Namespaces: ns},
		AssociatedAt: epoch(a.AssociatedAt), ModifiedAt: epoch(modified)}
}

// associate associates an access policy with a STANDARD entry, or changes the scope of one
// already associated.
func (c *call) associate(e *state.AccessEntry) (any, error) {
	var in associateInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, ok := strings.CutPrefix(in.PolicyARN, accessPolicyARNPrefix)
	if !ok || !slices.Contains(accessPolicies, name) {
		return nil, invalid("The policyArn %s is not valid. Access policies are arn:aws:eks::aws:cluster-access-policy/NAME, NAME one of %s.",
			in.PolicyARN, strings.Join(accessPolicies, ", "))
	}
	switch in.AccessScope.Type {
	case scopeCluster:
		if len(in.AccessScope.Namespaces) > 0 {
			return nil, invalid("Namespaces cannot be specified for an access scope of type cluster.")
		}
	case scopeNamespace:
		if len(in.AccessScope.Namespaces) == 0 {
			return nil, invalid("At least one namespace must be specified for an access scope of type namespace.")
		}
	default:
		return nil, invalid("The accessScope type %q is not valid. Valid types are cluster, namespace.", in.AccessScope.Type)
	}
	if e.Type != state.AccessEntryStandard {
		return nil, invalid("Access policies can only be associated with access entries of type STANDARD; %s is %s.", e.PrincipalARN, e.Type)
	}
	a := state.AccessPolicyAssociation{PolicyARN: in.PolicyARN, ScopeType: in.AccessScope.Type, Namespaces: in.AccessScope.Namespaces,
		AssociatedAt: c.world.Now, ModifiedAt: c.world.Now}
	if i := slices.IndexFunc(e.AccessPolicies, func(x state.AccessPolicyAssociation) bool { return x.PolicyARN == in.PolicyARN }); i >= 0 {
		a.AssociatedAt = e.AccessPolicies[i].AssociatedAt
		e.AccessPolicies[i] = a
	} else {
		e.AccessPolicies = append(e.AccessPolicies, a)
	}
	return map[string]any{"clusterName": c.cluster.Name, "principalArn": e.PrincipalARN, "associatedAccessPolicy": associatedOf(a)}, nil
}

func (c *call) disassociate(e *state.AccessEntry) (any, error) {
	i := slices.IndexFunc(e.AccessPolicies, func(x state.AccessPolicyAssociation) bool { return x.PolicyARN == c.route.policyARN })
	if i < 0 {
		return nil, wire.NewError(http.StatusNotFound, "ResourceNotFoundException", "The access policy %s is not associated with %s.", c.route.policyARN, e.PrincipalARN)
	}
	e.AccessPolicies = slices.Delete(e.AccessPolicies, i, i+1)
	return map[string]any{}, nil
}

func (c *call) listAssociated(e *state.AccessEntry) (any, error) {
	start, end, next, err := c.page("ListAssociatedAccessPolicies", len(e.AccessPolicies))
	if err != nil {
		return nil, err
	}
	items := []associatedJSON{}
	for _, a := range e.AccessPolicies[start:end] {
		items = append(items, associatedOf(a))
	}
	out := map[string]any{"clusterName": c.cluster.Name, "principalArn": e.PrincipalARN, "associatedAccessPolicies": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

// listAccessPolicies lists the EKS access policies AssociateAccessPolicy accepts.
func (c *call) listAccessPolicies() (any, error) {
	start, end, next, err := c.page("ListAccessPolicies", len(accessPolicies))
	if err != nil {
		return nil, err
	}
	items := []map[string]string{}
	for _, name := range accessPolicies[start:end] {
		items = append(items, map[string]string{"name": name, "arn": accessPolicyARNPrefix + name})
	}
	out := map[string]any{"accessPolicies": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

type updateConfigInput struct {
	AccessConfig *struct {
		AuthenticationMode string `json:"authenticationMode"`
	} `json:"accessConfig"`
	// The other members of UpdateClusterConfig are read only to refuse them.
	ResourcesVPCConfig json.RawMessage `json:"resourcesVpcConfig"`
	Logging            json.RawMessage `json:"logging"`
	UpgradePolicy      json.RawMessage `json:"upgradePolicy"`
	ZonalShiftConfig   json.RawMessage `json:"zonalShiftConfig"`
	ComputeConfig      json.RawMessage `json:"computeConfig"`
	KubernetesNetwork  json.RawMessage `json:"kubernetesNetworkConfig"`
	StorageConfig      json.RawMessage `json:"storageConfig"`
}

// nextAuthenticationMode is the one change of authentication mode EKS allows from a mode: one
// way, one step at a time, from aws-auth towards access entries ("" from API).
func nextAuthenticationMode(mode string) string {
	switch mode {
	case "CONFIG_MAP":
		return "API_AND_CONFIG_MAP"
	case "API_AND_CONFIG_MAP":
		return "API"
	}
	return ""
}

// updateConfig changes a cluster's authentication mode, the one cluster setting the emulator
// lets change. The change applies at once (EKS takes minutes) and the update is reported
// Successful.
func (c *call) updateConfig() (any, error) {
	var in updateConfigInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	for name, raw := range map[string]json.RawMessage{"resourcesVpcConfig": in.ResourcesVPCConfig, "logging": in.Logging,
		"upgradePolicy": in.UpgradePolicy, "zonalShiftConfig": in.ZonalShiftConfig, "computeConfig": in.ComputeConfig,
		"kubernetesNetworkConfig": in.KubernetesNetwork, "storageConfig": in.StorageConfig} {
		if len(raw) > 0 {
			return nil, invalid("The emulator changes only accessConfig.authenticationMode; %s is not emulated.", name)
		}
	}
	if in.AccessConfig == nil || in.AccessConfig.AuthenticationMode == "" {
		return nil, invalid("accessConfig.authenticationMode is required: the emulator changes nothing else.")
	}
	from, to := c.cluster.AuthenticationMode, in.AccessConfig.AuthenticationMode
	if nextAuthenticationMode(from) != to {
		return nil, invalid("Unsupported authentication mode update from %s to %s", from, to)
	}
	c.cluster.AuthenticationMode = to
	update := map[string]any{
		"id": state.UUIDOf(c.world.NewID("")), "status": "Successful", "type": "AccessConfigUpdate", "createdAt": epoch(c.world.Now),
		"params": []map[string]string{{"type": "AuthenticationMode", "value": to}}, "errors": []any{},
	}
	return map[string]any{"update": update}, nil
}
