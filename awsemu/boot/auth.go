package boot

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Values of Cluster.AuthenticationMode.
const (
	AuthenticationModeConfigMap       = "CONFIG_MAP"
	AuthenticationModeAPI             = "API"
	AuthenticationModeAPIAndConfigMap = "API_AND_CONFIG_MAP"
)

// Access entry types (EKS CreateAccessEntry's type).
const (
	AccessEntryTypeStandard     = "STANDARD"
	AccessEntryTypeEC2Linux     = "EC2_LINUX"
	AccessEntryTypeEC2Windows   = "EC2_WINDOWS"
	AccessEntryTypeFargateLinux = "FARGATE_LINUX"
	AccessEntryTypeHybridLinux  = "HYBRID_LINUX"
)

// Kubernetes identities a node needs.
const (
	// NodeUsernameTemplate is the aws-auth username a node role must map to.
	NodeUsernameTemplate = "system:node:{{EC2PrivateDNSName}}"
	// NodesGroup is the group the Node authorizer requires.
	NodesGroup = "system:nodes"
	// BootstrappersGroup lets the kubelet request its serving certificate.
	BootstrappersGroup = "system:bootstrappers"
)

// AccessEntry is an EKS access entry as DescribeAccessEntry returns it.
type AccessEntry struct {
	// PrincipalARN is the IAM role or user ARN, with its path.
	PrincipalARN string
	// Type is STANDARD, EC2_LINUX, EC2_WINDOWS, FARGATE_LINUX or HYBRID_LINUX.
	Type string
	// Username is the Kubernetes username; EKS sets it for EC2_LINUX entries.
	Username string
	// KubernetesGroups are extra groups (not allowed on EC2_LINUX entries).
	KubernetesGroups []string
}

// AuthRequest is a kubelet presenting its instance role's token to the API server.
type AuthRequest struct {
	// RoleARN is the instance profile's role ARN, with its IAM path.
	RoleARN string
	// NodeName is the Node the kubelet will create: its private DNS name, unless the kubelet
	// was given --hostname-override.
	NodeName string
	// PrivateDNSName is the instance's private DNS name, what {{EC2PrivateDNSName}} expands to;
	// NodeName when empty.
	PrivateDNSName string
	// SessionName is the assumed-role session name: the instance id.
	SessionName string
	// MapRoles is the mapRoles YAML of kube-system/aws-auth; ConfigMapFound says whether the
	// ConfigMap exists.
	MapRoles       string
	ConfigMapFound bool
	// AccessEntries and AuthenticationMode are the cluster's.
	AccessEntries      []AccessEntry
	AuthenticationMode string
}

// Decision is the API server's answer to the kubelet's first request, creating its Node.
type Decision struct {
	// Allowed is true when the Node may be created.
	Allowed bool
	// Reason is empty when allowed, else ReasonUnauthorized (unknown identity, 401) or
	// ReasonForbidden (known identity that may not create this Node, 403).
	Reason string
	// Message is the API server's error as the kubelet logs it, or a note when allowed.
	Message string
	// Username and Groups are the identity the token authenticated as, when it did.
	Username string
	Groups   []string
	// Source says what mapped the role: "aws-auth", "access entry" or empty.
	Source string
	// Warnings are problems that do not stop the Node from registering.
	Warnings []string
}

