package world

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/pkg/catalog"
)

// Defaults of a world file's optional fields: the demo world's.
const (
	DefaultAccountID         = "111122223333"
	DefaultRegion            = "us-west-2"
	DefaultControllerRole    = "JoinerControllerRole"
	DefaultControllerKey     = "AKIDJOINERCONTROLLER"
	DefaultAuthenticationMod = "API_AND_CONFIG_MAP"
	DefaultServiceIPv4CIDR   = "10.100.0.0/16"
)

// Bootstrap values of Image.Bootstrap: how an image turns userData into a kubelet.
const (
	BootstrapAL2          = "al2-bootstrap.sh"
	BootstrapNodeadm      = "nodeadm"
	BootstrapBottlerocket = "bottlerocket"
)

// File is a world file. Every field is optional except Cluster.Name; Decode fills the defaults
// of the scalar fields in, and a list left out (as opposed to an empty one) keeps the demo
// world's.
type File struct {
	Cluster Cluster `json:"cluster"`
	// ControllerRole is the ARN of the role the controller's access key stands for
	// (arn:aws:iam::ACCOUNT:role/PATH/NAME); default arn:aws:iam::ACCOUNT:role/JoinerControllerRole.
	ControllerRole string `json:"controllerRole,omitempty"`
	// ControllerAccessKeyID is the controller's access key id; default AKIDJOINERCONTROLLER.
	ControllerAccessKeyID string `json:"controllerAccessKeyId,omitempty"`
	// ControllerPolicy is the controller role's identity policy, an IAM policy document, kept as
	// the role's inline policy JoinerControllerPolicy and enforced on every call; default
	// allow-all.
	ControllerPolicy json.RawMessage `json:"controllerPolicy,omitempty"`
	// NodeRoles are the roles nodes run with; left out: KarpenterNodeRole-CLUSTER.
	NodeRoles []NodeRole `json:"nodeRoles,omitempty"`
	// Roles are the account's other roles: those access entries, instance profiles and policies
	// name beside the controller's and the nodes'.
	Roles []Role `json:"roles,omitempty"`
	// Users are the account's IAM users.
	Users []User `json:"users,omitempty"`
	// InstanceProfiles are the pre-created instance profiles; left out: one named after the
	// first node role, holding it.
	InstanceProfiles []InstanceProfile `json:"instanceProfiles,omitempty"`
	// AccessEntries are the cluster's EKS access entries; left out: an EC2_LINUX entry per node
	// role. A principal of the cluster's account that no other field lists is created with the
	// world (see docs/world.md).
	AccessEntries []AccessEntry `json:"accessEntries,omitempty"`
	// Subnets are the cluster VPC's subnets; left out: one private subnet per zone tagged
	// karpenter.sh/discovery: CLUSTER.
	Subnets []Subnet `json:"subnets,omitempty"`
	// SecurityGroups are the cluster VPC's security groups; left out: the EKS cluster security
	// group and a node group tagged karpenter.sh/discovery: CLUSTER.
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	// Images are the account's own AMIs, beside the EKS-optimized ones AWS publishes.
	Images []Image `json:"images,omitempty"`
}

// Cluster is the EKS cluster and the account and region it lives in (eks describe-cluster).
type Cluster struct {
	Name      string `json:"name"`
	AccountID string `json:"accountId,omitempty"`
	Region    string `json:"region,omitempty"`
	// KubernetesVersion is "1.31" (quoted in YAML); default the newest the emulator publishes
	// AMIs for.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// AuthenticationMode is CONFIG_MAP, API or API_AND_CONFIG_MAP (the default).
	AuthenticationMode string `json:"authenticationMode,omitempty"`
	ServiceIPv4CIDR    string `json:"serviceIpv4Cidr,omitempty"`
	VPCID              string `json:"vpcId,omitempty"`
	VPCCIDR            string `json:"vpcCidr,omitempty"`
	// InterruptionQueue is the SQS queue EC2 interruption events reach; default the cluster
	// name.
	InterruptionQueue string `json:"interruptionQueue,omitempty"`
}

