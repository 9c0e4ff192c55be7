package worldcapture

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
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
	name, path, arn string
	trust           []string
	managed         []string
	inline          []string
}

// readRole reads a role, noting under subject what fails; ok is false when GetRole failed.
// It is how every principal that is a role becomes world fields (nodeRole, and the general
// roles list once the world file has one).
func (c *capturer) readRole(ctx context.Context, subject, name string) (role, bool) {
	out, err := c.api.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err != nil {
		if errorCode(err) == "NoSuchEntity" {
			c.note(subject, "role %s does not exist; left out", name)
			return role{}, false
		}
		c.failed(subject, "iam:GetRole", err)
		return role{}, false
	}
	r := role{name: aws.ToString(out.Role.RoleName), path: aws.ToString(out.Role.Path), arn: aws.ToString(out.Role.Arn)}
	r.trust = trustPrincipals(aws.ToString(out.Role.AssumeRolePolicyDocument))
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
	return r, true
}

// trustPrincipals are the principals (services and ARNs) a trust policy document, as IAM returns
// it (URL-encoded), lets assume the role.
func trustPrincipals(encoded string) []string {
	doc, err := url.QueryUnescape(encoded)
	if err != nil {
		doc = encoded
	}
	var policy struct {
		Statement json.RawMessage
	}
	if json.Unmarshal([]byte(doc), &policy) != nil {
		return nil
	}
	var out []string
	for _, st := range statements(policy.Statement) {
		var s struct {
			Effect    string
			Principal map[string]json.RawMessage
		}
		if json.Unmarshal(st, &s) != nil || s.Effect != "Allow" {
			continue
		}
		for _, kind := range []string{"Service", "AWS", "Federated"} {
			out = append(out, stringOrList(s.Principal[kind])...)
		}
	}
	return out
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

func stringOrList(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(raw, &list)
	return list
}

// nodeRole is the world's entry of a node role.
func (c *capturer) nodeRole(subject string, r role) world.NodeRole {
	nr := world.NodeRole{Name: r.name, ManagedPolicies: r.managed}
	if r.path != "/" {
		nr.Path = r.path
	}
	if len(r.trust) > 0 {
		nr.AssumeRolePolicyPrincipal = r.trust[0]
	}
	if len(r.trust) > 1 {
		c.note(subject+".assumeRolePolicyPrincipal", "the trust policy lets %s assume the role; the world holds one principal, %s", strings.Join(r.trust, ", "), r.trust[0])
	}
	if len(r.inline) > 0 {
		c.note(subject, "inline policies %s are not represented: the world file holds a node role's managed policies only", strings.Join(r.inline, ", "))
	}
	return nr
}

// readNodeRoles reads every node role found, once each, in the order found.
func (c *capturer) readNodeRoles(ctx context.Context) {
	for _, ref := range c.nodeRoleRefs {
		name := roleName(ref)
		if _, done := c.roleARNs[name]; done {
			continue
		}
		subject := "nodeRoles[" + name + "]"
		r, ok := c.readRole(ctx, subject, name)
		if !ok {
			continue
		}
		c.roleARNs[name] = r.arn
		c.f.NodeRoles = append(c.f.NodeRoles, c.nodeRole(subject, r))
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
	if ref == "" {
		c.note("controllerRole", "not found (no IRSA annotation or EKS Pod Identity association on the controller's ServiceAccount); pass --controller-role ARN. The world keeps the default role, allowed everything")
		return
	}
	r, ok := c.readRole(ctx, "controllerRole", roleName(ref))
	if !ok {
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

// readAccessEntries reads the cluster's access entries. A node entry's role is a node role; a
// STANDARD entry's principal must be a role or user the world holds (see principal).
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
// hold its principal.
func (c *capturer) accessEntry(ctx context.Context, subject string, a *ekstypes.AccessEntry) (world.AccessEntry, bool) {
	e := world.AccessEntry{PrincipalARN: aws.ToString(a.PrincipalArn), Type: aws.ToString(a.Type),
		AccessEntryARN: aws.ToString(a.AccessEntryArn), Tags: a.Tags}
	if len(e.Tags) == 0 {
		e.Tags = nil
	}
	if !c.principal(subject, e.PrincipalARN, e.Type != "STANDARD") {
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
// whether it does. A node entry's role is a node role; the controller's role and node roles are
// held already; a user needs nothing more. Any other role has no place in the current world file.
//
// Once the world file lists roles and users of their own, this is where a role that is neither
// a node's nor the controller's is read (readRole) and added to that list, and a user read and
// added to the users list.
func (c *capturer) principal(subject, arn string, node bool) bool {
	if userARNPattern.MatchString(arn) {
		return true
	}
	m := roleARNPattern.FindStringSubmatch(arn)
	if m == nil {
		c.note(subject, "principal %s is neither an IAM role nor a user; left out", arn)
		return false
	}
	name := m[3]
	if roleName(c.f.ControllerRole) == name && c.f.ControllerRole != "" {
		return true
	}
	if node || slices.ContainsFunc(c.nodeRoleRefs, func(ref string) bool { return roleName(ref) == name }) {
		if !slices.ContainsFunc(c.nodeRoleRefs, func(ref string) bool { return roleName(ref) == name }) {
			c.nodeRoleRefs = append(c.nodeRoleRefs, arn)
		}
		return true
	}
	c.note(subject, "role %s is neither a node role nor the controller's, and the world file holds no other roles yet; the entry is left out", name)
	return false
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
				if r, ok := c.readRole(ctx, "nodeRoles["+rn+"]", rn); ok {
					c.roleARNs[rn] = r.arn
					c.nodeRoleRefs = append(c.nodeRoleRefs, r.arn)
					c.f.NodeRoles = append(c.f.NodeRoles, c.nodeRole("nodeRoles["+rn+"]", r))
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
