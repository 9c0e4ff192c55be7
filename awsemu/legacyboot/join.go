package legacyboot

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu/state"
)

// JoinError says why a kubelet cannot register its Node, as the kubelet would log it.
type JoinError struct {
	// Reason is "Unauthorized" (the role is not mapped to any user) or "Forbidden" (it is mapped
	// to a user that may not register nodes).
	Reason  string
	Message string
}

func (e *JoinError) Error() string {
	return "Unable to register node with API server: " + e.Reason + ": " + e.Message
}

// mapRole is one entry of the aws-auth ConfigMap's mapRoles.
type mapRole struct {
	RoleARN  string   `json:"rolearn"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// nodeUsername is the username a node's role must map to.
const nodeUsername = "system:node:{{EC2PrivateDNSName}}"

// MayJoin decides whether a node whose instance profile holds roleARN can register with the
// cluster: through an EC2_LINUX access entry when the cluster's authentication mode includes the
// API, or through the aws-auth ConfigMap's mapRoles (YAML, "" when there is no ConfigMap) when it
// includes CONFIG_MAP. The authenticator sees the role as its session ARN, which drops the role's
// path, so a mapRoles entry written with a path never matches — as in EKS.
func MayJoin(roleARN string, c *state.Cluster, mapRoles string) error {
	if roleARN == "" {
		return &JoinError{Reason: "Unauthorized", Message: "the instance has no instance profile, so the kubelet has no AWS credentials"}
	}
	canonical := canonicalRoleARN(roleARN)
	mode := c.AuthenticationMode
	if strings.HasPrefix(mode, "API") {
		for _, e := range c.AccessEntries {
			if canonicalRoleARN(e.PrincipalARN) == canonical && e.Type == state.AccessEntryEC2Linux {
				return nil
			}
		}
	}
	if strings.HasSuffix(mode, "CONFIG_MAP") {
		var roles []mapRole
		if err := yaml.Unmarshal([]byte(mapRoles), &roles); err != nil {
			return &JoinError{Reason: "Unauthorized", Message: fmt.Sprintf("aws-auth mapRoles does not parse (%v), so no role is mapped", err)}
		}
		for _, r := range roles {
			if !strings.EqualFold(r.RoleARN, canonical) {
				continue
			}
			if r.Username != nodeUsername || !slices.Contains(r.Groups, "system:bootstrappers") || !slices.Contains(r.Groups, "system:nodes") {
				return &JoinError{Reason: "Forbidden", Message: fmt.Sprintf("%s is mapped to user %q with groups %v; a node needs %q in system:bootstrappers and system:nodes", canonical, r.Username, r.Groups, nodeUsername)}
			}
			return nil
		}
	}
	return &JoinError{Reason: "Unauthorized", Message: fmt.Sprintf("role %s has no EC2_LINUX access entry and no aws-auth mapRoles entry (authentication mode %s)", canonical, mode)}
}

// canonicalRoleARN drops the path of a role ARN: arn:aws:iam::1:role/a/b/Name → …:role/Name.
func canonicalRoleARN(arn string) string {
	prefix, rest, ok := strings.Cut(arn, ":role/")
	if !ok {
		return arn
	}
	return prefix + ":role/" + rest[strings.LastIndex(rest, "/")+1:]
}