// Role is an IAM role of the account (iam get-role, iam list-attached-role-policies): a node role
// (nodeRoles) or any other role a policy or an access entry names (roles), such as an
// administrator's, an IAM Identity Center permission set's
// (/aws-reserved/sso.amazonaws.com/AWSReservedSSO_NAME_ID) or CI's.
type Role struct {
	// Name and Path, or ARN, name the role; when both are given they must agree.
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
	ARN  string `json:"arn,omitempty"`
	// AssumeRolePolicyPrincipal is the service (ec2.amazonaws.com, the default) or the ARN the
	// role's trust policy allows to assume it; give it or AssumeRolePolicyDocument.
	AssumeRolePolicyPrincipal string `json:"assumeRolePolicyPrincipal,omitempty"`
	// AssumeRolePolicyDocument is the role's trust policy as get-role prints it (a mapping with
	// Version and Statement).
	AssumeRolePolicyDocument json.RawMessage `json:"assumeRolePolicyDocument,omitempty"`
	Description              string          `json:"description,omitempty"`
	// ManagedPolicies are the ARNs of the managed policies attached to the role.
	ManagedPolicies []string          `json:"managedPolicies,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`
	RoleReadOnly
}

// NodeRole is a role nodes run with (nodeRoles); it has the fields of any role.
type NodeRole = Role

// RoleReadOnly are the fields get-role prints that IAM assigns: accepted, so that its output
// can be pasted, and ignored (the emulator assigns its own).
type RoleReadOnly struct {
	RoleID             string          `json:"roleId,omitempty"`
	CreateDate         json.RawMessage `json:"createDate,omitempty"`
	MaxSessionDuration json.RawMessage `json:"maxSessionDuration,omitempty"`
	RoleLastUsed       json.RawMessage `json:"roleLastUsed,omitempty"`
}

// User is an IAM user of the account (iam get-user, iam list-attached-user-policies), such as
// one an access entry names.
type User struct {
	// UserName and Path, or ARN, name the user; when both are given they must agree.
	UserName string `json:"userName,omitempty"`
	Path     string `json:"path,omitempty"`
	ARN      string `json:"arn,omitempty"`
	// ManagedPolicies are the ARNs of the managed policies attached to the user.
	ManagedPolicies []string          `json:"managedPolicies,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`
	UserReadOnly
}

// UserReadOnly are the fields get-user prints that IAM assigns: accepted and ignored.
type UserReadOnly struct {
	UserID           string          `json:"userId,omitempty"`
	CreateDate       json.RawMessage `json:"createDate,omitempty"`
	PasswordLastUsed json.RawMessage `json:"passwordLastUsed,omitempty"`
}

// InstanceProfile is a pre-created instance profile (iam get-instance-profile).
type InstanceProfile struct {
	InstanceProfileName string `json:"instanceProfileName,omitempty"`
	Path                string `json:"path,omitempty"`
	ARN                 string `json:"arn,omitempty"`
	// Roles are the ARNs of the roles in the profile: at most one, of a role of the world.
	Roles []string          `json:"roles,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
	InstanceProfileReadOnly
}

// InstanceProfileReadOnly are the fields get-instance-profile prints that IAM assigns: accepted
// and ignored.
type InstanceProfileReadOnly struct {
	InstanceProfileID string          `json:"instanceProfileId,omitempty"`
	CreateDate        json.RawMessage `json:"createDate,omitempty"`
}

// AccessEntry is an EKS access entry (eks describe-access-entry).
type AccessEntry struct {
	// ClusterName defaults to the cluster's and must be it.
	ClusterName string `json:"clusterName,omitempty"`
	// PrincipalARN is the IAM role or user the entry lets in.
	PrincipalARN string `json:"principalArn"`
	// Type is STANDARD (the default), EC2_LINUX, EC2_WINDOWS, FARGATE_LINUX or HYBRID_LINUX.
	Type string `json:"type,omitempty"`
	// Username is the Kubernetes user the principal becomes. EKS assigns it to the node types
	// (which may give only that value, as describe-access-entry prints it) and, when left out,
	// to a STANDARD entry.
	Username string `json:"username,omitempty"`
	// KubernetesGroups are a STANDARD entry's groups; a node type may give only the groups EKS
	// assigns it, or none.
	KubernetesGroups []string `json:"kubernetesGroups,omitempty"`
	// AccessEntryARN defaults to a generated arn:aws:eks:REGION:ACCOUNT:access-entry/CLUSTER/ID.
	AccessEntryARN string            `json:"accessEntryArn,omitempty"`
	AccessPolicies []AccessPolicy    `json:"accessPolicies,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	AccessEntryReadOnly
}

