package worldcapture

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/joinerhq/joiner/awsemu/world"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// EC2API are the EC2 reads of a capture; *ec2.Client satisfies it.
type EC2API interface {
	DescribeVpcs(ctx context.Context, in *ec2.DescribeVpcsInput, opts ...func(*ec2.Options)) (*ec2.DescribeVpcsOutput, error)
	DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, opts ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeSecurityGroups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput, opts ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
	DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, opts ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
}

// IAMAPI are the IAM reads of a capture; *iam.Client satisfies it.
type IAMAPI interface {
	GetRole(ctx context.Context, in *iam.GetRoleInput, opts ...func(*iam.Options)) (*iam.GetRoleOutput, error)
	ListRolePolicies(ctx context.Context, in *iam.ListRolePoliciesInput, opts ...func(*iam.Options)) (*iam.ListRolePoliciesOutput, error)
	GetRolePolicy(ctx context.Context, in *iam.GetRolePolicyInput, opts ...func(*iam.Options)) (*iam.GetRolePolicyOutput, error)
	ListAttachedRolePolicies(ctx context.Context, in *iam.ListAttachedRolePoliciesInput, opts ...func(*iam.Options)) (*iam.ListAttachedRolePoliciesOutput, error)
	GetPolicy(ctx context.Context, in *iam.GetPolicyInput, opts ...func(*iam.Options)) (*iam.GetPolicyOutput, error)
	GetPolicyVersion(ctx context.Context, in *iam.GetPolicyVersionInput, opts ...func(*iam.Options)) (*iam.GetPolicyVersionOutput, error)
	GetUser(ctx context.Context, in *iam.GetUserInput, opts ...func(*iam.Options)) (*iam.GetUserOutput, error)
	ListAttachedUserPolicies(ctx context.Context, in *iam.ListAttachedUserPoliciesInput, opts ...func(*iam.Options)) (*iam.ListAttachedUserPoliciesOutput, error)
	GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, opts ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	ListInstanceProfiles(ctx context.Context, in *iam.ListInstanceProfilesInput, opts ...func(*iam.Options)) (*iam.ListInstanceProfilesOutput, error)
}

// EKSAPI are the EKS reads of a capture; *eks.Client satisfies it.
type EKSAPI interface {
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
	ListAccessEntries(ctx context.Context, in *eks.ListAccessEntriesInput, opts ...func(*eks.Options)) (*eks.ListAccessEntriesOutput, error)
	DescribeAccessEntry(ctx context.Context, in *eks.DescribeAccessEntryInput, opts ...func(*eks.Options)) (*eks.DescribeAccessEntryOutput, error)
	ListAssociatedAccessPolicies(ctx context.Context, in *eks.ListAssociatedAccessPoliciesInput, opts ...func(*eks.Options)) (*eks.ListAssociatedAccessPoliciesOutput, error)
	ListPodIdentityAssociations(ctx context.Context, in *eks.ListPodIdentityAssociationsInput, opts ...func(*eks.Options)) (*eks.ListPodIdentityAssociationsOutput, error)
	DescribePodIdentityAssociation(ctx context.Context, in *eks.DescribePodIdentityAssociationInput, opts ...func(*eks.Options)) (*eks.DescribePodIdentityAssociationOutput, error)
}