type mapRole struct {
	RoleARN  string   `json:"rolearn"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// Authorize decides whether a kubelet using the role's credentials may register its Node, as
// aws-iam-authenticator, the Node authorizer and the NodeRestriction admission plugin decide it.
//
// Authentication: with mode API or API_AND_CONFIG_MAP (the default), an access entry whose
// principal is the role ARN maps it first; with CONFIG_MAP or API_AND_CONFIG_MAP, a mapRoles
// entry whose rolearn equals the role ARN with its IAM path removed maps it next (the
// authenticator canonicalises the assumed role to arn:...:role/NAME, so a rolearn written with a
// path never matches). Nothing mapped, or mapRoles that is not valid YAML, is Unauthorized.
//
// Authorization: the username, with {{EC2PrivateDNSName}}, {{SessionName}} and {{AccountID}}
// expanded, must be system:node:<NodeName> and the groups must include system:nodes; otherwise
// creating the Node is Forbidden. A missing system:bootstrappers group is only a warning.
func Authorize(req AuthRequest) Decision {
	mode := req.AuthenticationMode
	if mode == "" {
		mode = AuthenticationModeAPIAndConfigMap
	}
	var (
		username, source string
		groups           []string
		found            bool
	)
	if mode != AuthenticationModeConfigMap {
		username, groups, found = fromAccessEntries(req)
		source = "access entry"
	}
	if !found && mode != AuthenticationModeAPI && req.ConfigMapFound {
		var d *Decision
		username, groups, found, d = fromMapRoles(req)
		if d != nil {
			return *d
		}
		source = "aws-auth"
	}
	if !found {
		return Decision{Reason: ReasonUnauthorized, Message: "Unauthorized"}
	}
	username = expandUsername(username, req)
	d := Decision{Username: username, Groups: groups, Source: source}
	want := "system:node:" + req.NodeName
	switch {
	case !slices.Contains(groups, NodesGroup) || !strings.HasPrefix(username, "system:node:"):
		d.Reason = ReasonForbidden
		d.Message = fmt.Sprintf("nodes is forbidden: User %q cannot create resource \"nodes\" in API group \"\" at the cluster scope", username)
	case username != want:
		d.Reason = ReasonForbidden
		d.Message = fmt.Sprintf("nodes %q is forbidden: node %q is not allowed to modify node %q",
			req.NodeName, strings.TrimPrefix(username, "system:node:"), req.NodeName)
	default:
		d.Allowed = true
		d.Message = fmt.Sprintf("authenticated as %s by %s", username, source)
	}
	if d.Allowed && source == "aws-auth" && !slices.Contains(groups, BootstrappersGroup) {
		d.Warnings = append(d.Warnings, "group system:bootstrappers is missing: the kubelet cannot request its serving certificate")
	}
	return d
}

// fromAccessEntries maps the role through the cluster's access entries, as the EKS
// authenticator does. Only EC2_LINUX and EC2_WINDOWS entries give the identity of an EC2 node
// (system:node:{{EC2PrivateDNSName}} in system:nodes); FARGATE_LINUX and HYBRID_LINUX entries
// name the node after the session ({{SessionName}}, the instance id on EC2), which the Node
// authorizer refuses for a Node named after its DNS name; a STANDARD entry gives its username
// (by default the role's assumed-role session) and groups, which are never a node's, since
// EKS refuses system: groups on them.
func fromAccessEntries(req AuthRequest) (string, []string, bool) {
	for _, e := range req.AccessEntries {
		// An access entry may be written with or without the role's path, and EKS matches the
		// role itself (role names are unique in an account whatever their path).
		if canonicalRoleARN(e.PrincipalARN) != canonicalRoleARN(req.RoleARN) {
			continue
		}
		switch e.Type {
		case AccessEntryTypeEC2Linux, AccessEntryTypeEC2Windows:
			return NodeUsernameTemplate, []string{NodesGroup}, true
		case AccessEntryTypeFargateLinux, AccessEntryTypeHybridLinux:
			return "system:node:{{SessionName}}", []string{NodesGroup}, true
		default:
			username := e.Username
			if username == "" {
				username = assumedRoleARN(req.RoleARN) + "/{{SessionName}}"
			}
			return username, e.KubernetesGroups, true
		}
	}
	return "", nil, false
}

func fromMapRoles(req AuthRequest) (string, []string, bool, *Decision) {
	var roles []mapRole
	if err := yaml.Unmarshal([]byte(req.MapRoles), &roles); err != nil {
		return "", nil, false, &Decision{Reason: ReasonUnauthorized, Message: "Unauthorized",
			Warnings: []string{fmt.Sprintf("kube-system/aws-auth mapRoles is not valid YAML, so no role is mapped: %v", err)}}
	}
	canonical := canonicalRoleARN(req.RoleARN)
	for _, r := range roles {
		if strings.TrimSpace(r.RoleARN) == canonical {
			return r.Username, r.Groups, true, nil
		}
	}
	return "", nil, false, nil
}

// canonicalRoleARN removes the IAM path: arn:aws:iam::1:role/a/b/Name becomes arn:aws:iam::1:role/Name.
func canonicalRoleARN(arn string) string {
	prefix, name, ok := strings.Cut(arn, ":role/")
	if !ok {
		return arn
	}
	return prefix + ":role/" + name[strings.LastIndex(name, "/")+1:]
}

// assumedRoleARN is the STS identity of the role: arn:aws:sts::1:assumed-role/Name.
func assumedRoleARN(arn string) string {
	canonical := canonicalRoleARN(arn)
	prefix, name, ok := strings.Cut(canonical, ":role/")
	if !ok {
		return arn
	}
	return strings.Replace(prefix, ":iam:", ":sts:", 1) + ":assumed-role/" + name
}

func expandUsername(username string, req AuthRequest) string {
	account := ""
	if parts := strings.Split(req.RoleARN, ":"); len(parts) > 4 {
		account = parts[4]
	}
	return strings.NewReplacer(
		"{{EC2PrivateDNSName}}", cmp.Or(req.PrivateDNSName, req.NodeName),
		"{{SessionName}}", req.SessionName,
		"{{AccountID}}", account,
	).Replace(username)
}
