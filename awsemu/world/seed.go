package world

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/state"
)

// defaultImageDate is the creation date of an image that gives none.
var defaultImageDate = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// SeedOptions returns base (the emulator's timings, the cluster endpoint and CA, the published
// Kubernetes versions and releases) with the world in place of the demo world. f must have been
// validated (Decode and Load do it).
func (f *File) SeedOptions(base state.SeedOptions) state.SeedOptions {
	o := base
	cl := f.Cluster
	o.ClusterName, o.AccountID, o.Region = cl.Name, cl.AccountID, cl.Region
	o.ClusterVersion, o.AuthenticationMode, o.ServiceIPv4CIDR = cl.KubernetesVersion, cl.AuthenticationMode, cl.ServiceIPv4CIDR
	o.VPCID, o.VPCCIDR, o.InterruptionQueue = cl.VPCID, cl.VPCCIDR, cl.InterruptionQueue
	m := roleARN.FindStringSubmatch(f.ControllerRole)
	o.ControllerRolePath, o.ControllerRole = m[2], m[3]
	o.ControllerAccessKey = f.ControllerAccessKeyID
	o.ControllerPolicy = ""
	if len(f.ControllerPolicy) > 0 {
		o.ControllerPolicy = string(f.ControllerPolicy)
	}
	o.NodeRole = "KarpenterNodeRole-" + cl.Name
	if f.NodeRoles != nil {
		o.NodeRoles = f.nodeRoles()
		if len(o.NodeRoles) > 0 {
			o.NodeRole = o.NodeRoles[0].Name
		}
	}
	o.Roles, o.Users = f.principals()
	if f.InstanceProfiles != nil {
		o.InstanceProfiles = f.instanceProfiles()
	}
	if f.AccessEntries != nil {
		o.AccessEntries = f.accessEntries()
	}
	if f.Subnets != nil {
		o.Subnets = f.subnets()
	}
	if f.SecurityGroups != nil {
		o.SecurityGroups = []state.SecurityGroup{}
		for _, g := range f.SecurityGroups {
			name := g.GroupName
			if name == "" {
				name = g.GroupID
			}
			o.SecurityGroups = append(o.SecurityGroups, state.SecurityGroup{ID: g.GroupID, Name: name, Description: g.Description, Tags: g.Tags})
		}
	}
	o.Images = f.images()
	return o
}

func (f *File) nodeRoles() []state.SeedRole {
	out := []state.SeedRole{}
	for _, nr := range f.NodeRoles {
		out = append(out, seedRole(nr))
	}
	return out
}

// seedRole is the role r describes.
func seedRole(r Role) state.SeedRole {
	out := state.SeedRole{Name: r.Name, Path: r.Path, ManagedPolicyARNs: r.ManagedPolicies, Description: r.Description, Tags: r.Tags}
	if m := roleARN.FindStringSubmatch(r.ARN); m != nil {
		out.Name, out.Path = m[3], m[2]
	}
	switch p := r.AssumeRolePolicyPrincipal; {
	case len(r.AssumeRolePolicyDocument) > 0:
		var compact bytes.Buffer
		if json.Compact(&compact, r.AssumeRolePolicyDocument) == nil {
			out.AssumeRolePolicyDocument = compact.String()
		}
	case servicePrinc.MatchString(p):
		out.AssumeRolePolicyDocument = trustPolicy(map[string]string{"Service": p}, "sts:AssumeRole", nil)
	case p != "":
		out.AssumeRolePolicyDocument = trustPolicy(map[string]string{"AWS": p}, "sts:AssumeRole", nil)
	}
	return out
}

// trustPolicy is a trust policy of one statement letting principal assume the role, its keys in
// the order IAM's documents write them.
func trustPolicy(principal map[string]string, action any, condition map[string]any) string {
	type statement struct {
		Effect    string            `json:"Effect"`
		Principal map[string]string `json:"Principal"`
		Action    any               `json:"Action"`
		Condition map[string]any    `json:"Condition,omitempty"`
	}
	doc, _ := json.Marshal(struct {
		Version   string      `json:"Version"`
		Statement []statement `json:"Statement"`
	}{"2012-10-17", []statement{{"Allow", principal, action, condition}}})
	return string(doc)
}