// AccessEntryReadOnly are the fields describe-access-entry prints that EKS assigns: accepted
// and ignored.
type AccessEntryReadOnly struct {
	CreatedAt  json.RawMessage `json:"createdAt,omitempty"`
	ModifiedAt json.RawMessage `json:"modifiedAt,omitempty"`
}

// AccessPolicy is an EKS access policy associated with an entry (eks
// list-associated-access-policies).
type AccessPolicy struct {
	PolicyARN   string      `json:"policyArn"`
	AccessScope AccessScope `json:"accessScope"`
}

// AccessScope is where an access policy applies: type cluster, or namespace with namespaces.
type AccessScope struct {
	Type       string   `json:"type"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// Subnet is a subnet of the cluster's VPC (ec2 describe-subnets).
type Subnet struct {
	SubnetID         string `json:"subnetId"`
	VPCID            string `json:"vpcId,omitempty"`
	AvailabilityZone string `json:"availabilityZone"`
	CIDRBlock        string `json:"cidrBlock"`
	// AvailableIPAddressCount defaults to the CIDR's size less the five addresses AWS reserves.
	AvailableIPAddressCount *int32            `json:"availableIpAddressCount,omitempty"`
	MapPublicIPOnLaunch     bool              `json:"mapPublicIpOnLaunch,omitempty"`
	Tags                    map[string]string `json:"tags,omitempty"`
	SubnetReadOnly
}

// SubnetReadOnly are the fields describe-subnets prints that EC2 assigns or that the emulator
// does not model: accepted and ignored, but checked against the subnet where they could
// disagree with it (subnetArn, ownerId) and refused where the subnet could not be emulated
// (ipv6Native: true).
type SubnetReadOnly struct {
	SubnetARN                     string          `json:"subnetArn,omitempty"`
	OwnerID                       string          `json:"ownerId,omitempty"`
	State                         string          `json:"state,omitempty"`
	AvailabilityZoneID            string          `json:"availabilityZoneId,omitempty"`
	DefaultForAZ                  bool            `json:"defaultForAz,omitempty"`
	AssignIPv6AddressOnCreation   bool            `json:"assignIpv6AddressOnCreation,omitempty"`
	MapCustomerOwnedIPOnLaunch    bool            `json:"mapCustomerOwnedIpOnLaunch,omitempty"`
	EnableDNS64                   bool            `json:"enableDns64,omitempty"`
	IPv6Native                    bool            `json:"ipv6Native,omitempty"`
	EnableLniAtDeviceIndex        json.RawMessage `json:"enableLniAtDeviceIndex,omitempty"`
	IPv6CIDRBlockAssociationSet   json.RawMessage `json:"ipv6CidrBlockAssociationSet,omitempty"`
	PrivateDNSNameOptionsOnLaunch json.RawMessage `json:"privateDnsNameOptionsOnLaunch,omitempty"`
	BlockPublicAccessStates       json.RawMessage `json:"blockPublicAccessStates,omitempty"`
}

// SecurityGroup is a security group of the cluster's VPC (ec2 describe-security-groups).
type SecurityGroup struct {
	GroupID     string            `json:"groupId"`
	GroupName   string            `json:"groupName,omitempty"`
	Description string            `json:"description,omitempty"`
	VPCID       string            `json:"vpcId,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	SecurityGroupReadOnly
}

