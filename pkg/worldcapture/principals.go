package worldcapture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/joinerhq/joiner/awsemu/world"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

var (
	roleARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:iam::([0-9]{12}):role(/.*/|/)([\w+=,.@-]{1,64})$`)
	userARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:iam::([0-9]{12}):user(/.*/|/)([\w+=,.@-]{1,64})$`)
)

// roleName is the name of a role reference: a name, path/name, or ARN.
func roleName(ref string) string {
	if m := roleARNPattern.FindStringSubmatch(ref); m != nil {
		return m[3]
	}
	return ref[strings.LastIndex(ref, "/")+1:]
}

// role is an IAM role as GetRole and ListAttachedRolePolicies read it.
type role struct {
	name, path, arn, description string
	// trust is the trust policy document, decoded.
	trust   string
	tags    map[string]string
	managed []string
	inline  []string
}

// errNoSuchEntity is what readRole and readUser return for a principal that does not exist.
var errNoSuchEntity = errors.New("no such entity")

// readRole reads a role, noting under subject what fails; the error is errNoSuchEntity when the
// role does not exist, another when GetRole failed. It is how every principal that is a role
// becomes world fields (worldRole).
func (c *capturer) readRole(ctx context.Context, subject, name string) (role, error) {
	out, err := c.api.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err != nil {
		if errorCode(err) == "NoSuchEntity" {
			c.note(subject, "role %s does not exist; left out", name)
			return role{}, errNoSuchEntity
		}
		c.failed(subject, "iam:GetRole", err)
		return role{}, err
	}
	r := role{name: aws.ToString(out.Role.RoleName), path: aws.ToString(out.Role.Path), arn: aws.ToString(out.Role.Arn),
		description: aws.ToString(out.Role.Description), trust: decodeDocument(aws.ToString(out.Role.AssumeRolePolicyDocument))}
	for _, t := range out.Role.Tags {
		if r.tags == nil {
			r.tags = map[string]string{}
		}
		r.tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	attached := iam.NewListAttachedRolePoliciesPaginator(c.api.IAM, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
	for attached.HasMorePages() {
		page, err := attached.NextPage(ctx)
		if err != nil {
			c.failed(subject+".managedPolicies", "iam:ListAttachedRolePolicies", err)
			break
		}
		for _, p := range page.AttachedPolicies {
			r.managed = append(r.managed, aws.ToString(p.PolicyArn))
		}
	}
	inline := iam.NewListRolePoliciesPaginator(c.api.IAM, &iam.ListRolePoliciesInput{RoleName: aws.String(name)})
	for inline.HasMorePages() {
		page, err := inline.NextPage(ctx)
		if err != nil {
			c.failed(subject, "iam:ListRolePolicies", err)
			break
		}
		r.inline = append(r.inline, page.PolicyNames...)
	}
	return r, nil
}

// statements splits a policy's Statement, one statement or a list.
func statements(raw json.RawMessage) []json.RawMessage {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	if len(raw) > 0 {
		return []json.RawMessage{raw}
	}
	return nil
}

var (
	servicePrincipal = regexp.MustCompile(`^[a-z0-9.-]+\.amazonaws\.com$`)
	accountRoot      = regexp.MustCompile(`^arn:aws:iam::[0-9]{12}:root$`)
)

// trustPrincipal is the one principal a trust policy lets assume the role when the policy is
// exactly the one the world writes for assumeRolePolicyPrincipal (one statement allowing
// sts:AssumeRole to one service, or to one role or account root, with no condition); ok is false
// for any other policy, which the world holds as assumeRolePolicyDocument.
func trustPrincipal(doc string) (string, bool) {
	var policy struct {
		Statement []struct {
			Principal map[string]string
		}
	}
	if json.Unmarshal([]byte(doc), &policy) != nil || len(policy.Statement) != 1 || len(policy.Statement[0].Principal) != 1 {
		return "", false
	}
	for kind, p := range policy.Statement[0].Principal {
		switch {
		case kind == "Service" && servicePrincipal.MatchString(p):
		case kind == "AWS" && (accountRoot.MatchString(p) || roleARNPattern.MatchString(p) && strings.HasPrefix(p, "arn:aws:")):
		default:
			return "", false
		}
		simple, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{
			map[string]any{"Effect": "Allow", "Principal": map[string]string{kind: p}, "Action": "sts:AssumeRole"}}})
		if sameJSON(doc, string(simple)) {
			return p, true
		}
	}
	return "", false
}

