package world

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/pkg/catalog"
)

var (
	clusterName   = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	accountID     = regexp.MustCompile(`^[0-9]{12}$`)
	k8sVersion    = regexp.MustCompile(`^1\.[0-9]{1,2}$`)
	queueName     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	iamName       = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	profileName   = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
	accountRoot   = regexp.MustCompile(`^arn:aws:iam::[0-9]{12}:root$`)
	iamPath       = regexp.MustCompile(`^/([\x21-\x7e]*/)?$`)
	roleARN       = regexp.MustCompile(`^arn:aws:iam::([0-9]{12}):role(/.*/|/)([\w+=,.@-]{1,64})$`)
	userARN       = regexp.MustCompile(`^arn:aws:iam::([0-9]{12}):user(/.*/|/)([\w+=,.@-]{1,64})$`)
	profileARN    = regexp.MustCompile(`^arn:aws:iam::([0-9]{12}):instance-profile(/.*/|/)([\w+=,.@-]{1,128})$`)
	managedPolicy = regexp.MustCompile(`^arn:aws:iam::(aws|[0-9]{12}):policy/.+$`)
	eksPolicy     = regexp.MustCompile(`^arn:aws:eks::aws:cluster-access-policy/[A-Za-z0-9]+$`)
	accessKeyID   = regexp.MustCompile(`^[A-Z0-9]{16,128}$`)
	vpcID         = regexp.MustCompile(`^vpc-[0-9a-f]{8,17}$`)
	subnetID      = regexp.MustCompile(`^subnet-[0-9a-f]{8,17}$`)
	groupID       = regexp.MustCompile(`^sg-[0-9a-f]{8,17}$`)
	imageID       = regexp.MustCompile(`^ami-[0-9a-f]{8,17}$`)
	servicePrinc  = regexp.MustCompile(`^[a-z0-9.-]+\.amazonaws\.com$`)
	namespaceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?\*?$`)
)

// checker collects problems.
type checker struct{ problems []Problem }

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Reason: fmt.Sprintf(format, args...)})
}

func oneOf(values ...string) string { return strings.Join(values, ", ") }

// Validate checks that the world is possible and fills the defaults in: it returns an *Error
// listing every problem, each at its field's path, or nil. The catalogue gives the regions and
// their zones.
func (f *File) Validate(cat *catalog.Catalog) error {
	c := &checker{}
	f.defaults()
	region := f.validateCluster(c, cat)
	roles := f.validateRoles(c)
	users := f.validateUsers(c)
	f.validateInstanceProfiles(c, roles)
	f.validateAccessEntries(c, roles, users)
	f.validateNetwork(c, region)
	f.validateImages(c)
	if len(c.problems) > 0 {
		return &Error{Problems: c.problems}
	}
	return nil
}

func (f *File) defaults() {
	cl := &f.Cluster
	if cl.AccountID == "" {
		cl.AccountID = DefaultAccountID
	}
	if cl.Region == "" {
		cl.Region = DefaultRegion
	}
	if cl.KubernetesVersion == "" {
		versions := state.DefaultSeed().KubernetesVersions
		cl.KubernetesVersion = versions[len(versions)-1]
	}
	if cl.AuthenticationMode == "" {
		cl.AuthenticationMode = DefaultAuthenticationMod
	}
	if cl.ServiceIPv4CIDR == "" {
		cl.ServiceIPv4CIDR = DefaultServiceIPv4CIDR
	}
	if cl.InterruptionQueue == "" {
		cl.InterruptionQueue = cl.Name
	}
	if f.ControllerRole == "" {
		f.ControllerRole = fmt.Sprintf("arn:aws:iam::%s:role/%s", cl.AccountID, DefaultControllerRole)
	}
	if f.ControllerAccessKeyID == "" {
		f.ControllerAccessKeyID = DefaultControllerKey
	}
}

func (f *File) validateCluster(c *checker, cat *catalog.Catalog) *catalog.Region {
	cl := f.Cluster
	switch {
	case cl.Name == "":
		c.add("cluster.name", "is required: the EKS cluster's name, as `aws eks describe-cluster` shows it")
	case !clusterName.MatchString(cl.Name):
		c.add("cluster.name", "%q is not an EKS cluster name: 1 to 100 letters, digits, - and _, starting with a letter or digit", cl.Name)
	}
	if !accountID.MatchString(cl.AccountID) {
		c.add("cluster.accountId", "%q is not an AWS account id: 12 digits, quoted in YAML", cl.AccountID)
	}
	var region *catalog.Region
	if r, ok := cat.Region(cl.Region); ok {
		region = &r
	} else {
		names := make([]string, 0, len(cat.Regions))
		for _, r := range cat.Regions {
			names = append(names, r.Name)
		}
		c.add("cluster.region", "region %q is not emulated; the emulated regions are %s", cl.Region, oneOf(names...))
	}
	if !k8sVersion.MatchString(cl.KubernetesVersion) {
		c.add("cluster.kubernetesVersion", "%q is not a Kubernetes minor version such as \"1.31\"", cl.KubernetesVersion)
	}
	if modes := []string{"CONFIG_MAP", "API", "API_AND_CONFIG_MAP"}; !slices.Contains(modes, cl.AuthenticationMode) {
		c.add("cluster.authenticationMode", "%q is not an EKS authentication mode; use one of %s", cl.AuthenticationMode, oneOf(modes...))
	}
	if p, err := netip.ParsePrefix(cl.ServiceIPv4CIDR); err != nil || !p.Addr().Is4() || p != p.Masked() {
		c.add("cluster.serviceIpv4Cidr", "%q is not an IPv4 network in CIDR notation such as 10.100.0.0/16", cl.ServiceIPv4CIDR)
	}
	if cl.VPCID != "" && !vpcID.MatchString(cl.VPCID) {
		c.add("cluster.vpcId", "%q is not a VPC id such as vpc-0123456789abcdef0", cl.VPCID)
	}
	if cl.VPCCIDR != "" {
		if p, err := netip.ParsePrefix(cl.VPCCIDR); err != nil || !p.Addr().Is4() || p != p.Masked() || p.Bits() < 16 || p.Bits() > 28 {
			c.add("cluster.vpcCidr", "%q is not a VPC CIDR: an IPv4 network from /16 to /28 such as 10.0.0.0/16", cl.VPCCIDR)
		}
	}
	if !queueName.MatchString(cl.InterruptionQueue) {
		c.add("cluster.interruptionQueue", "%q is not an SQS queue name: 1 to 80 letters, digits, - and _", cl.InterruptionQueue)
	}
	return region
}

// role is a role of the world by name.
type role struct {
	arn  string
	path string
}

func (f *File) validateRoles(c *checker) map[string]role {
	roles := map[string]role{}
	acct := f.Cluster.AccountID
	if m := roleARN.FindStringSubmatch(f.ControllerRole); m == nil {
		c.add("controllerRole", "%q is not an IAM role ARN such as arn:aws:iam::%s:role/KarpenterControllerRole", f.ControllerRole, acct)
	} else if m[1] != acct {
		c.add("controllerRole", "the role is in account %s, not the cluster's %s (cluster.accountId)", m[1], acct)
	} else {
		roles[m[3]] = role{arn: f.ControllerRole, path: m[2]}
	}
	if !accessKeyID.MatchString(f.ControllerAccessKeyID) {
		c.add("controllerAccessKeyId", "%q is not an access key id: 16 or more capital letters and digits", f.ControllerAccessKeyID)
	}
	validatePolicy(c, f.ControllerPolicy)
	for i, nr := range f.NodeRoles {
		f.validateRole(c, fmt.Sprintf("nodeRoles[%d]", i), nr, roles)
	}
	for i, r := range f.Roles {
		f.validateRole(c, fmt.Sprintf("roles[%d]", i), r, roles)
	}
	return roles
}

// validateRole checks one role of nodeRoles or roles and adds it to roles.
func (f *File) validateRole(c *checker, at string, nr Role, roles map[string]role) {
	acct := f.Cluster.AccountID
	if nr.Path != "" && !iamPath.MatchString(nr.Path) {
		c.add(at+".path", "%q is not an IAM path: it starts and ends with /, such as /eks/", nr.Path)
		return
	}
	name, path, ok := f.nodeRoleName(c, at, nr)
	if !ok {
		return
	}
	switch {
	case name == "":
		c.add(at+".name", "is required (or arn): the role's name")
		return
	case !iamName.MatchString(name):
		c.add(at+".name", "%q is not an IAM role name: 1 to 64 letters, digits and +=,.@_-", name)
		return
	}
	if _, dup := roles[name]; dup {
		if ctrl := roleARN.FindStringSubmatch(f.ControllerRole); ctrl != nil && ctrl[3] == name {
			c.add(at+".name", "%s is the controller's role (controllerRole); nodes need a role of their own", name)
		} else {
			c.add(at+".name", "role %s is listed twice (nodeRoles and roles list each role once)", name)
		}
		return
	}
	roles[name] = role{arn: fmt.Sprintf("arn:aws:iam::%s:role%s%s", acct, path, name), path: path}
	if p := nr.AssumeRolePolicyPrincipal; p != "" && !servicePrinc.MatchString(p) && !roleARN.MatchString(p) && !accountRoot.MatchString(p) {
		c.add(at+".assumeRolePolicyPrincipal", "%q is neither a service principal (ec2.amazonaws.com) nor an IAM ARN", p)
	}
	if len(nr.AssumeRolePolicyDocument) > 0 {
		if nr.AssumeRolePolicyPrincipal != "" {
			c.add(at+".assumeRolePolicyDocument", "give the trust policy or assumeRolePolicyPrincipal, not both")
		}
		validateTrustPolicy(c, at+".assumeRolePolicyDocument", nr.AssumeRolePolicyDocument)
	}
	for j, arn := range nr.ManagedPolicies {
		if !managedPolicy.MatchString(arn) {
			c.add(fmt.Sprintf("%s.managedPolicies[%d]", at, j), "%q is not a managed policy ARN such as arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", arn)
		}
	}
}

// nodeRoleName is the role's name and path from name and path, or from its ARN, which must
// agree with them; ok is false when a problem was added.
func (f *File) nodeRoleName(c *checker, at string, nr Role) (name, path string, ok bool) {
	acct := f.Cluster.AccountID
	name, path = nr.Name, nr.Path
	if path == "" {
		path = "/"
	}
	if nr.ARN == "" {
		return name, path, true
	}
	m := roleARN.FindStringSubmatch(nr.ARN)
	switch {
	case m == nil:
		c.add(at+".arn", "%q is not an IAM role ARN such as arn:aws:iam::%s:role/KarpenterNodeRole", nr.ARN, acct)
	case m[1] != acct:
		c.add(at+".arn", "the role is in account %s, not the cluster's %s (cluster.accountId)", m[1], acct)
	case name != "" && m[3] != name:
		c.add(at+".arn", "names role %s but name is %s; make them agree or give only one", m[3], name)
	case nr.Path != "" && m[2] != nr.Path:
		c.add(at+".arn", "has path %s but path is %s; make them agree or give only one", m[2], nr.Path)
	default:
		return m[3], m[2], true
	}
	return "", "", false
}

// validateUsers checks the users and returns them by name.
func (f *File) validateUsers(c *checker) map[string]role {
	users := map[string]role{}
	acct := f.Cluster.AccountID
	for i, u := range f.Users {
		at := fmt.Sprintf("users[%d]", i)
		if u.Path != "" && !iamPath.MatchString(u.Path) {
			c.add(at+".path", "%q is not an IAM path: it starts and ends with /, such as /ops/", u.Path)
			continue
		}
		name, path := u.UserName, u.Path
		if path == "" {
			path = "/"
		}
		if u.ARN != "" {
			m := userARN.FindStringSubmatch(u.ARN)
			switch {
			case m == nil:
				c.add(at+".arn", "%q is not an IAM user ARN such as arn:aws:iam::%s:user/alice", u.ARN, acct)
				continue
			case m[1] != acct:
				c.add(at+".arn", "the user is in account %s, not the cluster's %s (cluster.accountId); the world is one account", m[1], acct)
				continue
			case name != "" && m[3] != name:
				c.add(at+".arn", "names user %s but userName is %s; make them agree or give only one", m[3], name)
				continue
			case u.Path != "" && m[2] != u.Path:
				c.add(at+".arn", "has path %s but path is %s; make them agree or give only one", m[2], u.Path)
				continue
			}
			name, path = m[3], m[2]
		}
		switch {
		case name == "":
			c.add(at+".userName", "is required (or arn): the user's name")
			continue
		case !iamName.MatchString(name):
			c.add(at+".userName", "%q is not an IAM user name: 1 to 64 letters, digits and +=,.@_-", name)
			continue
		case users[name].arn != "":
			c.add(at+".userName", "user %s is listed twice", name)
			continue
		}
		users[name] = role{arn: fmt.Sprintf("arn:aws:iam::%s:user%s%s", acct, path, name), path: path}
		for j, arn := range u.ManagedPolicies {
			if !managedPolicy.MatchString(arn) {
				c.add(fmt.Sprintf("%s.managedPolicies[%d]", at, j), "%q is not a managed policy ARN such as arn:aws:iam::aws:policy/ReadOnlyAccess", arn)
			}
		}
	}
	return users
}

// validateTrustPolicy checks a role's trust policy as IAM does before storing it: a mapping
// with statements that each have an Effect, an Action and a Principal, and no Resource.
func validateTrustPolicy(c *checker, at string, raw json.RawMessage) {
	var doc struct {
		Version   string          `json:"Version"`
		Statement json.RawMessage `json:"Statement"`
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		c.add(at, "must be a policy document, a mapping with Version and Statement, as get-role prints it")
		return
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		c.add(at, "must be a policy document, a mapping with Version and Statement: %v", err)
		return
	}
	var statements []map[string]json.RawMessage
	if st := bytes.TrimSpace(doc.Statement); len(st) > 0 && st[0] == '{' {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(st, &one); err == nil {
			statements = append(statements, one)
		}
	} else if len(st) > 0 {
		_ = json.Unmarshal(st, &statements)
	}
	if len(statements) == 0 {
		c.add(at+".Statement", "is required: the statements saying who may assume the role")
		return
	}
	for i, s := range statements {
		sat := fmt.Sprintf("%s.Statement[%d]", at, i)
		switch {
		case s["Resource"] != nil || s["NotResource"] != nil:
			c.add(sat, "a trust policy has no Resource (the role is the resource)")
		case s["Principal"] == nil && s["NotPrincipal"] == nil:
			c.add(sat+".Principal", "is required: who may assume the role")
		case s["Action"] == nil && s["NotAction"] == nil:
			c.add(sat+".Action", "is required, such as sts:AssumeRole")
		case string(bytes.TrimSpace(s["Effect"])) != `"Allow"` && string(bytes.TrimSpace(s["Effect"])) != `"Deny"`:
			c.add(sat+".Effect", "must be Allow or Deny")
		}
	}
}

// validatePolicy checks an identity policy strictly: the keys IAM knows, and what the
// emulator's evaluator relies on.
func validatePolicy(c *checker, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		c.add("controllerPolicy", "must be a policy document, a mapping with Version and Statement: %v", err)
		return
	}
	for k := range doc {
		if k != "Version" && k != "Statement" && k != "Id" {
			c.add("controllerPolicy."+k, "is not a key of an IAM policy document (Version, Id, Statement)")
		}
	}
	if v, ok := doc["Version"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte(`"2012-10-17"`)) && !bytes.Equal(bytes.TrimSpace(v), []byte(`"2008-10-17"`)) {
		c.add("controllerPolicy.Version", "must be \"2012-10-17\"")
	}
	st := bytes.TrimSpace(doc["Statement"])
	if len(st) == 0 {
		c.add("controllerPolicy.Statement", "is required: the policy's statements")
		return
	}
	var statements []map[string]json.RawMessage
	if st[0] == '{' {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(st, &one); err != nil {
			c.add("controllerPolicy.Statement", "%v", err)
			return
		}
		statements = append(statements, one)
	} else if err := json.Unmarshal(st, &statements); err != nil {
		c.add("controllerPolicy.Statement", "must be a statement or a list of statements: %v", err)
		return
	}
	for i, st := range statements {
		validateStatement(c, fmt.Sprintf("controllerPolicy.Statement[%d]", i), st)
	}
}

// validateStatement checks one statement of an identity policy.
func validateStatement(c *checker, at string, s map[string]json.RawMessage) {
	known := []string{"Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition"}
	for k := range s {
		if k == "Principal" || k == "NotPrincipal" {
			c.add(at+"."+k, "an identity policy has no %s (that belongs in a trust or resource policy)", k)
		} else if !slices.Contains(known, k) {
			c.add(at+"."+k, "is not a key of a policy statement (%s)", oneOf(known...))
		}
	}
	one, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]json.RawMessage{s}})
	if _, err := policy.Parse(string(one)); err != nil {
		msg := strings.TrimPrefix(err.Error(), "statement 0: ")
		field := ""
		for _, key := range []string{"Effect", "Action", "Resource"} {
			if strings.Contains(msg, key) {
				field = "." + key
				break
			}
		}
		if field == "" && (strings.Contains(msg, "operator") || strings.Contains(msg, "condition")) {
			field = ".Condition"
		}
		c.add(at+field, "%s", msg)
	}
}

func (f *File) validateInstanceProfiles(c *checker, roles map[string]role) {
	acct := f.Cluster.AccountID
	seen := map[string]bool{}
	for i, ip := range f.InstanceProfiles {
		at := fmt.Sprintf("instanceProfiles[%d]", i)
		name := ip.InstanceProfileName
		if ip.Path != "" && !iamPath.MatchString(ip.Path) {
			c.add(at+".path", "%q is not an IAM path: it starts and ends with /", ip.Path)
		}
		if ip.ARN != "" {
			m := profileARN.FindStringSubmatch(ip.ARN)
			switch {
			case m == nil:
				c.add(at+".arn", "%q is not an instance profile ARN such as arn:aws:iam::%s:instance-profile/NAME", ip.ARN, acct)
			case m[1] != acct:
				c.add(at+".arn", "the instance profile is in account %s, not the cluster's %s (cluster.accountId)", m[1], acct)
			case name != "" && m[3] != name:
				c.add(at+".arn", "names instance profile %s but instanceProfileName is %s", m[3], name)
			case ip.Path != "" && m[2] != ip.Path:
				c.add(at+".arn", "has path %s but path is %s", m[2], ip.Path)
			default:
				name = m[3]
			}
		}
		switch {
		case name == "":
			c.add(at+".instanceProfileName", "is required (or arn)")
		case !profileName.MatchString(name):
			c.add(at+".instanceProfileName", "%q is not an instance profile name: letters, digits and +=,.@_-", name)
		case seen[name]:
			c.add(at+".instanceProfileName", "instance profile %s is listed twice", name)
		}
		seen[name] = true
		if len(ip.Roles) > 1 {
			c.add(at+".roles", "holds %d roles; an instance profile holds at most one", len(ip.Roles))
		}
		for j, arn := range ip.Roles {
			checkRoleRef(c, fmt.Sprintf("%s.roles[%d]", at, j), arn, roles, true)
		}
	}
}

// checkRoleRef checks that arn names a role of the world; exact asks for its path too.
func checkRoleRef(c *checker, at, arn string, roles map[string]role, exact bool) {
	m := roleARN.FindStringSubmatch(arn)
	if m == nil {
		c.add(at, "%q is not an IAM role ARN", arn)
		return
	}
	r, ok := roles[m[3]]
	switch {
	case !ok:
		c.add(at, "role %s does not exist in this world; add it to nodeRoles or roles (or name controllerRole)", m[3])
	case exact && r.arn != arn:
		c.add(at, "role %s is %s (its path is part of its ARN)", m[3], r.arn)
	}
}

func (f *File) validateAccessEntries(c *checker, roles, users map[string]role) {
	types := []string{state.AccessEntryStandard, state.AccessEntryEC2Linux, state.AccessEntryEC2Windows, state.AccessEntryFargateLinux, state.AccessEntryHybridLinux}
	seen := map[string]string{}
	for i := range f.AccessEntries {
		e := &f.AccessEntries[i]
		at := fmt.Sprintf("accessEntries[%d]", i)
		if e.ClusterName == "" {
			e.ClusterName = f.Cluster.Name
		}
		if e.ClusterName != f.Cluster.Name {
			c.add(at+".clusterName", "the entry is for cluster %s, but the world's cluster is %s (cluster.name)", e.ClusterName, f.Cluster.Name)
		}
		if e.Type == "" {
			e.Type = state.AccessEntryStandard
		}
		if !slices.Contains(types, e.Type) {
			c.add(at+".type", "%q is not an access entry type; use one of %s", e.Type, oneOf(types...))
			continue
		}
		if f.checkPrincipal(c, at+".principalArn", e, roles, users) {
			// EKS keeps the principal, not the spelling of its ARN: a role with and without its
			// path is one principal.
			id := principalID(e.PrincipalARN)
			if first, dup := seen[id]; dup {
				c.add(at+".principalArn", "a cluster has one access entry per principal; %s has another at %s", e.PrincipalARN, first)
			} else {
				seen[id] = at
			}
		}
		f.validateEntryFields(c, at, e)
		for j, p := range e.AccessPolicies {
			validateAccessPolicy(c, fmt.Sprintf("%s.accessPolicies[%d]", at, j), p)
		}
	}
}

// principalID is a role's or user's ARN without its path, which EKS tells principals apart by.
func principalID(arn string) string {
	if m := roleARN.FindStringSubmatch(arn); m != nil {
		return "arn:aws:iam::" + m[1] + ":role/" + m[3]
	}
	if m := userARN.FindStringSubmatch(arn); m != nil {
		return "arn:aws:iam::" + m[1] + ":user/" + m[3]
	}
	return arn
}

// checkPrincipal checks an entry's principal as EKS does: an IAM role or user, a role of the
// cluster's account for the node types, and, when the world lists it, with the path the world
// gives it (an ARN without a path names it too). A principal of the cluster's account that the
// world does not list is one the world creates (see implicitPrincipals); one of another account
// is let in as EKS lets it in, but not created. ok is false when the ARN cannot be read.
func (f *File) checkPrincipal(c *checker, at string, e *AccessEntry, roles, users map[string]role) bool {
	acct := f.Cluster.AccountID
	arn := e.PrincipalARN
	rm, um := roleARN.FindStringSubmatch(arn), userARN.FindStringSubmatch(arn)
	switch {
	case arn == "":
		c.add(at, "is required: the IAM role or user the entry lets in")
		return false
	case strings.HasPrefix(arn, "arn:aws:sts::"):
		c.add(at, "%q is a session, which EKS refuses; name its role (arn:aws:iam::ACCOUNT:role/NAME)", arn)
		return false
	case rm == nil && um == nil:
		c.add(at, "%q is not an IAM role or user ARN such as arn:aws:iam::%s:role/NAME or arn:aws:iam::%s:user/NAME", arn, acct, acct)
		return false
	}
	node := e.Type != state.AccessEntryStandard
	switch {
	case node && um != nil:
		c.add(at, "an entry of type %s lets nodes in, by their role; %s is a user: use type STANDARD or a node role", e.Type, arn)
		return true
	case node && rm[1] != acct:
		c.add(at, "an entry of type %s needs a role of the cluster's account %s (cluster.accountId), not of %s", e.Type, acct, rm[1])
		return true
	}
	known, m, kind := roles, rm, "role"
	if um != nil {
		known, m, kind = users, um, "user"
	}
	if m[1] != acct {
		return true
	}
	if p, ok := known[m[3]]; ok && m[2] != "/" && p.arn != arn {
		c.add(at, "%s %s is %s in this world (a path is part of the ARN); name it so, or without its path", kind, m[3], p.arn)
	}
	return true
}

// validateEntryFields checks what an entry of its type may set, and its ARN. A node type may
// repeat the username and groups EKS assigns it (describe-access-entry prints them) but set
// nothing else.
func (f *File) validateEntryFields(c *checker, at string, e *AccessEntry) {
	if e.Type != state.AccessEntryStandard {
		username, groups := state.DefaultAccessEntryIdentity(e.PrincipalARN, e.Type)
		if e.Username != "" && e.Username != username {
			c.add(at+".username", "EKS assigns an entry of type %s the username %s; remove username or give that", e.Type, username)
		}
		if len(e.KubernetesGroups) > 0 && !sameSet(e.KubernetesGroups, groups) {
			c.add(at+".kubernetesGroups", "EKS assigns an entry of type %s the groups [%s]; remove kubernetesGroups or give those", e.Type, oneOf(groups...))
		}
		if len(e.AccessPolicies) > 0 {
			c.add(at+".accessPolicies", "access policies can only be associated with STANDARD entries, not %s", e.Type)
		}
	} else {
		for j, g := range e.KubernetesGroups {
			if strings.HasPrefix(g, "system:") {
				c.add(fmt.Sprintf("%s.kubernetesGroups[%d]", at, j), "EKS refuses groups starting with system: (%s) on access entries; use an access policy or a non-system group", g)
			}
		}
		for _, p := range []string{"system:", "eks:", "aws:", "amazon:", "iam:"} {
			if strings.HasPrefix(e.Username, p) {
				c.add(at+".username", "EKS refuses usernames starting with %s on STANDARD entries; choose another, or leave it out for the one EKS assigns", p)
			}
		}
	}
	if e.AccessEntryARN != "" {
		prefix := fmt.Sprintf("arn:aws:eks:%s:%s:access-entry/%s/", f.Cluster.Region, f.Cluster.AccountID, f.Cluster.Name)
		if !strings.HasPrefix(e.AccessEntryARN, prefix) || len(e.AccessEntryARN) == len(prefix) {
			c.add(at+".accessEntryArn", "%q is not an access entry ARN of this cluster: it starts with %s", e.AccessEntryARN, prefix)
		}
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// validateAccessPolicy checks an access policy association.
func validateAccessPolicy(c *checker, at string, p AccessPolicy) {
	if !eksPolicy.MatchString(p.PolicyARN) {
		c.add(at+".policyArn", "%q is not an EKS access policy ARN such as arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy", p.PolicyARN)
	}
	switch p.AccessScope.Type {
	case "cluster":
		if len(p.AccessScope.Namespaces) > 0 {
			c.add(at+".accessScope.namespaces", "a cluster scope has no namespaces; use type namespace")
		}
	case "namespace":
		if len(p.AccessScope.Namespaces) == 0 {
			c.add(at+".accessScope.namespaces", "a namespace scope needs at least one namespace")
		}
		for k, ns := range p.AccessScope.Namespaces {
			if !namespaceName.MatchString(ns) {
				c.add(fmt.Sprintf("%s.accessScope.namespaces[%d]", at, k), "%q is not a namespace name", ns)
			}
		}
	default:
		c.add(at+".accessScope.type", "%q is not a scope type; use cluster or namespace", p.AccessScope.Type)
	}
}

func (f *File) validateNetwork(c *checker, region *catalog.Region) {
	cl := f.Cluster
	vpc, vpcErr := netip.ParsePrefix(cl.VPCCIDR)
	if len(f.Subnets) > 0 && cl.VPCCIDR == "" {
		c.add("cluster.vpcCidr", "is required when subnets are listed: the VPC's CIDR, which every subnet lies in")
	}
	if f.Subnets == nil && vpcErr == nil && vpc.Bits() > 24 {
		c.add("cluster.vpcCidr", "%s is too small to hold the default subnets (one per zone, carved from the VPC); list subnets, or use a /24 or larger", cl.VPCCIDR)
	}
	var taken []placedSubnet
	ids := map[string]bool{}
	for i := range f.Subnets {
		s := &f.Subnets[i]
		at := fmt.Sprintf("subnets[%d]", i)
		switch {
		case !subnetID.MatchString(s.SubnetID):
			c.add(at+".subnetId", "%q is not a subnet id such as subnet-0123456789abcdef0", s.SubnetID)
		case ids[s.SubnetID]:
			c.add(at+".subnetId", "subnet %s is listed twice", s.SubnetID)
		}
		ids[s.SubnetID] = true
		f.checkPrinted(c, at, "subnet", s.SubnetID, s.SubnetARN, "subnetArn", s.OwnerID)
		if s.IPv6Native {
			c.add(at+".ipv6Native", "IPv6-only subnets are not emulated; list the cluster's IPv4 subnets")
		}
		checkVPC(c, at, s.VPCID, cl.VPCID)
		checkZone(c, at, s.AvailabilityZone, region)
		if p, ok := checkSubnetCIDR(c, at, s, cl.VPCCIDR, taken); ok {
			taken = append(taken, placedSubnet{at: at, prefix: p})
		}
	}
	f.validateSecurityGroups(c)
}

// placedSubnet is a subnet's CIDR and the path of the subnet.
type placedSubnet struct {
	at     string
	prefix netip.Prefix
}

// checkSubnetCIDR checks a subnet's CIDR: well formed, inside the VPC, overlapping none of
// taken, with no more free addresses than it has. ok is false when the CIDR cannot be read.
func checkSubnetCIDR(c *checker, at string, s *Subnet, vpcCIDR string, taken []placedSubnet) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s.CIDRBlock)
	if err != nil || !p.Addr().Is4() || p != p.Masked() || p.Bits() < 16 || p.Bits() > 28 {
		c.add(at+".cidrBlock", "%q is not a subnet CIDR: an IPv4 network from /16 to /28 such as 10.0.32.0/19", s.CIDRBlock)
		return p, false
	}
	if vpc, err := netip.ParsePrefix(vpcCIDR); err == nil && (!vpc.Contains(p.Addr()) || p.Bits() < vpc.Bits()) {
		c.add(at+".cidrBlock", "%s is outside the VPC's CIDR %s (cluster.vpcCidr)", s.CIDRBlock, vpcCIDR)
	}
	for _, o := range taken {
		if o.prefix.Overlaps(p) {
			c.add(at+".cidrBlock", "%s overlaps %s of %s", s.CIDRBlock, o.prefix, o.at)
		}
	}
	usable := int64(1)<<(32-p.Bits()) - 5
	if n := s.AvailableIPAddressCount; n != nil && (*n < 0 || int64(*n) > usable) {
		c.add(at+".availableIpAddressCount", "%d is not between 0 and %d, the usable addresses of %s", *n, usable, s.CIDRBlock)
	}
	return p, true
}

func (f *File) validateSecurityGroups(c *checker) {
	ids := map[string]bool{}
	names := map[string]bool{}
	for i, g := range f.SecurityGroups {
		at := fmt.Sprintf("securityGroups[%d]", i)
		switch {
		case !groupID.MatchString(g.GroupID):
			c.add(at+".groupId", "%q is not a security group id such as sg-0123456789abcdef0", g.GroupID)
		case ids[g.GroupID]:
			c.add(at+".groupId", "security group %s is listed twice", g.GroupID)
		}
		ids[g.GroupID] = true
		if g.GroupName != "" && names[g.GroupName] {
			c.add(at+".groupName", "a VPC has one security group named %s", g.GroupName)
		}
		names[g.GroupName] = true
		f.checkPrinted(c, at, "security-group", g.GroupID, g.SecurityGroupARN, "securityGroupArn", g.OwnerID)
		checkVPC(c, at, g.VPCID, f.Cluster.VPCID)
	}
}

// checkPrinted checks the ARN and owner EC2 prints for a subnet or security group, which the
// world ignores, against the resource they are pasted with: the ARN names this resource in the
// cluster's region, owned by ownerId (another account's for a subnet shared with the cluster's).
func (f *File) checkPrinted(c *checker, at, kind, id, arn, arnField, owner string) {
	if owner != "" && !accountID.MatchString(owner) {
		c.add(at+".ownerId", "%q is not an AWS account id: 12 digits, quoted in YAML", owner)
		return
	}
	if owner == "" {
		owner = f.Cluster.AccountID
	}
	if want := fmt.Sprintf("arn:aws:ec2:%s:%s:%s/%s", f.Cluster.Region, owner, kind, id); arn != "" && arn != want {
		c.add(at+"."+arnField, "%s does not name this %s, %s; it was printed for another one, or leave it out", arn, strings.ReplaceAll(kind, "-", " "), want)
	}
}

// checkZone checks that a subnet's zone is one of the cluster region's.
func checkZone(c *checker, at, zone string, region *catalog.Region) {
	if region == nil || slices.ContainsFunc(region.Zones, func(z catalog.Zone) bool { return z.Name == zone }) {
		return
	}
	zones := make([]string, 0, len(region.Zones))
	for _, z := range region.Zones {
		zones = append(zones, z.Name)
	}
	c.add(at+".availabilityZone", "%q is not a zone of %s (cluster.region); its zones are %s", zone, region.Name, oneOf(zones...))
}

// checkVPC checks that a subnet or group is in the cluster's VPC, the one VPC of the world.
func checkVPC(c *checker, at, vpc, clusterVPC string) {
	switch {
	case vpc == "":
	case clusterVPC == "":
		c.add(at+".vpcId", "names VPC %s but cluster.vpcId is not set; set cluster.vpcId to it", vpc)
	case vpc != clusterVPC:
		c.add(at+".vpcId", "%s is not the cluster's VPC %s (cluster.vpcId); the world has one VPC", vpc, clusterVPC)
	}
}

func (f *File) validateImages(c *checker) {
	ids := map[string]bool{}
	for i, img := range f.Images {
		at := fmt.Sprintf("images[%d]", i)
		switch {
		case !imageID.MatchString(img.ImageID):
			c.add(at+".imageId", "%q is not an AMI id such as ami-0123456789abcdef0", img.ImageID)
		case ids[img.ImageID]:
			c.add(at+".imageId", "image %s is listed twice", img.ImageID)
		}
		ids[img.ImageID] = true
		if n := len(img.Name); n < 3 || n > 128 {
			c.add(at+".name", "is required: the AMI's name, 3 to 128 characters")
		}
		if img.OwnerID != "" && !accountID.MatchString(img.OwnerID) {
			c.add(at+".ownerId", "%q is not an AWS account id: 12 digits, quoted in YAML", img.OwnerID)
		}
		checkEnum(c, at+".architecture", img.Architecture, "x86_64", "arm64")
		if img.State != "" {
			checkEnum(c, at+".state", img.State, "available", "pending", "failed", "deregistered", "disabled", "error", "invalid", "transient")
		}
		if img.CreationDate != "" {
			if _, err := time.Parse(time.RFC3339, img.CreationDate); err != nil {
				c.add(at+".creationDate", "%q is not an RFC 3339 time such as 2025-06-01T00:00:00.000Z", img.CreationDate)
			}
		}
		if img.RootDeviceType != "" {
			checkEnum(c, at+".rootDeviceType", img.RootDeviceType, "ebs", "instance-store")
		}
		if img.VirtualizationType != "" {
			checkEnum(c, at+".virtualizationType", img.VirtualizationType, "hvm", "paravirtual")
		}
		if img.RootDeviceName != "" && !strings.HasPrefix(img.RootDeviceName, "/dev/") {
			c.add(at+".rootDeviceName", "%q is not a device name such as /dev/xvda", img.RootDeviceName)
		}
		if img.Bootstrap != "" {
			checkEnum(c, at+".bootstrap", img.Bootstrap, BootstrapAL2, BootstrapNodeadm, BootstrapBottlerocket)
		}
		if img.KubernetesVersion != "" && !k8sVersion.MatchString(img.KubernetesVersion) {
			c.add(at+".kubernetesVersion", "%q is not a Kubernetes minor version such as \"1.31\"", img.KubernetesVersion)
		}
	}
}

func checkEnum(c *checker, at, value string, allowed ...string) {
	if !slices.Contains(allowed, value) {
		if value == "" {
			c.add(at, "is required; use one of %s", oneOf(allowed...))
			return
		}
		hint := ""
		if value == "amd64" || value == "aarch64" {
			hint = " (EC2 names the architectures x86_64 and arm64)"
		}
		c.add(at, "%q is not one of %s%s", value, oneOf(allowed...), hint)
	}
}