// ssoPath starts the path of the roles IAM Identity Center creates for its permission sets
// (/aws-reserved/sso.amazonaws.com/, or /aws-reserved/sso.amazonaws.com/REGION/).
const ssoPath = "/aws-reserved/sso.amazonaws.com/"

// principals are the world's roles other than the controller's and the nodes', and its users:
// those roles and users list, then those of the cluster's account that only an access entry
// names, which the world creates as the account has them. A world written from
// list-access-entries names its principals by ARN only, and EKS lets in only principals that
// exist. Such a role trusts what would assume it: IAM Identity Center's SAML provider for a
// permission set's role, the node service for a node type, else the account.
func (f *File) principals() ([]state.SeedRole, []state.SeedUser) {
	acct := f.Cluster.AccountID
	roles, users := []state.SeedRole{}, []state.SeedUser{}
	known := map[string]bool{roleARN.FindStringSubmatch(f.ControllerRole)[3]: true}
	for _, nr := range f.NodeRoles {
		known[seedRole(nr).Name] = true
	}
	if f.NodeRoles == nil {
		known["KarpenterNodeRole-"+f.Cluster.Name] = true
	}
	for _, r := range f.Roles {
		sr := seedRole(r)
		known[sr.Name] = true
		roles = append(roles, sr)
	}
	knownUsers := map[string]bool{}
	for _, u := range f.Users {
		su := state.SeedUser{Name: u.UserName, Path: u.Path, ManagedPolicyARNs: u.ManagedPolicies, Tags: u.Tags}
		if m := userARN.FindStringSubmatch(u.ARN); m != nil {
			su.Name, su.Path = m[3], m[2]
		}
		knownUsers[su.Name] = true
		users = append(users, su)
	}
	for _, e := range f.AccessEntries {
		if m := userARN.FindStringSubmatch(e.PrincipalARN); m != nil && m[1] == acct && !knownUsers[m[3]] {
			knownUsers[m[3]] = true
			users = append(users, state.SeedUser{Name: m[3], Path: m[2]})
		}
		m := roleARN.FindStringSubmatch(e.PrincipalARN)
		if m == nil || m[1] != acct || known[m[3]] {
			continue
		}
		known[m[3]] = true
		roles = append(roles, state.SeedRole{Name: m[3], Path: m[2], AssumeRolePolicyDocument: implicitTrust(acct, m[2], e.Type)})
	}
	return roles, users
}

// implicitTrust is the trust policy of a role the world creates for an access entry.
func implicitTrust(acct, path, typ string) string {
	switch typ {
	case state.AccessEntryEC2Linux, state.AccessEntryEC2Windows:
		return trustPolicy(map[string]string{"Service": "ec2.amazonaws.com"}, "sts:AssumeRole", nil)
	case state.AccessEntryFargateLinux:
		return trustPolicy(map[string]string{"Service": "eks-fargate-pods.amazonaws.com"}, "sts:AssumeRole", nil)
	case state.AccessEntryHybridLinux:
		return trustPolicy(map[string]string{"Service": "ssm.amazonaws.com"}, []string{"sts:AssumeRole", "sts:TagSession"}, nil)
	}
	if strings.HasPrefix(path, ssoPath) {
		// Identity Center names the account's provider AWSSSO_<16 hex digits>_DO_NOT_DELETE; the
		// digits are the instance's, which a world cannot know: these are the account's.
		sum := sha256.Sum256([]byte(acct))
		provider := fmt.Sprintf("arn:aws:iam::%s:saml-provider/AWSSSO_%s_DO_NOT_DELETE", acct, hex.EncodeToString(sum[:8]))
		return trustPolicy(map[string]string{"Federated": provider}, []string{"sts:AssumeRoleWithSAML", "sts:TagSession"},
			map[string]any{"StringEquals": map[string]string{"SAML:aud": "https://signin.aws.amazon.com/saml"}})
	}
	return trustPolicy(map[string]string{"AWS": fmt.Sprintf("arn:aws:iam::%s:root", acct)}, "sts:AssumeRole", nil)
}

