package state

import (
	"fmt"
	"time"
)

// Access entry types EKS knows.
const (
	AccessEntryStandard     = "STANDARD"
	AccessEntryEC2Linux     = "EC2_LINUX"
	AccessEntryEC2Windows   = "EC2_WINDOWS"
	AccessEntryFargateLinux = "FARGATE_LINUX"
	AccessEntryHybridLinux  = "HYBRID_LINUX"
)

// Cluster is an EKS cluster: what DescribeCluster reports and its access entries.
type Cluster struct {
	Name               string
	ARN                string
	Version            string
	Endpoint           string
	CertificateData    string // base64 PEM
	ServiceIPv4CIDR    string
	AuthenticationMode string // API, API_AND_CONFIG_MAP or CONFIG_MAP
	RoleARN            string
	CreatedAt          time.Time
	// AccessEntries maps a principal ARN to its entry.
	AccessEntries map[string]*AccessEntry
}

// AccessEntry lets an IAM principal into the cluster.
type AccessEntry struct {
	ARN              string
	PrincipalARN     string
	Type             string
	Username         string
	KubernetesGroups []string
	// AccessPolicies are the EKS access policies associated with the entry (STANDARD entries).
	AccessPolicies []AccessPolicyAssociation
	CreatedAt      time.Time
	Tags           Tags
}

// AccessPolicyAssociation is an EKS access policy associated with an access entry, with its scope.
type AccessPolicyAssociation struct {
	PolicyARN string
	// ScopeType is "cluster" or "namespace"; Namespaces is set for "namespace".
	ScopeType    string
	Namespaces   []string
	AssociatedAt time.Time
}

// PutCluster creates the named cluster in the region if it does not exist and returns it.
func (w *World) PutCluster(r *Region, name, version string) *Cluster {
	if c, ok := r.Clusters[name]; ok {
		return c
	}
	c := &Cluster{
		Name: name, Version: version, ARN: fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", r.Name, w.AccountID, name),
		Endpoint: fmt.Sprintf("https://%s.gr7.%s.eks.amazonaws.com", w.NewID("")[1:], r.Name), ServiceIPv4CIDR: "10.100.0.0/16",
		AuthenticationMode: "API_AND_CONFIG_MAP", RoleARN: fmt.Sprintf("arn:aws:iam::%s:role/%s-cluster", w.AccountID, name),
		CreatedAt: w.Now, AccessEntries: map[string]*AccessEntry{},
	}
	r.Clusters[name] = c
	return c
}

// PutAccessEntry adds an access entry for principal to the cluster, with the username and groups
// EKS gives the type, and returns it.
func (w *World) PutAccessEntry(r *Region, c *Cluster, principal, typ string) *AccessEntry {
	e := &AccessEntry{
		ARN:          fmt.Sprintf("arn:aws:eks:%s:%s:access-entry/%s/%s", r.Name, w.AccountID, c.Name, w.NewID("")[1:]),
		PrincipalARN: principal, Type: typ, CreatedAt: w.Now, Tags: Tags{}, Username: principal,
	}
	if typ == AccessEntryEC2Linux {
		e.Username = "system:node:{{EC2PrivateDNSName}}"
		e.KubernetesGroups = []string{"system:nodes"}
	}
	c.AccessEntries[principal] = e
	return e
}