// STSAPI reads the caller's account; *sts.Client satisfies it.
type STSAPI interface {
	GetCallerIdentity(ctx context.Context, in *sts.GetCallerIdentityInput, opts ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

// SQSAPI checks the interruption queue; *sqs.Client satisfies it.
type SQSAPI interface {
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, opts ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
}

// AWS are the clients a capture reads through.
type AWS struct {
	EC2 EC2API
	IAM IAMAPI
	EKS EKSAPI
	STS STSAPI
	SQS SQSAPI
}

// NewAWS builds the clients from one SDK configuration (sdk.LoadConfig, as joiner doctor's).
func NewAWS(cfg aws.Config) AWS {
	return AWS{EC2: ec2.NewFromConfig(cfg), IAM: iam.NewFromConfig(cfg), EKS: eks.NewFromConfig(cfg), STS: sts.NewFromConfig(cfg), SQS: sqs.NewFromConfig(cfg)}
}

// Actions are the read-only IAM actions a capture calls, sorted: `joiner iam-policy --capture`
// grants exactly these.
func Actions() []string {
	return []string{
		"ec2:DescribeImages", "ec2:DescribeSecurityGroups", "ec2:DescribeSubnets", "ec2:DescribeVpcs",
		"eks:DescribeAccessEntry", "eks:DescribeCluster", "eks:DescribePodIdentityAssociation", "eks:ListAccessEntries",
		"eks:ListAssociatedAccessPolicies", "eks:ListPodIdentityAssociations",
		"iam:GetInstanceProfile", "iam:GetPolicy", "iam:GetPolicyVersion", "iam:GetRole", "iam:GetRolePolicy", "iam:GetUser",
		"iam:ListAttachedRolePolicies", "iam:ListAttachedUserPolicies", "iam:ListInstanceProfiles", "iam:ListRolePolicies",
		"sqs:GetQueueUrl",
		"sts:GetCallerIdentity",
	}
}

// Options say what to capture.
type Options struct {
	// ClusterName is the EKS cluster's name; required.
	ClusterName string
	// Region is the cluster's region, written as cluster.region; required.
	Region string
	// NodeRoles name node roles beside those the cluster shows: role names, path/name, or ARNs.
	NodeRoles []string
	// ControllerRole is the controller's role ARN (or name); empty: the one Cluster shows.
	ControllerRole string
	// InterruptionQueue is the SQS queue's name; empty: the one Cluster shows, else a queue
	// named after the cluster if there is one.
	InterruptionQueue string
	// Cluster is what Discover read from the live cluster; nil when it was not read: the
	// subnets and security groups are then the cluster VPC's, the images the account's own.
	Cluster *Discovery
}

// Validate names the option that cannot make a capture, and how to fix it.
func (o Options) Validate() error {
	if o.ClusterName == "" {
		return errors.New("--cluster is required: the EKS cluster's name, as `aws eks list-clusters` shows it")
	}
	if o.Region == "" {
		return errors.New("--region is required (or AWS_REGION, or a cluster whose nodes carry topology.kubernetes.io/region): the cluster's AWS region, such as us-west-2")
	}
	return nil
}

// Note is something a capture could not read, or read but could not represent in a world file.
type Note struct {
	// Subject is the world field concerned: subnets, nodeRoles[KarpenterNodeRole-demo].
	Subject string
	// Action is the IAM action to grant when the read was denied; "" otherwise.
	Action string
	// Reason says what happened and what the file holds instead.
	Reason string
}

func (n Note) String() string {
	if n.Action != "" {
		return fmt.Sprintf("%s: %s (grant %s; joiner iam-policy --capture prints every action capture needs)", n.Subject, n.Reason, n.Action)
	}
	return n.Subject + ": " + n.Reason
}

// Result is a captured world and what the capture has to say about it.
type Result struct {
	World *world.File
	Notes []Note
}

// capturer is one capture under way.
type capturer struct {
	api     AWS
	o       Options
	f       *world.File
	notes   []Note
	account string
	// vpcID is the cluster's VPC; "" when unknown.
	vpcID string
	// nodeRoles are the node roles found so far, by name, with the reference that found them.
	nodeRoleRefs []string
	// roleARNs maps a role name held by the world to its ARN.
	roleARNs map[string]string
	// userARNs maps a user name held by the world to its ARN.
	userARNs map[string]string
}

// Capture reads the world of the cluster. It fails only when o is invalid or ctx ends; every
// read that fails is a Note, and the world holds what the other reads found.
func Capture(ctx context.Context, api AWS, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c := &capturer{api: api, o: o, f: &world.File{Cluster: world.Cluster{Name: o.ClusterName, Region: o.Region}}, roleARNs: map[string]string{}, userARNs: map[string]string{}}
	c.readAccount(ctx)
	c.readCluster(ctx)
	c.readControllerRole(ctx)
	c.nodeRoleRefs = append(c.nodeRoleRefs, o.NodeRoles...)
	profiles := c.classRefs()
	c.readAccessEntries(ctx)
	c.readNodeRoles(ctx)
	c.readInstanceProfiles(ctx, profiles)
	if len(c.f.NodeRoles) == 0 {
		c.note("nodeRoles", "no node role found: no EC2NodeClass or access entry names one and none was given (--node-role); the world has none")
	}
	c.readNetwork(ctx)
	c.readImages(ctx)
	c.readQueue(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Result{World: c.f, Notes: c.notes}, nil
}

// failed notes a read that failed: a denial names the action to grant.
func (c *capturer) failed(subject, action string, err error) {
	if denied(err) {
		c.notes = append(c.notes, Note{Subject: subject, Action: action, Reason: "access denied to " + action + "; left out"})
		return
	}
	c.notes = append(c.notes, Note{Subject: subject, Reason: fmt.Sprintf("%s failed (%v); left out", action, err)})
}

func (c *capturer) note(subject, format string, args ...any) {
	c.notes = append(c.notes, Note{Subject: subject, Reason: fmt.Sprintf(format, args...)})
}

// denied reports whether err is an AWS authorization failure.
func denied(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess", "AuthorizationError":
		return true
	}
	return false
}

// errorCode is err's AWS error code, or "".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func (c *capturer) readAccount(ctx context.Context) {
	out, err := c.api.STS.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		c.failed("cluster.accountId", "sts:GetCallerIdentity", err)
		return
	}
	c.account = aws.ToString(out.Account)
	c.f.Cluster.AccountID = c.account
}