// sameJSON reports whether two JSON documents hold the same values, whatever the order of their
// keys.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// worldRole is the world's entry of a role, in nodeRoles or roles. Its trust policy is written as
// assumeRolePolicyPrincipal when that is what the world turns back into the same policy, else as
// the document itself, so that seeding the world gives the role the trust it has.
func (c *capturer) worldRole(subject string, r role) world.Role {
	wr := world.Role{Name: r.name, ManagedPolicies: r.managed, Description: r.description, Tags: r.tags}
	if r.path != "/" {
		wr.Path = r.path
	}
	if p, ok := trustPrincipal(r.trust); ok {
		wr.AssumeRolePolicyPrincipal = p
	} else if doc, err := compactJSON(r.trust); err == nil {
		wr.AssumeRolePolicyDocument = doc
	} else {
		c.note(subject+".assumeRolePolicyDocument", "the trust policy is not JSON (%v); left out, so the world's role trusts ec2.amazonaws.com", err)
	}
	if len(r.inline) > 0 {
		c.note(subject, "inline policies %s are not represented: the world file holds a role's managed policies only", strings.Join(r.inline, ", "))
	}
	return wr
}

func compactJSON(doc string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(doc)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// readUser reads a user (iam:GetUser, iam:ListAttachedUserPolicies) into the world's users,
// noting under subject what fails; the error is errNoSuchEntity when the user does not exist.
// A user's inline policies and groups are not read: the world file holds neither.
func (c *capturer) readUser(ctx context.Context, subject, name string) error {
	out, err := c.api.IAM.GetUser(ctx, &iam.GetUserInput{UserName: aws.String(name)})
	if err != nil {
		if errorCode(err) == "NoSuchEntity" {
			c.note(subject, "user %s does not exist; left out", name)
			return errNoSuchEntity
		}
		c.failed(subject, "iam:GetUser", err)
		return err
	}
	u := world.User{UserName: aws.ToString(out.User.UserName)}
	if path := aws.ToString(out.User.Path); path != "/" {
		u.Path = path
	}
	for _, t := range out.User.Tags {
		if u.Tags == nil {
			u.Tags = map[string]string{}
		}
		u.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	attached := iam.NewListAttachedUserPoliciesPaginator(c.api.IAM, &iam.ListAttachedUserPoliciesInput{UserName: aws.String(name)})
	for attached.HasMorePages() {
		page, err := attached.NextPage(ctx)
		if err != nil {
			c.failed(subject+".managedPolicies", "iam:ListAttachedUserPolicies", err)
			break
		}
		for _, p := range page.AttachedPolicies {
			u.ManagedPolicies = append(u.ManagedPolicies, aws.ToString(p.PolicyArn))
		}
	}
	c.userARNs[u.UserName] = aws.ToString(out.User.Arn)
	c.f.Users = append(c.f.Users, u)
	return nil
}

// readNodeRoles reads every node role found, once each, in the order found.
func (c *capturer) readNodeRoles(ctx context.Context) {
	for _, ref := range c.nodeRoleRefs {
		name := roleName(ref)
		if _, done := c.roleARNs[name]; done {
			continue
		}
		subject := "nodeRoles[" + name + "]"
		r, err := c.readRole(ctx, subject, name)
		if err != nil {
			continue
		}
		c.roleARNs[name] = r.arn
		c.f.NodeRoles = append(c.f.NodeRoles, c.worldRole(subject, r))
	}
	if c.f.NodeRoles == nil {
		// Left out, the world would have the demo's KarpenterNodeRole-CLUSTER.
		c.f.NodeRoles = []world.NodeRole{}
	}
}

// readControllerRole reads the controller's role and merges its policies into controllerPolicy.
func (c *capturer) readControllerRole(ctx context.Context) {
	ref := c.o.ControllerRole
	if ref == "" && c.o.Cluster != nil {
		ref = c.o.Cluster.ControllerRole
		if ref == "" {
			ref = c.podIdentityRole(ctx)
		}
	}
	if ref == "" && c.o.Cluster == nil {
		c.note("controllerRole", "not given, and the cluster's controller was not read; pass --controller-role ARN. The world keeps the default role, %s, allowed everything", world.DefaultControllerRole)
		return
	}
	if ref == "" {
		c.note("controllerRole", "not found (no IRSA annotation or EKS Pod Identity association on the controller's ServiceAccount); pass --controller-role ARN. The world keeps the default role, allowed everything")
		return
	}
	r, err := c.readRole(ctx, "controllerRole", roleName(ref))
	if err != nil {
		return
	}
	c.roleARNs[r.name] = r.arn
	c.f.ControllerRole = r.arn
	c.f.ControllerPolicy = c.controllerPolicy(ctx, r)
}

// podIdentityRole is the role of the controller ServiceAccount's EKS Pod Identity association.
func (c *capturer) podIdentityRole(ctx context.Context) string {
	sa := c.o.Cluster.ServiceAccount
	if sa.Name == "" {
		return ""
	}
	list, err := c.api.EKS.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{
		ClusterName: aws.String(c.o.ClusterName), Namespace: aws.String(sa.Namespace), ServiceAccount: aws.String(sa.Name)})
	if err != nil {
		c.failed("controllerRole", "eks:ListPodIdentityAssociations", err)
		return ""
	}
	if len(list.Associations) == 0 {
		return ""
	}
	out, err := c.api.EKS.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{
		ClusterName: aws.String(c.o.ClusterName), AssociationId: list.Associations[0].AssociationId})
	if err != nil {
		c.failed("controllerRole", "eks:DescribePodIdentityAssociation", err)
		return ""
	}
	return aws.ToString(out.Association.RoleArn)
}