// SecurityGroupReadOnly are the fields describe-security-groups prints that EC2 assigns or that
// the emulator does not model (the rules): accepted and ignored, the ARN and owner checked
// against the group.
type SecurityGroupReadOnly struct {
	SecurityGroupARN    string          `json:"securityGroupArn,omitempty"`
	OwnerID             string          `json:"ownerId,omitempty"`
	IPPermissions       json.RawMessage `json:"ipPermissions,omitempty"`
	IPPermissionsEgress json.RawMessage `json:"ipPermissionsEgress,omitempty"`
}

// Image is one of the account's own AMIs (ec2 describe-images), and how it boots.
type Image struct {
	ImageID     string `json:"imageId"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// OwnerID defaults to the cluster's account.
	OwnerID string `json:"ownerId,omitempty"`
	// Architecture is x86_64 or arm64.
	Architecture string `json:"architecture"`
	// State is available (the default), pending, failed, deregistered, disabled or error.
	State string `json:"state,omitempty"`
	// CreationDate is RFC 3339 (2025-06-01T00:00:00.000Z); default 2025-01-01.
	CreationDate       string            `json:"creationDate,omitempty"`
	RootDeviceName     string            `json:"rootDeviceName,omitempty"`
	RootDeviceType     string            `json:"rootDeviceType,omitempty"`
	VirtualizationType string            `json:"virtualizationType,omitempty"`
	PlatformDetails    string            `json:"platformDetails,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
	// Bootstrap is how the image boots: al2-bootstrap.sh (EKS AL2 images' /etc/eks/bootstrap.sh),
	// nodeadm (AL2023) or bottlerocket; empty runs the userData as it is.
	Bootstrap string `json:"bootstrap,omitempty"`
	// KubernetesVersion is the kubelet the image carries; default the cluster's.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
}

// Problem is one thing wrong with a world file: the field, by its path, and why.
type Problem struct {
	// Path is the field's path: cluster.name, subnets[1].cidrBlock, controllerPolicy.Statement[0].Effect.
	Path string
	// Reason says what is wrong and how to fix it.
	Reason string
}

func (p Problem) String() string { return p.Path + ": " + p.Reason }

// Error is a refused world file: every problem found, in file order as far as it can tell.
type Error struct {
	// Source names the file ("" for bytes).
	Source   string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		fmt.Fprintf(&b, "world file %s is refused", e.Source)
	} else {
		b.WriteString("the world file is refused")
	}
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Load reads, decodes and validates the world file at path; see Decode.
func Load(path string, cat *catalog.Catalog) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading world file, %w", err)
	}
	f, err := Decode(raw, cat)
	if e, ok := errors.AsType[*Error](err); ok {
		e.Source = path
	}
	return f, err
}

// Decode reads a world file, YAML or JSON, strictly: a field the schema does not know, a field
// given twice or a value of the wrong type is an *Error naming the field's path. It then
// validates the world against the catalogue's regions and zones (see Validate) and fills the
// defaults in.
func Decode(data []byte, cat *catalog.Catalog) (*File, error) {
	raw, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &Error{Problems: []Problem{{Path: "(document)", Reason: fmt.Sprintf("not valid YAML or JSON: %v", err)}}}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, &Error{Problems: []Problem{{Path: "cluster.name", Reason: "is required: the file is empty"}}}
	}
	var f File
	strict, err := sjson.UnmarshalStrict(raw, &f)
	if err != nil {
		return nil, &Error{Problems: []Problem{decodeProblem(raw, err)}}
	}
	if len(strict) > 0 {
		e := &Error{}
		for _, s := range strict {
			e.Problems = append(e.Problems, strictProblem(s))
		}
		return nil, e
	}
	if err := f.Validate(cat); err != nil {
		return nil, err
	}
	return &f, nil
}

