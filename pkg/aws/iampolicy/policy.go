package iampolicy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Options say whose policy to generate.
type Options struct {
	// ClusterName is the EKS cluster's name, as the controller's --cluster-name; required.
	ClusterName string
	// Region is the cluster's AWS region; required.
	Region string
	// AccountID is the 12-digit account of the cluster; required.
	AccountID string
	// NodeRoles are the IAM roles the EC2NodeClasses name (spec.role, or the role inside
	// spec.instanceProfile): the only roles the controller may pass to EC2. At least one.
	NodeRoles []string
	// InterruptionQueue is the name of the SQS interruption queue in Region; "" grants no SQS
	// action.
	InterruptionQueue string
}

// DefaultNodeRole is the node role Karpenter's getting-started guide creates, so a cluster
// moving from Karpenter keeps its EC2NodeClasses: KarpenterNodeRole-<cluster>.
func DefaultNodeRole(clusterName string) string { return "KarpenterNodeRole-" + clusterName }

var (
	regionPattern  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	accountPattern = regexp.MustCompile(`^[0-9]{12}$`)
	// EKS cluster names: 1-100 characters, a letter or digit first.
	clusterPattern = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$`)
	// IAM role names, with an optional path.
	rolePattern  = regexp.MustCompile(`^(/[\x21-\x7e]*/)?[\w+=,.@-]{1,64}$`)
	queuePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,75}(\.fifo)?$`)
)

// Validate names the first field that cannot make a policy, and how to fix it.
func (o Options) Validate() error {
	var errs []error
	if !clusterPattern.MatchString(o.ClusterName) {
		errs = append(errs, fmt.Errorf("--cluster %q is not an EKS cluster name: 1 to 100 letters, digits, - and _, starting with a letter or digit", o.ClusterName))
	}
	if !regionPattern.MatchString(o.Region) {
		errs = append(errs, fmt.Errorf("--region %q is not an AWS region: give the cluster's region, such as us-west-2", o.Region))
	}
	if !accountPattern.MatchString(o.AccountID) {
		errs = append(errs, fmt.Errorf("--account %q is not an AWS account ID: give the cluster's 12 digits", o.AccountID))
	}
	if len(o.NodeRoles) == 0 {
		errs = append(errs, errors.New("--node-role: name at least one role the EC2NodeClasses use"))
	}
	for _, r := range o.NodeRoles {
		if !rolePattern.MatchString(r) {
			errs = append(errs, fmt.Errorf("--node-role %q is not an IAM role name: up to 64 letters, digits and +=,.@_-, optionally after a /path/", r))
		}
	}
	if o.InterruptionQueue != "" && !queuePattern.MatchString(o.InterruptionQueue) {
		errs = append(errs, fmt.Errorf("--interruption-queue %q is not an SQS queue name: up to 80 letters, digits, - and _ (give the name, not the URL or ARN)", o.InterruptionQueue))
	}
	return errors.Join(errs...)
}

// Partition is the AWS partition of a region: aws-cn for China, aws-us-gov for GovCloud,
// aws-iso* for the isolated regions, else aws.
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	case strings.HasPrefix(region, "us-isob-"):
		return "aws-iso-b"
	case strings.HasPrefix(region, "us-iso-"):
		return "aws-iso"
	}
	return "aws"
}

// Document is an IAM policy document.
type Document struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement of a Document. Condition maps operator to key to values.
type Statement struct {
	Sid       string                         `json:"Sid"`
	Effect    string                         `json:"Effect"`
	Action    []string                       `json:"Action"`
	Resource  []string                       `json:"Resource"`
	Condition map[string]map[string][]string `json:"Condition,omitempty"`
}