// readAccessEntries reads the cluster's access entries and the principals they name (see
// principal).
func (c *capturer) readAccessEntries(ctx context.Context) {
	if c.f.Cluster.AuthenticationMode == "CONFIG_MAP" {
		c.f.AccessEntries = []world.AccessEntry{}
		return
	}
	cluster := aws.String(c.o.ClusterName)
	var principals []string
	pages := eks.NewListAccessEntriesPaginator(c.api.EKS, &eks.ListAccessEntriesInput{ClusterName: cluster})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			c.failed("accessEntries", "eks:ListAccessEntries", err)
			return
		}
		principals = append(principals, page.AccessEntries...)
	}
	entries := []world.AccessEntry{}
	for _, p := range principals {
		subject := "accessEntries[" + p + "]"
		out, err := c.api.EKS.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(p)})
		if err != nil {
			c.failed(subject, "eks:DescribeAccessEntry", err)
			continue
		}
		e, ok := c.accessEntry(ctx, subject, out.AccessEntry)
		if ok {
			entries = append(entries, e)
		}
	}
	c.f.AccessEntries = entries
}

// accessEntry is the world's entry of an EKS access entry; ok is false when the world cannot
// hold it (its principal is not an IAM role or user, or does not exist).
func (c *capturer) accessEntry(ctx context.Context, subject string, a *ekstypes.AccessEntry) (world.AccessEntry, bool) {
	e := world.AccessEntry{PrincipalARN: aws.ToString(a.PrincipalArn), Type: aws.ToString(a.Type),
		AccessEntryARN: aws.ToString(a.AccessEntryArn), Tags: a.Tags}
	if len(e.Tags) == 0 {
		e.Tags = nil
	}
	if !c.principal(ctx, subject, e.PrincipalARN, e.Type) {
		return e, false
	}
	if e.Type == "STANDARD" {
		// What EKS assigns when an entry gives no username is left out, so that seeding the
		// world assigns it again.
		if u := aws.ToString(a.Username); u != defaultUsername(e.PrincipalARN) {
			e.Username = u
		}
		e.KubernetesGroups = a.KubernetesGroups
		if len(e.KubernetesGroups) == 0 {
			e.KubernetesGroups = nil
		}
		e.AccessPolicies = c.accessPolicies(ctx, subject, e.PrincipalARN)
	}
	// Node entries' username and groups are EKS's (system:node:..., system:nodes): seeding
	// assigns them again.
	return e, true
}

// defaultUsername is the username EKS gives a STANDARD entry created without one: the role's
// assumed-role session (its path dropped), or the user's ARN.
func defaultUsername(principal string) string {
	if m := roleARNPattern.FindStringSubmatch(principal); m != nil {
		partition := strings.SplitN(principal, ":", 3)[1]
		return fmt.Sprintf("arn:%s:sts::%s:assumed-role/%s/{{SessionName}}", partition, m[1], m[3])
	}
	return principal
}

func (c *capturer) accessPolicies(ctx context.Context, subject, principal string) []world.AccessPolicy {
	var out []world.AccessPolicy
	pages := eks.NewListAssociatedAccessPoliciesPaginator(c.api.EKS, &eks.ListAssociatedAccessPoliciesInput{
		ClusterName: aws.String(c.o.ClusterName), PrincipalArn: aws.String(principal)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			c.failed(subject+".accessPolicies", "eks:ListAssociatedAccessPolicies", err)
			return out
		}
		for _, p := range page.AssociatedAccessPolicies {
			ap := world.AccessPolicy{PolicyARN: aws.ToString(p.PolicyArn)}
			if p.AccessScope != nil {
				ap.AccessScope = world.AccessScope{Type: string(p.AccessScope.Type), Namespaces: p.AccessScope.Namespaces}
				if len(ap.AccessScope.Namespaces) == 0 {
					ap.AccessScope.Namespaces = nil
				}
			}
			out = append(out, ap)
		}
	}
	return out
}