var strictMessage = regexp.MustCompile(`^(unknown|duplicate) field "(.*)"$`)

// strictProblem turns a strict decoding error of sigs.k8s.io/json into a Problem.
func strictProblem(err error) Problem {
	m := strictMessage.FindStringSubmatch(err.Error())
	if m == nil {
		return Problem{Path: "(document)", Reason: err.Error()}
	}
	if m[1] == "duplicate" {
		return Problem{Path: m[2], Reason: "is given twice; keep one"}
	}
	return Problem{Path: m[2], Reason: "is not a field of the world file (field names are case-sensitive, as the AWS APIs spell them; see docs/world.md)"}
}

// decodeProblem turns a type error into a Problem at the path of the offending value.
func decodeProblem(raw []byte, err error) Problem {
	te, ok := errors.AsType[*json.UnmarshalTypeError](err)
	if !ok {
		return Problem{Path: "(document)", Reason: err.Error()}
	}
	path := pathAt(raw, te.Offset)
	if path == "" {
		path = te.Field
	}
	want := te.Type.String()
	switch {
	case want == "string" && strings.HasPrefix(te.Value, "number"):
		return Problem{Path: path, Reason: "must be a string; quote it (YAML reads 1.30 as the number 1.3 and 0123 as 83)"}
	case want == "string":
		return Problem{Path: path, Reason: fmt.Sprintf("must be a string, not a %s; quote it (YAML reads yes, no, on, off, y and n as booleans)", te.Value)}
	}
	return Problem{Path: path, Reason: fmt.Sprintf("must be a %s, not a %s", describeType(want), te.Value)}
}

func describeType(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "world."), strings.HasPrefix(t, "struct"):
		return "mapping"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "*int"):
		return "whole number in range"
	}
	return t
}

// pathAt returns the path (a.b[2].c) of the JSON value that ends at or after offset in raw.
func pathAt(raw []byte, offset int64) string {
	var w pathWalker
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return w.path()
		}
		if !w.step(tok) {
			continue
		}
		if dec.InputOffset() >= offset {
			return w.path()
		}
		w.push(tok)
	}
}

// pathWalker follows the tokens of a JSON document, knowing the path of the current value.
type pathWalker struct{ stack []*pathFrame }

// pathFrame is an object or array being read.
type pathFrame struct {
	array   bool
	key     string
	index   int
	wantKey bool
}

// step takes the next token; it reports true when the token begins or is a value, whose path
// path returns until the next step.
func (w *pathWalker) step(tok json.Token) bool {
	var top *pathFrame
	if len(w.stack) > 0 {
		top = w.stack[len(w.stack)-1]
	}
	if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
		w.stack = w.stack[:len(w.stack)-1]
		w.valueDone()
		return false
	}
	if top != nil && !top.array && top.wantKey {
		top.key, top.wantKey = tok.(string), false
		return false
	}
	if top != nil && top.array {
		top.index++
	}
	return true
}

// push opens the object or array tok begins, once its own path has been asked for.
func (w *pathWalker) push(tok json.Token) {
	switch tok {
	case json.Delim('{'):
		w.stack = append(w.stack, &pathFrame{wantKey: true})
	case json.Delim('['):
		w.stack = append(w.stack, &pathFrame{array: true, index: -1})
	default:
		w.valueDone()
	}
}

// valueDone notes that a value of the current object ended: a key comes next.
func (w *pathWalker) valueDone() {
	if len(w.stack) > 0 && !w.stack[len(w.stack)-1].array {
		w.stack[len(w.stack)-1].wantKey = true
	}
}

func (w *pathWalker) path() string {
	var b strings.Builder
	for _, f := range w.stack {
		switch {
		case f.array:
			fmt.Fprintf(&b, "[%d]", f.index)
		case f.key != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
	}
	return b.String()
}