func (f *File) instanceProfiles() []state.SeedInstanceProfile {
	out := []state.SeedInstanceProfile{}
	for _, ip := range f.InstanceProfiles {
		p := state.SeedInstanceProfile{Name: ip.InstanceProfileName, Path: ip.Path, Tags: ip.Tags}
		if m := profileARN.FindStringSubmatch(ip.ARN); m != nil {
			p.Name, p.Path = m[3], m[2]
		}
		if len(ip.Roles) == 1 {
			p.RoleName = roleARN.FindStringSubmatch(ip.Roles[0])[3]
		}
		out = append(out, p)
	}
	return out
}

func (f *File) accessEntries() []state.AccessEntry {
	out := []state.AccessEntry{}
	for _, e := range f.AccessEntries {
		entry := state.AccessEntry{ARN: e.AccessEntryARN, PrincipalARN: e.PrincipalARN, Type: e.Type, Tags: e.Tags}
		// EKS assigns a node type's username and groups; a world may only repeat them.
		if e.Type == state.AccessEntryStandard {
			entry.Username, entry.KubernetesGroups = e.Username, e.KubernetesGroups
		}
		for _, p := range e.AccessPolicies {
			entry.AccessPolicies = append(entry.AccessPolicies, state.AccessPolicyAssociation{
				PolicyARN: p.PolicyARN, ScopeType: p.AccessScope.Type, Namespaces: p.AccessScope.Namespaces})
		}
		out = append(out, entry)
	}
	return out
}

func (f *File) subnets() []state.Subnet {
	out := []state.Subnet{}
	for _, s := range f.Subnets {
		p := netip.MustParsePrefix(s.CIDRBlock)
		avail := int32(1)<<(32-p.Bits()) - 5
		if s.AvailableIPAddressCount != nil {
			avail = *s.AvailableIPAddressCount
		}
		out = append(out, state.Subnet{ID: s.SubnetID, Zone: s.AvailabilityZone, CIDR: s.CIDRBlock,
			AvailableIPs: avail, MapPublicIPOnStart: s.MapPublicIPOnLaunch, Tags: s.Tags})
	}
	return out
}

func (f *File) images() []state.Image {
	var out []state.Image
	for _, img := range f.Images {
		created := defaultImageDate
		if img.CreationDate != "" {
			created, _ = time.Parse(time.RFC3339, img.CreationDate)
		}
		owner := img.OwnerID
		if owner == "" {
			owner = f.Cluster.AccountID
		}
		version := img.KubernetesVersion
		if version == "" {
			version = f.Cluster.KubernetesVersion
		}
		out = append(out, state.Image{
			ID: img.ImageID, Name: img.Name, Description: img.Description, Architecture: img.Architecture, OwnerID: owner,
			CreationDate: created, Family: family(img.Bootstrap), KubernetesVersion: version, Variant: "standard", Tags: img.Tags,
			State: img.State, RootDeviceName: img.RootDeviceName, RootDeviceType: img.RootDeviceType,
			VirtualizationType: img.VirtualizationType, PlatformDetails: img.PlatformDetails,
		})
	}
	return out
}

// family is the state.Image family that boots as bootstrap says.
func family(bootstrap string) string {
	switch bootstrap {
	case BootstrapAL2:
		return state.FamilyAL2
	case BootstrapNodeadm:
		return state.FamilyAL2023
	case BootstrapBottlerocket:
		return state.FamilyBottlerocket
	}
	return state.FamilyCustom
}

// String is a one-line summary of the world for start-up logs.
func (f *File) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s in %s (account %s, Kubernetes %s, %s)", f.Cluster.Name, f.Cluster.Region, f.Cluster.AccountID,
		f.Cluster.KubernetesVersion, f.Cluster.AuthenticationMode)
	return b.String()
}
