package nodejoin

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// What a node's mapRoles entry must say (aws-iam-authenticator, the Node authorizer).
const (
	NodeUsername       = "system:node:{{EC2PrivateDNSName}}"
	NodesGroup         = "system:nodes"
	BootstrappersGroup = "system:bootstrappers"
)

// Reasons of the node role checks.
const (
	ReasonNodeRoleNotMapped          = "NodeRoleNotMapped"
	ReasonNodeRoleMappingUnverified  = "NodeRoleMappingUnverified"
	ReasonAWSAuthMapsAnotherRole     = "AWSAuthMapsAnotherRole"
	ReasonAWSAuthMapsControllerRole  = "AWSAuthMapsControllerRole"
	ReasonAWSAuthAccountMismatch     = "AWSAuthAccountMismatch"
	ReasonAWSAuthRoleARNHasPath      = "AWSAuthRoleARNHasPath"
	ReasonAWSAuthWrongUsername       = "AWSAuthWrongUsername"
	ReasonAWSAuthWrongGroups         = "AWSAuthWrongGroups"
	ReasonAWSAuthMissingBootstrapper = "AWSAuthMissingBootstrappers"
	ReasonAWSAuthInvalid             = "AWSAuthInvalid"
	ReasonAWSAuthIgnoredInAPIMode    = "AWSAuthIgnoredInAPIMode"
	ReasonAccessEntryNotEC2Linux     = "AccessEntryNotEC2Linux"
	ReasonAccessEntryIgnored         = "AccessEntryIgnoredInConfigMapMode"
	ReasonNodeRoleUnknown            = "NodeRoleUnknown"
)

const awsAuthObject = "ConfigMap/kube-system/aws-auth"

