package world

import (
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
		r := state.SeedRole{Name: nr.Name, Path: nr.Path, ManagedPolicyARNs: nr.ManagedPolicies}
		if m := roleARN.FindStringSubmatch(nr.ARN); m != nil {
			r.Name, r.Path = m[3], m[2]
		}
		if p := nr.AssumeRolePolicyPrincipal; p != "" {
			kind := "AWS"
			if servicePrinc.MatchString(p) {
				kind = "Service"
			}
			doc, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
				"Effect": "Allow", "Principal": map[string]string{kind: p}, "Action": "sts:AssumeRole"}}})
			r.AssumeRolePolicyDocument = string(doc)
		}
		out = append(out, r)
	}
	return out
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
		entry := state.AccessEntry{ARN: e.AccessEntryARN, PrincipalARN: e.PrincipalARN, Type: e.Type,
			Username: e.Username, KubernetesGroups: e.KubernetesGroups, Tags: e.Tags}
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