// principal makes sure the world holds the IAM principal an access entry names and reports
// whether the entry is kept. The role of an EC2 node entry is a node role (readNodeRoles reads
// it); the controller's role and node roles are held already; any other role of the account is
// read into roles, and a user into users. A principal of another account, which a STANDARD entry
// may name, is kept as the entry names it, not read. An entry whose principal does not exist is
// left out; one whose principal could not be read is kept, and the world creates the principal
// from the entry (docs/world.md).
func (c *capturer) principal(ctx context.Context, subject, arn, typ string) bool {
	um, rm := userARNPattern.FindStringSubmatch(arn), roleARNPattern.FindStringSubmatch(arn)
	switch {
	case um != nil:
		if c.otherAccount(um[1]) {
			return true
		}
		if _, held := c.userARNs[um[3]]; held {
			return true
		}
		err := c.readUser(ctx, "users["+um[3]+"]", um[3])
		return !errors.Is(err, errNoSuchEntity)
	case rm == nil:
		c.note(subject, "principal %s is neither an IAM role nor a user; left out", arn)
		return false
	case c.otherAccount(rm[1]):
		return true
	}
	name := rm[3]
	if roleName(c.f.ControllerRole) == name && c.f.ControllerRole != "" {
		return true
	}
	isNode := slices.ContainsFunc(c.nodeRoleRefs, func(ref string) bool { return roleName(ref) == name })
	if typ == "EC2_LINUX" || typ == "EC2_WINDOWS" || isNode {
		if !isNode {
			c.nodeRoleRefs = append(c.nodeRoleRefs, arn)
		}
		return true
	}
	if _, held := c.roleARNs[name]; held {
		return true
	}
	subject = "roles[" + name + "]"
	r, err := c.readRole(ctx, subject, name)
	if err != nil {
		return !errors.Is(err, errNoSuchEntity)
	}
	c.roleARNs[name] = r.arn
	c.f.Roles = append(c.f.Roles, c.worldRole(subject, r))
	return true
}

// otherAccount reports whether account is not the cluster's (when the capture knows it).
func (c *capturer) otherAccount(account string) bool {
	return c.account != "" && account != c.account
}

// readInstanceProfiles reads the profiles the classes name and those holding a node role, except
// the ones Joiner or Karpenter created for a class (tagged karpenter.k8s.aws/ec2nodeclass),
// which the controller creates again.
func (c *capturer) readInstanceProfiles(ctx context.Context, named []string) {
	names := slices.Clone(named)
	pages := iam.NewListInstanceProfilesPaginator(c.api.IAM, &iam.ListInstanceProfilesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			c.failed("instanceProfiles", "iam:ListInstanceProfiles", err)
			break
		}
		for _, p := range page.InstanceProfiles {
			for _, r := range p.Roles {
				if _, ok := c.roleARNs[aws.ToString(r.RoleName)]; ok && !slices.Contains(names, aws.ToString(p.InstanceProfileName)) {
					names = append(names, aws.ToString(p.InstanceProfileName))
				}
			}
		}
	}
	profiles := []world.InstanceProfile{}
	for _, name := range names {
		subject := "instanceProfiles[" + name + "]"
		out, err := c.api.IAM.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if err != nil {
			c.failed(subject, "iam:GetInstanceProfile", err)
			continue
		}
		p := out.InstanceProfile
		ip := world.InstanceProfile{InstanceProfileName: aws.ToString(p.InstanceProfileName), Tags: map[string]string{}}
		if path := aws.ToString(p.Path); path != "/" {
			ip.Path = path
		}
		for _, t := range p.Tags {
			ip.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		if _, created := ip.Tags[awsv1.TagKeyNodeClass]; created && !slices.Contains(named, name) {
			continue
		}
		if len(ip.Tags) == 0 {
			ip.Tags = nil
		}
		for _, r := range p.Roles {
			rn := aws.ToString(r.RoleName)
			if _, ok := c.roleARNs[rn]; !ok {
				// A class names this profile: its role is a node role.
				if r, err := c.readRole(ctx, "nodeRoles["+rn+"]", rn); err == nil {
					c.roleARNs[rn] = r.arn
					c.nodeRoleRefs = append(c.nodeRoleRefs, r.arn)
					c.f.NodeRoles = append(c.f.NodeRoles, c.worldRole("nodeRoles["+rn+"]", r))
				} else {
					continue
				}
			}
			ip.Roles = append(ip.Roles, aws.ToString(r.Arn))
		}
		profiles = append(profiles, ip)
	}
	c.f.InstanceProfiles = profiles
}