// Actions are the distinct actions of the document, sorted.
func (d Document) Actions() []string {
	var out []string
	for _, s := range d.Statement {
		out = append(out, s.Action...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// New returns the controller's policy for o (which must Validate). Every statement grants
// actions of Calls only, and every write is conditioned on the tags Joiner's own resources carry:
//
//   - launching (RunInstances, CreateFleet) may read any image and snapshot, the subnets and
//     security groups of the region, and use the cluster's launch templates; the instance, its
//     volumes, network interface and Spot request and the fleet must be requested with
//     kubernetes.io/cluster/<name>=owned and a karpenter.sh/nodepool tag;
//   - launch templates are created with the cluster tag and a karpenter.k8s.aws/ec2nodeclass tag;
//   - tags are written only while creating those resources (ec2:CreateAction), except an
//     instance's own karpenter.sh/nodeclaim and Name tags, written after its batched launch;
//   - only instances and launch templates carrying the same tags are terminated or deleted, and
//     only such instances' console output is read (to say why a Node has not joined);
//   - instance profiles are created, changed and deleted only under the cluster's name prefix and
//     with (or carrying) the cluster, region and node class tags; only the named node roles are
//     passed, and only to EC2;
//   - reads are limited to the region (aws:RequestedRegion), the public SSM parameters under
//     /aws/service/, and the cluster's own EKS DescribeCluster.
func New(o Options) Document {
	p, r, a := Partition(o.Region), o.Region, o.AccountID
	ec2 := func(account, kind string) string { return fmt.Sprintf("arn:%s:ec2:%s:%s:%s/*", p, r, account, kind) }
	clusterTag := awsv1.TagKeyPrefixCluster + o.ClusterName
	requestTags := func(owner string) map[string]map[string][]string {
		return map[string]map[string][]string{
			"StringEquals": {"aws:RequestTag/" + clusterTag: {"owned"}},
			"StringLike":   {"aws:RequestTag/" + owner: {"*"}},
		}
	}
	resourceTags := func(owner string) map[string]map[string][]string {
		return map[string]map[string][]string{
			"StringEquals": {"aws:ResourceTag/" + clusterTag: {"owned"}},
			"StringLike":   {"aws:ResourceTag/" + owner: {"*"}},
		}
	}
	creationTagging := func(owner string, actions ...string) map[string]map[string][]string {
		c := requestTags(owner)
		c["StringEquals"]["ec2:CreateAction"] = actions
		return c
	}
	profileTags := func(prefix string) map[string]map[string][]string {
		return map[string]map[string][]string{
			"StringEquals": {prefix + clusterTag: {"owned"}, prefix + corev1.LabelTopologyRegion: {r}},
			"StringLike":   {prefix + awsv1.TagKeyNodeClass: {"*"}},
		}
	}
	profiles := []string{fmt.Sprintf("arn:%s:iam::%s:instance-profile/%s_*", p, a, o.ClusterName)}
	roles := make([]string, 0, len(o.NodeRoles))
	for _, name := range o.NodeRoles {
		roles = append(roles, fmt.Sprintf("arn:%s:iam::%s:role/%s", p, a, strings.TrimPrefix(name, "/")))
	}

	// What a launch creates, each tagged on creation with the cluster and NodePool tags: the
	// fleet, instance and volumes by the launch's TagSpecifications, the network interface and
	// the Spot request by the launch template's.
	launched := []string{ec2(a, "fleet"), ec2(a, "instance"), ec2(a, "volume"), ec2(a, "network-interface"), ec2(a, "spot-instances-request")}
	statements := []Statement{
		{
			Sid: "AllowScopedEC2LaunchResources", Action: []string{"ec2:CreateFleet", "ec2:RunInstances"},
			Resource: []string{
				fmt.Sprintf("arn:%s:ec2:%s::image/*", p, r),
				fmt.Sprintf("arn:%s:ec2:%s::snapshot/*", p, r),
				// Shared-VPC subnets and their security groups belong to another account.
				ec2("*", "security-group"),
				ec2("*", "subnet"),
			},
		},
		{
			Sid: "AllowScopedEC2LaunchTemplateUse", Action: []string{"ec2:CreateFleet", "ec2:RunInstances"},
			Resource:  []string{ec2(a, "launch-template")},
			Condition: resourceTags(awsv1.TagKeyNodeClass),
		},
		{
			Sid: "AllowScopedEC2InstanceActionsWithTags", Action: []string{"ec2:CreateFleet", "ec2:RunInstances"},
			Resource:  launched,
			Condition: requestTags(v1.NodePoolLabelKey),
		},
		{
			Sid: "AllowScopedLaunchTemplateCreation", Action: []string{"ec2:CreateLaunchTemplate"},
			Resource:  []string{ec2(a, "launch-template")},
			Condition: requestTags(awsv1.TagKeyNodeClass),
		},
		{
			Sid: "AllowScopedInstanceCreationTagging", Action: []string{"ec2:CreateTags"},
			Resource:  launched,
			Condition: creationTagging(v1.NodePoolLabelKey, "CreateFleet", "RunInstances"),
		},
		// A launched instance's own tags, added after the launch (batched launches carry only the
		// tags their NodeClaims share): only the NodeClaim and Name keys, only on the cluster's
		// instances of a NodePool.
		{
			Sid: "AllowScopedInstanceTagging", Action: []string{"ec2:CreateTags"},
			Resource: []string{ec2(a, "instance")},
			Condition: func() map[string]map[string][]string {
				c := resourceTags(v1.NodePoolLabelKey)
				c["ForAllValues:StringEquals"] = map[string][]string{"aws:TagKeys": {awsv1.TagKeyNodeClaim, awsv1.TagKeyName}}
				return c
			}(),
		},
		{
			Sid: "AllowScopedLaunchTemplateCreationTagging", Action: []string{"ec2:CreateTags"},
			Resource:  []string{ec2(a, "launch-template")},
			Condition: creationTagging(awsv1.TagKeyNodeClass, "CreateLaunchTemplate"),
		},
		{
			Sid: "AllowScopedInstanceDeletion", Action: []string{"ec2:TerminateInstances"},
			Resource:  []string{ec2(a, "instance")},
			Condition: resourceTags(v1.NodePoolLabelKey),
		},
		// Reading the console of an instance whose Node has not joined, to say why: only the
		// cluster's own instances.
		{
			Sid: "AllowScopedInstanceConsoleRead", Action: []string{"ec2:GetConsoleOutput"},
			Resource:  []string{ec2(a, "instance")},
			Condition: resourceTags(v1.NodePoolLabelKey),
		},
		{
			Sid: "AllowScopedLaunchTemplateDeletion", Action: []string{"ec2:DeleteLaunchTemplate"},
			Resource:  []string{ec2(a, "launch-template")},
			Condition: resourceTags(awsv1.TagKeyNodeClass),
		},
		{
			Sid: "AllowRegionalReadActions",
			Action: []string{
				"ec2:DescribeImages", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeInstances",
				"ec2:DescribeLaunchTemplates", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
			},
			Resource:  []string{"*"},
			Condition: map[string]map[string][]string{"StringEquals": {"aws:RequestedRegion": {r}}},
		},
		{
			Sid: "AllowSSMReadActions", Action: []string{"ssm:GetParameter"},
			Resource: []string{fmt.Sprintf("arn:%s:ssm:%s::parameter/aws/service/*", p, r)},
		},
		// The Price List API has no resource-level permissions.
		{Sid: "AllowPricingReadActions", Action: []string{"pricing:GetProducts"}, Resource: []string{"*"}},
		// Decoding the message of a denied launch, to say which statement is missing; it has no
		// resource-level permissions.
		{Sid: "AllowDecodingAuthorizationFailures", Action: []string{"sts:DecodeAuthorizationMessage"}, Resource: []string{"*"}},
		{
			Sid: "AllowPassingNodeRoles", Action: []string{"iam:PassRole"}, Resource: roles,
			Condition: map[string]map[string][]string{"StringEquals": {"iam:PassedToService": {"ec2.amazonaws.com"}}},
		},
		{
			Sid: "AllowScopedInstanceProfileCreation", Action: []string{"iam:CreateInstanceProfile", "iam:TagInstanceProfile"},
			Resource: profiles, Condition: profileTags("aws:RequestTag/"),
		},
		{
			Sid: "AllowScopedInstanceProfileActions", Action: []string{"iam:AddRoleToInstanceProfile", "iam:DeleteInstanceProfile", "iam:RemoveRoleFromInstanceProfile"},
			Resource: profiles, Condition: profileTags("aws:ResourceTag/"),
		},
		// spec.instanceProfile names a profile Joiner does not own: reading any is needed to
		// check it holds a role.
		{Sid: "AllowInstanceProfileReadActions", Action: []string{"iam:GetInstanceProfile"}, Resource: []string{fmt.Sprintf("arn:%s:iam::%s:instance-profile/*", p, a)}},
		{
			Sid: "AllowAPIServerEndpointDiscovery", Action: []string{"eks:DescribeCluster"},
			Resource: []string{fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", p, r, a, o.ClusterName)},
		},
		// The EC2NodeClass join check: whether the node roles may join (their access entries)
		// and their ARNs with their IAM paths.
		{
			Sid: "AllowNodeJoinCheckAccessEntryReads", Action: []string{"eks:ListAccessEntries"},
			Resource: []string{fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", p, r, a, o.ClusterName)},
		},
		{
			Sid: "AllowNodeJoinCheckAccessEntryDescribe", Action: []string{"eks:DescribeAccessEntry"},
			Resource: []string{fmt.Sprintf("arn:%s:eks:%s:%s:access-entry/%s/*", p, r, a, o.ClusterName)},
		},
		{Sid: "AllowNodeJoinCheckRoleReads", Action: []string{"iam:GetRole"}, Resource: roles},
	}
	if o.InterruptionQueue != "" {
		statements = append(statements, Statement{
			Sid: "AllowInterruptionQueueActions", Action: []string{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"},
			Resource: []string{fmt.Sprintf("arn:%s:sqs:%s:%s:%s", p, r, a, o.InterruptionQueue)},
		})
	}
	for i := range statements {
		statements[i].Effect = "Allow"
	}
	return Document{Version: "2012-10-17", Statement: statements}
}