func (c *capturer) readCluster(ctx context.Context) {
	out, err := c.api.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.o.ClusterName)})
	if err != nil {
		c.failed("cluster", "eks:DescribeCluster", err)
		return
	}
	ec := out.Cluster
	cl := &c.f.Cluster
	if acct := accountOf(aws.ToString(ec.Arn)); acct != "" && acct != c.account {
		if c.account != "" {
			c.note("cluster.accountId", "the caller is in account %s but the cluster in %s; the world is the cluster's account", c.account, acct)
		}
		c.account, cl.AccountID = acct, acct
	}
	cl.KubernetesVersion = aws.ToString(ec.Version)
	if ec.AccessConfig != nil {
		cl.AuthenticationMode = string(ec.AccessConfig.AuthenticationMode)
	}
	if n := ec.KubernetesNetworkConfig; n != nil {
		cl.ServiceIPv4CIDR = aws.ToString(n.ServiceIpv4Cidr)
		if cl.ServiceIPv4CIDR == "" && aws.ToString(n.ServiceIpv6Cidr) != "" {
			c.note("cluster.serviceIpv4Cidr", "the cluster is IPv6 (service CIDR %s); the world file holds IPv4 clusters, so the default is written", aws.ToString(n.ServiceIpv6Cidr))
		}
	}
	if v := ec.ResourcesVpcConfig; v != nil {
		c.vpcID = aws.ToString(v.VpcId)
		cl.VPCID = c.vpcID
	}
	if c.vpcID == "" {
		return
	}
	vpcs, err := c.api.EC2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{c.vpcID}})
	if err != nil {
		c.failed("cluster.vpcCidr", "ec2:DescribeVpcs", err)
		return
	}
	for _, v := range vpcs.Vpcs {
		cl.VPCCIDR = aws.ToString(v.CidrBlock)
		if n := len(v.CidrBlockAssociationSet); n > 1 {
			c.note("cluster.vpcCidr", "VPC %s has %d IPv4 CIDR blocks; the world holds its primary one, %s", c.vpcID, n, cl.VPCCIDR)
		}
	}
}

// accountOf is the account field of an ARN, or "".
func accountOf(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[4]
}

// classRefs adds the node roles the classes name (spec.role) and returns the instance profiles
// they name (spec.instanceProfile), whose roles readInstanceProfiles adds.
func (c *capturer) classRefs() []string {
	if c.o.Cluster == nil {
		return nil
	}
	var profiles []string
	for _, nc := range c.o.Cluster.NodeClasses {
		if nc.Spec.Role != "" {
			c.nodeRoleRefs = append(c.nodeRoleRefs, nc.Spec.Role)
		}
		if p := aws.ToString(nc.Spec.InstanceProfile); p != "" && !slices.Contains(profiles, p) {
			profiles = append(profiles, p)
		}
	}
	return profiles
}

// nodeClasses are the classes Discover found; nil without a live cluster.
func (c *capturer) nodeClasses() []awsv1.EC2NodeClass {
	if c.o.Cluster == nil {
		return nil
	}
	return c.o.Cluster.NodeClasses
}
