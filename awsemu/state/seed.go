package state

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// AMI families, as EC2NodeClass names them.
const (
	FamilyAL2          = "AL2"
	FamilyAL2023       = "AL2023"
	FamilyBottlerocket = "Bottlerocket"
	FamilyCustom       = "Custom"
)

// EKSAMIOwner is the account that publishes the EKS-optimized AMIs in the emulator.
const EKSAMIOwner = "602401143452"

// AllowAllPolicy is a policy document that allows every action on every resource.
const AllowAllPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`

// ControllerPolicyName is the name of the controller role's inline policy: the world's
// controllerPolicy, or allow-all.
const ControllerPolicyName = "JoinerControllerPolicy"

// SeedOptions shapes the ready-made world Seed builds. The fields after Timings describe an
// account as a world file does; their zero values give the demo world.
type SeedOptions struct {
	// ClusterName tags the subnets and security groups `karpenter.sh/discovery: ClusterName`.
	ClusterName string
	// KubernetesVersions get one AMI per family, architecture and release.
	KubernetesVersions []string
	// ControllerAccessKey is the access key id of ControllerRole, allowed everything unless the
	// test replaces its policies.
	ControllerAccessKey string
	ControllerRole      string
	// NodeRole is created with an instance profile of the same name.
	NodeRole string
	// Releases are the AMI release dates (newest last) published for each version.
	Releases []time.Time
	// ClusterEndpoint is the API server URL the seeded EKS cluster reports; "" keeps the made-up
	// https://ID.gr7.REGION.eks.amazonaws.com.
	ClusterEndpoint string
	// ClusterCA is the PEM certificate bundle of the cluster's API server, reported base64
	// encoded as the cluster's certificate authority data; nil reports none.
	ClusterCA []byte
	// Timings replace the world's lifecycle timings field by field; zero fields keep the
	// world's (DefaultTimings in a new World).
	Timings Timings

	// AccountID replaces the world's account; "" keeps it.
	AccountID string
	// Region is the one region given the VPC, subnets, security groups, cluster and queue; ""
	// gives them to every region. The EKS-optimized images are published in every region
	// either way, as AWS publishes them.
	Region string
	// ClusterVersion is the cluster's Kubernetes version; "" is the newest of
	// KubernetesVersions.
	ClusterVersion string
	// AuthenticationMode is the cluster's (CONFIG_MAP, API or API_AND_CONFIG_MAP); "" is
	// API_AND_CONFIG_MAP.
	AuthenticationMode string
	// ServiceIPv4CIDR is the cluster's service CIDR; "" is 10.100.0.0/16.
	ServiceIPv4CIDR string
	// VPCID and VPCCIDR name the VPC; "" generates them (10.N.0.0/16, N counting by 16 over the
	// regions in name order).
	VPCID, VPCCIDR string
	// InterruptionQueue is the SQS queue EC2 events are sent to; "" is ClusterName.
	InterruptionQueue string
	// ControllerRolePath is the IAM path of ControllerRole; "" is "/".
	ControllerRolePath string
	// ControllerPolicy is the controller role's inline policy ControllerPolicyName, a JSON policy
	// document; "" is AllowAllPolicy.
	ControllerPolicy string
	// NodeRoles are the node roles; nil is one role named NodeRole.
	NodeRoles []SeedRole
	// Roles are the account's other roles (the administrators', SSO's, CI's): created as they
	// are, not node roles.
	Roles []SeedRole
	// Users are the account's IAM users.
	Users []SeedUser
	// InstanceProfiles are the pre-created instance profiles; nil is one named after the first
	// node role, holding it.
	InstanceProfiles []SeedInstanceProfile
	// AccessEntries are the cluster's; nil is one EC2_LINUX entry per node role.
	AccessEntries []AccessEntry
	// Subnets are the cluster's VPC's subnets (their VPCID is set to the VPC's); nil is one
	// private subnet per zone tagged for discovery.
	Subnets []Subnet
	// SecurityGroups are the VPC's security groups (their VPCID is set to the VPC's); nil is
	// the EKS cluster security group and a node group tagged for discovery.
	SecurityGroups []SecurityGroup
	// Images are added to the region's images beside the EKS-optimized ones (custom AMIs).
	Images []Image
}

// SeedRole is a role a world file describes.
type SeedRole struct {
	Name, Path string
	// AssumeRolePolicyDocument is the trust policy; "" trusts ec2.amazonaws.com.
	AssumeRolePolicyDocument string
	ManagedPolicyARNs        []string
	Description              string
	Tags                     Tags
}

// SeedUser is an IAM user a world file describes.
type SeedUser struct {
	Name, Path        string
	ManagedPolicyARNs []string
	Tags              Tags
}

// SeedInstanceProfile is an instance profile a world file describes; RoleName "" holds none.
type SeedInstanceProfile struct {
	Name, Path, RoleName string
	Tags                 Tags
}

// DefaultSeed is the world the local stack starts with.
func DefaultSeed() SeedOptions {
	return SeedOptions{
		ClusterName:         "demo",
		KubernetesVersions:  []string{"1.31", "1.32", "1.33"},
		ControllerAccessKey: "AKIDJOINERCONTROLLER",
		ControllerRole:      "JoinerControllerRole",
		NodeRole:            "KarpenterNodeRole-demo",
		Releases: []time.Time{
			time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC),
		},
	}
}

// Seed adds to every region (or to o.Region alone) a VPC, one private subnet per zone and two
// security groups tagged for discovery, or the subnets and groups o lists; to every region the
// EKS-optimized images, and to the cluster's region o.Images; and to IAM the controller role with
// its access key and the node roles with their instance profiles. The EKS cluster named
// ClusterName is created with ClusterEndpoint and ClusterCA when they are set, with o's access
// entries, and o.Timings override the world's. It fails, leaving the world partly seeded, when an
// id o gives is taken; callers seed a new World and validate o first (package world does).
func (w *World) Seed(o SeedOptions) error {
	w.Timings = w.Timings.Override(o.Timings)
	if o.AccountID != "" {
		w.AccountID = o.AccountID
	}
	versions := o.KubernetesVersions
	if o.ClusterVersion == "" {
		o.ClusterVersion = versions[len(versions)-1]
	}
	if o.InterruptionQueue == "" {
		o.InterruptionQueue = o.ClusterName
	}
	if o.NodeRoles == nil {
		o.NodeRoles = []SeedRole{{Name: o.NodeRole}}
	}
	if o.InstanceProfiles == nil && len(o.NodeRoles) > 0 {
		o.InstanceProfiles = []SeedInstanceProfile{{Name: o.NodeRoles[0].Name, RoleName: o.NodeRoles[0].Name}}
	}
	second := byte(0)
	for _, name := range SortedKeys(w.Regions) {
		r := w.Regions[name]
		second += 16
		mine := o.Region == "" || o.Region == name
		if mine {
			if err := w.seedNetwork(r, o, second); err != nil {
				return err
			}
		}
		w.seedImages(r, o)
		if mine {
			for _, img := range o.Images {
				if r.Images[img.ID] != nil {
					return fmt.Errorf("image %s exists already", img.ID)
				}
				img.Tags = cloneTags(img.Tags)
				r.Images[img.ID] = &img
			}
		}
	}
	if err := w.seedIAM(o); err != nil {
		return err
	}
	for _, name := range SortedKeys(w.Regions) {
		if o.Region != "" && o.Region != name {
			continue
		}
		if err := w.seedCluster(w.Regions[name], o); err != nil {
			return err
		}
	}
	return nil
}

func (w *World) seedNetwork(r *Region, o SeedOptions, second byte) error {
	discovery := Tags{"karpenter.sh/discovery": o.ClusterName}
	vpc := &VPC{ID: o.VPCID, CIDR: o.VPCCIDR, Tags: Tags{"Name": o.ClusterName}}
	if vpc.ID == "" {
		vpc.ID = w.NewID("vpc")
	}
	if vpc.CIDR == "" {
		vpc.CIDR = fmt.Sprintf("10.%d.0.0/16", second)
	}
	if r.VPCs[vpc.ID] != nil {
		return fmt.Errorf("VPC %s exists already", vpc.ID)
	}
	r.VPCs[vpc.ID] = vpc
	subnets := o.Subnets
	if subnets == nil {
		cidrs := zoneSubnets(vpc.CIDR, len(r.Zones))
		for i, z := range r.Zones {
			cidr, avail := fmt.Sprintf("10.%d.%d.0/20", second, i*16), int32(4091)
			if o.VPCCIDR != "" && i < len(cidrs) {
				cidr, avail = cidrs[i].String(), int32(1)<<(32-cidrs[i].Bits())-5
			}
			subnets = append(subnets, Subnet{
				ID: w.NewID("subnet"), Zone: z.Name, CIDR: cidr, AvailableIPs: avail,
				Tags: Tags{"karpenter.sh/discovery": o.ClusterName, "kubernetes.io/role/internal-elb": "1", "Name": o.ClusterName + "-private-" + z.Name},
			})
		}
	}
	for _, s := range subnets {
		if r.Subnets[s.ID] != nil {
			return fmt.Errorf("subnet %s exists already", s.ID)
		}
		if z, ok := r.Zone(s.Zone); ok && s.ZoneID == "" {
			s.ZoneID = z.ID
		}
		s.VPCID, s.Tags = vpc.ID, cloneTags(s.Tags)
		r.Subnets[s.ID] = &s
	}
	groups := o.SecurityGroups
	if groups == nil {
		groups = []SecurityGroup{
			{ID: w.NewID("sg"), Name: "eks-cluster-sg-" + o.ClusterName, Description: "EKS created security group", Tags: Tags{"aws:eks:cluster-name": o.ClusterName}},
			{ID: w.NewID("sg"), Name: o.ClusterName + "-node", Description: "Nodes of " + o.ClusterName, Tags: discovery},
		}
	}
	for _, sg := range groups {
		if r.SecurityGroups[sg.ID] != nil {
			return fmt.Errorf("security group %s exists already", sg.ID)
		}
		sg.VPCID, sg.Tags = vpc.ID, cloneTags(sg.Tags)
		r.SecurityGroups[sg.ID] = &sg
	}
	return nil
}

func (w *World) seedCluster(r *Region, o SeedOptions) error {
	c := w.PutCluster(r, o.ClusterName, o.ClusterVersion)
	if o.ClusterEndpoint != "" {
		c.Endpoint = o.ClusterEndpoint
	}
	if len(o.ClusterCA) > 0 {
		c.CertificateData = base64.StdEncoding.EncodeToString(o.ClusterCA)
	}
	if o.AuthenticationMode != "" {
		c.AuthenticationMode = o.AuthenticationMode
	}
	if o.ServiceIPv4CIDR != "" {
		c.ServiceIPv4CIDR = o.ServiceIPv4CIDR
	}
	if o.AccessEntries == nil {
		// The cluster lets the node roles join through access entries, so the default world
		// boots nodes; tests of unmapped roles remove them.
		for _, role := range o.NodeRoles {
			w.PutAccessEntry(r, c, w.IAM.Roles[role.Name].ARN, AccessEntryEC2Linux)
		}
	}
	for _, e := range o.AccessEntries {
		put := w.PutAccessEntry(r, c, e.PrincipalARN, e.Type)
		if e.ARN != "" {
			put.ARN = e.ARN
		}
		if e.Username != "" {
			put.Username = e.Username
		}
		if e.KubernetesGroups != nil {
			put.KubernetesGroups = slices.Clone(e.KubernetesGroups)
		}
		for _, p := range e.AccessPolicies {
			p.AssociatedAt = w.Now
			p.Namespaces = slices.Clone(p.Namespaces)
			put.AccessPolicies = append(put.AccessPolicies, p)
		}
		maps.Copy(put.Tags, e.Tags)
	}
	// The interruption queue is named after the cluster, as Karpenter's setup names it, unless
	// the world names it.
	w.PutQueue(r, o.InterruptionQueue)
	r.InterruptionQueues = []string{o.InterruptionQueue}
	return nil
}

// zoneSubnets splits a VPC's CIDR into n subnets, one per zone, from its first address: /20s,
// or smaller ones when n /20s do not fit. It returns none for a CIDR it cannot parse.
func zoneSubnets(vpcCIDR string, n int) []netip.Prefix {
	vpc, err := netip.ParsePrefix(vpcCIDR)
	if err != nil || !vpc.Addr().Is4() || n == 0 {
		return nil
	}
	bits := vpc.Bits()
	for 1<<(bits-vpc.Bits()) < n {
		bits++
	}
	bits = max(bits, 20)
	if bits > 28 {
		return nil
	}
	base := vpc.Masked().Addr().As4()
	start := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	out := make([]netip.Prefix, 0, n)
	for i := range n {
		a := start + uint32(i)<<(32-bits)
		out = append(out, netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}), bits))
	}
	return out
}

func cloneTags(t Tags) Tags {
	out := Tags{}
	maps.Copy(out, t)
	return out
}

func (w *World) seedImages(r *Region, o SeedOptions) {
	versions := o.KubernetesVersions
	if !slices.Contains(versions, o.ClusterVersion) {
		versions = append(slices.Clone(versions), o.ClusterVersion)
	}
	for _, v := range versions {
		for _, rel := range o.Releases {
			stamp := rel.Format("20060102")
			for _, img := range []Image{
				{Family: FamilyAL2, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-node-%s-v%s", v, stamp)},
				{Family: FamilyAL2, Architecture: "arm64", Name: fmt.Sprintf("amazon-eks-arm64-node-%s-v%s", v, stamp)},
				{Family: FamilyAL2, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-gpu-node-%s-v%s", v, stamp)},
				{Family: FamilyAL2023, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-node-al2023-x86_64-standard-%s-v%s", v, stamp)},
				{Family: FamilyAL2023, Architecture: "arm64", Name: fmt.Sprintf("amazon-eks-node-al2023-arm64-standard-%s-v%s", v, stamp)},
				{Family: FamilyAL2023, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-node-al2023-x86_64-nvidia-%s-v%s", v, stamp)},
				{Family: FamilyBottlerocket, Architecture: "x86_64", Name: fmt.Sprintf("bottlerocket-aws-k8s-%s-x86_64-v1.%s", v, stamp)},
				{Family: FamilyBottlerocket, Architecture: "arm64", Name: fmt.Sprintf("bottlerocket-aws-k8s-%s-aarch64-v1.%s", v, stamp)},
			} {
				img.ID = w.NewID("ami")
				img.OwnerID, img.OwnerAlias = EKSAMIOwner, "amazon"
				img.CreationDate, img.KubernetesVersion = rel, v
				img.Variant = "standard"
				if strings.Contains(img.Name, "gpu") || strings.Contains(img.Name, "nvidia") {
					img.Variant = "nvidia"
				}
				img.Description = "EKS Kubernetes Worker AMI (" + img.Family + ", k8s " + v + ")"
				r.Images[img.ID] = &img
			}
		}
	}
}

func (w *World) seedIAM(o SeedOptions) error {
	policy := o.ControllerPolicy
	if policy == "" {
		policy = AllowAllPolicy
	}
	ctrl := w.PutRolePath(o.ControllerRole, o.ControllerRolePath, map[string]string{ControllerPolicyName: policy})
	w.IAM.AccessKeys[o.ControllerAccessKey] = ctrl.Name
	for _, nr := range o.NodeRoles {
		if nr.Name == o.ControllerRole {
			return fmt.Errorf("node role %s is the controller role", nr.Name)
		}
		w.seedRole(nr)
	}
	for _, sr := range o.Roles {
		if w.IAM.Roles[sr.Name] != nil {
			return fmt.Errorf("role %s exists already", sr.Name)
		}
		w.seedRole(sr)
	}
	for _, su := range o.Users {
		if w.IAM.Users[su.Name] != nil {
			return fmt.Errorf("user %s exists already", su.Name)
		}
		u := w.PutUserPath(su.Name, su.Path)
		u.ManagedPolicyARNs = slices.Clone(su.ManagedPolicyARNs)
		maps.Copy(u.Tags, su.Tags)
	}
	for _, ip := range o.InstanceProfiles {
		if _, ok := w.IAM.InstanceProfiles[ip.Name]; ok {
			return fmt.Errorf("instance profile %s exists already", ip.Name)
		}
		if ip.RoleName != "" && w.IAM.Roles[ip.RoleName] == nil {
			return fmt.Errorf("instance profile %s holds role %s, which does not exist", ip.Name, ip.RoleName)
		}
		p := w.PutInstanceProfilePath(ip.Name, ip.Path)
		p.RoleName = ip.RoleName
		maps.Copy(p.Tags, ip.Tags)
	}
	return nil
}

// seedRole creates or replaces the role sr describes.
func (w *World) seedRole(sr SeedRole) {
	r := w.PutRolePath(sr.Name, sr.Path, nil)
	if sr.AssumeRolePolicyDocument != "" {
		r.AssumeRolePolicyDocument = sr.AssumeRolePolicyDocument
	}
	r.ManagedPolicyARNs = slices.Clone(sr.ManagedPolicyARNs)
	r.Description = sr.Description
	maps.Copy(r.Tags, sr.Tags)
}

// PutUserPath creates the named user with the IAM path ("" is "/") if it does not exist and
// returns it.
func (w *World) PutUserPath(name, path string) *User {
	if u, ok := w.IAM.Users[name]; ok {
		return u
	}
	if path == "" {
		path = "/"
	}
	u := &User{
		Name: name, ID: "AIDA" + strings.ToUpper(w.NewID("")[1:]), Path: path, CreatedAt: w.Now, Tags: Tags{},
		ARN: fmt.Sprintf("arn:aws:iam::%s:user%s%s", w.AccountID, path, name),
	}
	w.IAM.Users[name] = u
	return u
}

// PutRole creates or replaces the named role, with path "/", with the given inline policies.
func (w *World) PutRole(name string, policies map[string]string) *Role {
	return w.PutRolePath(name, "/", policies)
}

// PutRolePath creates or replaces the named role with the given inline policies; a new role
// gets the IAM path ("" is "/"), which is part of its ARN.
func (w *World) PutRolePath(name, path string, policies map[string]string) *Role {
	if policies == nil {
		policies = map[string]string{}
	}
	if path == "" {
		path = "/"
	}
	r, ok := w.IAM.Roles[name]
	if !ok {
		r = &Role{
			Name: name, ID: "AROA" + strings.ToUpper(w.NewID("")[1:]), Path: path, CreatedAt: w.Now, Tags: Tags{},
			ARN:                      fmt.Sprintf("arn:aws:iam::%s:role%s%s", w.AccountID, path, name),
			AssumeRolePolicyDocument: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
		}
		w.IAM.Roles[name] = r
	}
	r.Policies = policies
	return r
}

// PutInstanceProfile creates the named instance profile, with path "/", if it does not exist
// and returns it.
func (w *World) PutInstanceProfile(name string) *InstanceProfile {
	return w.PutInstanceProfilePath(name, "/")
}

// PutInstanceProfilePath creates the named instance profile with the IAM path ("" is "/") if it
// does not exist and returns it.
func (w *World) PutInstanceProfilePath(name, path string) *InstanceProfile {
	if p, ok := w.IAM.InstanceProfiles[name]; ok {
		return p
	}
	if path == "" {
		path = "/"
	}
	p := &InstanceProfile{
		Name: name, ID: "AIPA" + strings.ToUpper(w.NewID("")[1:]), Path: path, CreatedAt: w.Now, Tags: Tags{},
		ARN: fmt.Sprintf("arn:aws:iam::%s:instance-profile%s%s", w.AccountID, path, name),
	}
	w.IAM.InstanceProfiles[name] = p
	return p
}
