package state

import (
	"fmt"
	"strings"
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
	ModifiedAt     time.Time
	Tags           Tags
}

// AccessPolicyAssociation is an EKS access policy associated with an access entry, with its scope.
type AccessPolicyAssociation struct {
	PolicyARN string
	// ScopeType is "cluster" or "namespace"; Namespaces is set for "namespace".
	ScopeType    string
	Namespaces   []string
	AssociatedAt time.Time
	ModifiedAt   time.Time
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
// EKS gives the type, and returns it. It replaces an entry of the same principal.
func (w *World) PutAccessEntry(r *Region, c *Cluster, principal, typ string) *AccessEntry {
	e := &AccessEntry{
		ARN:          accessEntryARN(r.Name, w.AccountID, c.Name, principal, UUIDOf(w.NewID(""))),
		PrincipalARN: principal, Type: typ, CreatedAt: w.Now, ModifiedAt: w.Now, Tags: Tags{},
	}
	e.Username, e.KubernetesGroups = DefaultAccessEntryIdentity(principal, typ)
	c.AccessEntries[principal] = e
	return e
}

// DefaultAccessEntryIdentity is the Kubernetes username and groups EKS gives an access entry of
// the type when the caller names none (and always, for the node types, which take none):
// EC2 nodes are system:node:{{EC2PrivateDNSName}} in system:nodes, Fargate and hybrid nodes
// system:node:{{SessionName}}, and a STANDARD role is its assumed-role session
// (arn:aws:sts::ACCOUNT:assumed-role/NAME/{{SessionName}}, path removed), a user its ARN.
func DefaultAccessEntryIdentity(principal, typ string) (string, []string) {
	switch typ {
	case AccessEntryEC2Linux:
		return "system:node:{{EC2PrivateDNSName}}", []string{"system:nodes"}
	case AccessEntryEC2Windows:
		return "system:node:{{EC2PrivateDNSName}}", []string{"system:nodes", "eks:kube-proxy-windows"}
	case AccessEntryFargateLinux:
		return "system:node:{{SessionName}}", []string{"system:nodes", "system:node-proxier"}
	case AccessEntryHybridLinux:
		return "system:node:{{SessionName}}", []string{"system:nodes"}
	}
	prefix, name, ok := strings.Cut(principal, ":role/")
	if !ok {
		return principal, nil
	}
	name = name[strings.LastIndex(name, "/")+1:]
	return strings.Replace(prefix, ":iam:", ":sts:", 1) + ":assumed-role/" + name + "/{{SessionName}}", nil
}

// UUIDOf shapes a fresh id ("-00000000000000389") as the UUID EKS ends an access entry's ARN
// with (00000000-0000-0000-0000-000000000389), so ids stay predictable.
func UUIDOf(id string) string {
	hex := fmt.Sprintf("%032s", strings.TrimPrefix(id, "-"))
	return hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:]
}

// accessEntryARN is the ARN EKS gives an access entry:
// arn:aws:eks:REGION:ACCOUNT:access-entry/CLUSTER/role/ACCOUNT/NAME/ID for a role (user for a
// user), the principal's path removed.
func accessEntryARN(region, account, cluster, principal, id string) string {
	kind, rest := "role", ""
	if _, after, ok := strings.Cut(principal, ":role/"); ok {
		rest = after
	} else if _, after, ok := strings.Cut(principal, ":user/"); ok {
		kind, rest = "user", after
	}
	name := rest[strings.LastIndex(rest, "/")+1:]
	owner := ""
	if parts := strings.Split(principal, ":"); len(parts) > 4 {
		owner = parts[4]
	}
	return fmt.Sprintf("arn:aws:eks:%s:%s:access-entry/%s/%s/%s/%s/%s", region, account, cluster, kind, owner, name, id)
}