type mapRole struct {
	RoleARN  string   `json:"rolearn"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// CanonicalRoleARN removes a role ARN's IAM path, as aws-iam-authenticator canonicalises the
// role a kubelet assumes: arn:aws:iam::1:role/a/b/Name becomes arn:aws:iam::1:role/Name.
func CanonicalRoleARN(arn string) string {
	prefix, name, ok := strings.Cut(strings.TrimSpace(arn), ":role/")
	if !ok {
		return strings.TrimSpace(arn)
	}
	return prefix + ":role/" + name[strings.LastIndex(name, "/")+1:]
}

// roleName and accountOf split a role ARN.
func roleName(arn string) string {
	c := CanonicalRoleARN(arn)
	_, name, _ := strings.Cut(c, ":role/")
	return name
}

func accountOf(arn string) string {
	if parts := strings.Split(arn, ":"); len(parts) > 4 {
		return parts[4]
	}
	return ""
}

// MapRolesEntry is the mapRoles entry that lets nodes of roleARN join.
func MapRolesEntry(roleARN string) string {
	return fmt.Sprintf("- rolearn: %s\n  username: %s\n  groups:\n  - %s\n  - %s\n", CanonicalRoleARN(roleARN), NodeUsername, BootstrappersGroup, NodesGroup)
}

// CreateAccessEntryCommand is the aws command that creates the access entry nodes of roleARN
// join with.
func CreateAccessEntryCommand(cluster, roleARN string) string {
	return fmt.Sprintf("aws eks create-access-entry --cluster-name %s --principal-arn %s --type %s", clusterOrPlaceholder(cluster), CanonicalRoleARN(roleARN), AccessEntryTypeEC2Linux)
}

func clusterOrPlaceholder(cluster string) string {
	if cluster == "" {
		return "<cluster>"
	}
	return cluster
}

// roleView is what the role checks found, source by source.
type roleView struct {
	in       Inputs
	role     string // the node role's ARN, path included when known
	modeAPI  bool   // access entries count
	modeCM   bool   // aws-auth counts
	entry    *AccessEntry
	mapped   *mapRole // the entry whose rolearn is exactly the path-less node role
	roles    []mapRole
	yamlErr  error
	findings []Finding
}

func checkRole(in Inputs) []Finding {
	role := in.NodeRoleARN
	if role == "" && in.NodeClass.Spec.Role != "" && in.AccountID != "" {
		role = fmt.Sprintf("arn:aws:iam::%s:role/%s", in.AccountID, in.NodeClass.Spec.Role)
	}
	if role == "" {
		if in.AWSAuth == nil && !in.AccessEntriesVisible {
			return nil
		}
		return []Finding{{Severity: SeverityWarning, Object: nodeClassObject(in.NodeClass), Reason: ReasonNodeRoleUnknown,
			Message: "the node role's ARN is not known (spec.instanceProfile's role could not be read, or the account id is unknown), so Joiner cannot check that nodes may join",
			Fix:     "give Joiner iam:GetInstanceProfile on the instance profile, or set spec.role"}}
	}
	v := &roleView{in: in, role: role,
		modeAPI: in.AuthenticationMode != AuthenticationModeConfigMap,
		modeCM:  in.AuthenticationMode != AuthenticationModeAPI}
	v.readAccessEntries()
	v.readAWSAuth()
	return v.decide()
}

func (v *roleView) readAccessEntries() {
	if !v.in.AccessEntriesVisible {
		return
	}
	for i, e := range v.in.AccessEntries {
		if CanonicalRoleARN(e.PrincipalARN) == CanonicalRoleARN(v.role) {
			v.entry = &v.in.AccessEntries[i]
			return
		}
	}
}

func (v *roleView) readAWSAuth() {
	if v.in.AWSAuth == nil || !v.in.AWSAuth.Found {
		return
	}
	if err := yaml.Unmarshal([]byte(v.in.AWSAuth.MapRoles), &v.roles); err != nil {
		v.yamlErr = err
		return
	}
	canonical := CanonicalRoleARN(v.role)
	for i, r := range v.roles {
		if strings.TrimSpace(r.RoleARN) == canonical {
			v.mapped = &v.roles[i]
			return
		}
	}
}

// entryJoins: an EC2_LINUX access entry, in a mode that reads access entries.
func (v *roleView) entryJoins() bool {
	return v.modeAPI && v.entry != nil && v.entry.Type == AccessEntryTypeEC2Linux
}

// mappedRight: the mapRoles entry has the node username and groups.
func (v *roleView) mappedRight() bool {
	return v.mapped != nil && strings.TrimSpace(v.mapped.Username) == NodeUsername && slices.Contains(v.mapped.Groups, NodesGroup)
}

// shadowed: an access entry of another type for the role is found first, and the authenticator
// never reads aws-auth for it.
func (v *roleView) shadowed() bool {
	return v.modeAPI && v.entry != nil && v.entry.Type != AccessEntryTypeEC2Linux
}

func (v *roleView) fixBoth() string {
	cluster := v.in.Cluster.Name
	switch v.in.AuthenticationMode {
	case AuthenticationModeAPI:
		return CreateAccessEntryCommand(cluster, v.role)
	case AuthenticationModeConfigMap:
		return "add to mapRoles in kube-system/aws-auth:\n" + MapRolesEntry(v.role)
	}
	return fmt.Sprintf("run %s\nor add to mapRoles in kube-system/aws-auth:\n%s", CreateAccessEntryCommand(cluster, v.role), MapRolesEntry(v.role))
}

func (v *roleView) add(s Severity, object, reason, message, fix string) {
	v.findings = append(v.findings, Finding{Severity: s, Object: object, Reason: reason, Message: message, Fix: fix})
}

func (v *roleView) decide() []Finding {
	canonical := CanonicalRoleARN(v.role)
	nc := v.in.NodeClass.Name
	if v.shadowed() {
		v.add(SeverityError, "AccessEntry/"+v.entry.PrincipalARN, ReasonAccessEntryNotEC2Linux,
			fmt.Sprintf("the node role %s of EC2NodeClass %s has an access entry of type %s; EKS reads it before aws-auth, and only an %s entry lets a kubelet register its Node (an entry's type cannot be changed)",
				canonical, nc, v.entry.Type, AccessEntryTypeEC2Linux),
			fmt.Sprintf("aws eks delete-access-entry --cluster-name %s --principal-arn %s && %s",
				clusterOrPlaceholder(v.in.Cluster.Name), v.entry.PrincipalARN, CreateAccessEntryCommand(v.in.Cluster.Name, v.role)))
		return v.findings
	}
	if v.entryJoins() {
		return v.findings
	}
	if v.modeCM && !v.shadowed() && v.mapped != nil {
		v.checkMappedEntry()
		return v.findings
	}
	// The node role cannot join through what counts in this mode. Name the known mistakes.
	if v.modeMistake() || (v.modeCM && v.mistakes()) {
		return v.findings
	}
	v.unmapped()
	return v.findings
}

// modeMistake names a mapping that the authentication mode ignores, or aws-auth that maps
// nothing. It reports whether it found one.
func (v *roleView) modeMistake() bool {
	canonical := CanonicalRoleARN(v.role)
	if v.yamlErr != nil && v.modeCM {
		v.add(SeverityError, awsAuthObject, ReasonAWSAuthInvalid,
			fmt.Sprintf("kube-system/aws-auth mapRoles is not valid YAML, so aws-iam-authenticator maps no role at all: %v", v.yamlErr),
			"rewrite mapRoles as a YAML list; the node role's entry is:\n"+MapRolesEntry(v.role))
		return true
	}
	if v.in.AuthenticationMode == AuthenticationModeConfigMap && v.entry != nil && v.entry.Type == AccessEntryTypeEC2Linux {
		v.add(SeverityError, "AccessEntry/"+v.entry.PrincipalARN, ReasonAccessEntryIgnored,
			fmt.Sprintf("the cluster's authentication mode is CONFIG_MAP, so EKS ignores the %s access entry of node role %s", AccessEntryTypeEC2Linux, canonical),
			fmt.Sprintf("aws eks update-cluster-config --name %s --access-config authenticationMode=API_AND_CONFIG_MAP\nor add to mapRoles in kube-system/aws-auth:\n%s",
				clusterOrPlaceholder(v.in.Cluster.Name), MapRolesEntry(v.role)))
		return true
	}
	if v.in.AuthenticationMode == AuthenticationModeAPI && v.mapped != nil && v.mappedRight() {
		v.add(SeverityError, awsAuthObject, ReasonAWSAuthIgnoredInAPIMode,
			fmt.Sprintf("kube-system/aws-auth maps node role %s correctly, but the cluster's authentication mode is API, which ignores aws-auth", canonical),
			CreateAccessEntryCommand(v.in.Cluster.Name, v.role))
		return true
	}
	return false
}

// unmapped reports the node role as not mapped: an Error only when every source that counts in
// the authentication mode was seen, else a Warning naming what was not.
func (v *roleView) unmapped() {
	canonical := CanonicalRoleARN(v.role)
	nc := v.in.NodeClass.Name
	// Certain only when every source that counts was seen.
	certain := v.in.AuthenticationMode != "" &&
		(!v.modeAPI || v.in.AccessEntriesVisible) && (!v.modeCM || v.in.AWSAuth != nil)
	if !certain {
		var unseen []string
		if v.in.AuthenticationMode == "" {
			unseen = append(unseen, "the cluster's authentication mode")
		}
		if v.modeAPI && !v.in.AccessEntriesVisible {
			unseen = append(unseen, "the access entries")
		}
		if v.modeCM && v.in.AWSAuth == nil {
			unseen = append(unseen, "kube-system/aws-auth")
		}
		v.add(SeverityWarning, nodeClassObject(v.in.NodeClass), ReasonNodeRoleMappingUnverified,
			fmt.Sprintf("Joiner could not read %s, so it cannot tell whether node role %s of EC2NodeClass %s may join", strings.Join(unseen, " or "), canonical, nc),
			"make sure the role is mapped: "+v.fixBoth())
		return
	}
	where := map[string]string{
		AuthenticationModeAPI:             "has no EKS access entry (the authentication mode API ignores aws-auth)",
		AuthenticationModeConfigMap:       "is not in kube-system/aws-auth mapRoles (the authentication mode CONFIG_MAP ignores access entries)",
		AuthenticationModeAPIAndConfigMap: "has neither an EKS access entry of type EC2_LINUX nor a kube-system/aws-auth mapRoles entry",
	}[v.in.AuthenticationMode]
	if v.in.AWSAuth != nil && !v.in.AWSAuth.Found && v.modeCM {
		where += "; kube-system/aws-auth does not exist"
	}
	v.add(SeverityError, nodeClassObject(v.in.NodeClass), ReasonNodeRoleNotMapped,
		fmt.Sprintf("node role %s of EC2NodeClass %s %s, so its kubelets are Unauthorized and nodes never register", canonical, nc, where),
		v.fixBoth())
}

// checkMappedEntry checks the mapRoles entry of the node role: username and groups.
func (v *roleView) checkMappedEntry() {
	r := v.mapped
	if strings.TrimSpace(r.Username) != NodeUsername {
		v.add(SeverityError, awsAuthObject, ReasonAWSAuthWrongUsername,
			fmt.Sprintf("kube-system/aws-auth maps node role %s with username %q: the Node authorizer lets a kubelet register only the Node named by system:node:<its private DNS name>", r.RoleARN, r.Username),
			"replace the entry with:\n"+MapRolesEntry(v.role))
	}
	if !slices.Contains(r.Groups, NodesGroup) {
		v.add(SeverityError, awsAuthObject, ReasonAWSAuthWrongGroups,
			fmt.Sprintf("kube-system/aws-auth maps node role %s with groups %v, without %s: the kubelet may not create its Node", r.RoleARN, r.Groups, NodesGroup),
			"replace the entry with:\n"+MapRolesEntry(v.role))
	} else if !slices.Contains(r.Groups, BootstrappersGroup) {
		v.add(SeverityWarning, awsAuthObject, ReasonAWSAuthMissingBootstrapper,
			fmt.Sprintf("kube-system/aws-auth maps node role %s with groups %v, without %s: the kubelet cannot request its serving certificate", r.RoleARN, r.Groups, BootstrappersGroup),
			"replace the entry with:\n"+MapRolesEntry(v.role))
	}
}

// mistakes names a known wrong mapRoles entry that was meant for the node role. It reports
// whether it found one.
func (v *roleView) mistakes() bool {
	canonical := CanonicalRoleARN(v.role)
	name, account := roleName(v.role), accountOf(canonical)
	found := false
	for _, r := range v.roles {
		arn := strings.TrimSpace(r.RoleARN)
		switch {
		case CanonicalRoleARN(arn) == canonical && arn != canonical:
			v.add(SeverityError, awsAuthObject, ReasonAWSAuthRoleARNHasPath,
				fmt.Sprintf("kube-system/aws-auth maps %s, a role ARN with an IAM path: aws-iam-authenticator compares the path-less ARN %s, so the entry never matches", arn, canonical)+v.unlessEntry(),
				"write rolearn without the path:\n"+MapRolesEntry(v.role))
			found = true
		case roleName(arn) == name && accountOf(arn) != account:
			v.add(SeverityError, awsAuthObject, ReasonAWSAuthAccountMismatch,
				fmt.Sprintf("kube-system/aws-auth maps %s, in account %s, but the node role is %s in account %s", arn, accountOf(arn), canonical, account)+v.unlessEntry(),
				"correct the account id:\n"+MapRolesEntry(v.role))
			found = true
		}
	}
	if found {
		return true
	}
	// Entries written for nodes (the node username) that map some other role.
	var others []string
	controller := false
	for _, r := range v.roles {
		if strings.TrimSpace(r.Username) != NodeUsername {
			continue
		}
		arn := strings.TrimSpace(r.RoleARN)
		others = append(others, arn)
		if v.in.ControllerRoleARN != "" && CanonicalRoleARN(arn) == CanonicalRoleARN(v.in.ControllerRoleARN) {
			controller = true
		}
	}
	if len(others) == 0 {
		return false
	}
	reason, what := ReasonAWSAuthMapsAnotherRole, "another role"
	if controller {
		reason, what = ReasonAWSAuthMapsControllerRole, "the controller's role"
	}
	v.add(SeverityError, awsAuthObject, reason,
		fmt.Sprintf("kube-system/aws-auth maps %s (%s) as nodes, but not node role %s of EC2NodeClass %s, so its kubelets are Unauthorized and nodes never register",
			what, strings.Join(others, ", "), canonical, v.in.NodeClass.Name)+v.unlessEntry(),
		v.fixBoth())
	return true
}

// unlessEntry qualifies an aws-auth finding when an access entry Joiner could not read may
// still let the role join.
func (v *roleView) unlessEntry() string {
	if !v.modeAPI || v.in.AccessEntriesVisible {
		return ""
	}
	return " (unless an EC2_LINUX access entry maps it: Joiner could not read the access entries)"
}
