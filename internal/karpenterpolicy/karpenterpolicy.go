// Package karpenterpolicy renders Karpenter's documented controller policy, a test fixture: the
// policy an operator moving from Karpenter already has, which Joiner must run under, in the
// emulator as on AWS (issue #28).
//
// Source: Karpenter's getting-started CloudFormation template for v1.14
// (aws/karpenter-provider-aws, website/content/en/v1.14/getting-started/
// getting-started-with-karpenter/cloudformation.yaml, as of the v1.14.1 docs release), which
// splits the controller's permissions into the managed policies NodeLifecyclePolicy,
// IAMIntegrationPolicy, EKSIntegrationPolicy, InterruptionPolicy and ResourceDiscoveryPolicy
// (its ZonalShiftPolicy is for a service the emulator does not have), and its reference page
// (website/content/en/v1.14/reference/cloudformation.md). Document writes their statements, with
// their Sids, actions, resources and conditions, as one document for a cluster, region, account,
// node role and interruption queue: a role holding all of them is allowed exactly what the one
// document allows.
package karpenterpolicy

import (
	"fmt"

	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
)

// Options are the template's parameters and the resources it creates.
type Options struct {
	// ClusterName is the template's ClusterName parameter.
	ClusterName string
	// Region and AccountID are the stack's AWS::Region and AWS::AccountId.
	Region    string
	AccountID string
	// NodeRole is the name of the node role (the template's KarpenterNodeRole,
	// KarpenterNodeRole-<cluster>); "" is that default.
	NodeRole string
	// InterruptionQueue is the name of the interruption queue (the template's
	// KarpenterInterruptionQueue, named after the cluster); "" is that default.
	InterruptionQueue string
}

type condition = map[string]map[string][]string

// Document is Karpenter's documented controller policy for o.
func Document(o Options) iampolicy.Document {
	if o.NodeRole == "" {
		o.NodeRole = "KarpenterNodeRole-" + o.ClusterName
	}
	if o.InterruptionQueue == "" {
		o.InterruptionQueue = o.ClusterName
	}
	p, r, a, c := iampolicy.Partition(o.Region), o.Region, o.AccountID, o.ClusterName
	ec2 := func(kind string) string { return fmt.Sprintf("arn:%s:ec2:%s:*:%s/*", p, r, kind) }
	profiles := []string{fmt.Sprintf("arn:%s:iam::%s:instance-profile/*", p, a)}
	clusterTag := "kubernetes.io/cluster/" + c
	launch := []string{"ec2:RunInstances", "ec2:CreateFleet"}
	created := []string{ec2("fleet"), ec2("instance"), ec2("volume"), ec2("network-interface"), ec2("launch-template"), ec2("spot-instances-request")}
	owned := func(prefix string) condition {
		return condition{
			"StringEquals": {prefix + clusterTag: {"owned"}},
			"StringLike":   {prefix + "karpenter.sh/nodepool": {"*"}},
		}
	}
	requestTags := owned("aws:RequestTag/")
	requestTags["StringEquals"]["aws:RequestTag/eks:eks-cluster-name"] = []string{c}
	creationTagging := owned("aws:RequestTag/")
	creationTagging["StringEquals"]["aws:RequestTag/eks:eks-cluster-name"] = []string{c}
	creationTagging["StringEquals"]["ec2:CreateAction"] = []string{"RunInstances", "CreateFleet", "CreateLaunchTemplate"}
	resourceTagging := owned("aws:ResourceTag/")
	resourceTagging["StringEqualsIfExists"] = map[string][]string{"aws:RequestTag/eks:eks-cluster-name": {c}}
	resourceTagging["ForAllValues:StringEquals"] = map[string][]string{"aws:TagKeys": {"eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"}}
	profileTags := func(prefixes ...string) condition {
		out := condition{"StringEquals": {}, "StringLike": {}}
		for _, prefix := range prefixes {
			out["StringEquals"][prefix+clusterTag] = []string{"owned"}
			out["StringEquals"][prefix+"topology.kubernetes.io/region"] = []string{r}
			out["StringLike"][prefix+"karpenter.k8s.aws/ec2nodeclass"] = []string{"*"}
		}
		return out
	}
	profileRequestTags := profileTags("aws:RequestTag/")
	profileRequestTags["StringEquals"]["aws:RequestTag/eks:eks-cluster-name"] = []string{c}
	profileTagging := profileTags("aws:ResourceTag/", "aws:RequestTag/")
	profileTagging["StringEquals"]["aws:RequestTag/eks:eks-cluster-name"] = []string{c}

	statements := []iampolicy.Statement{
		// NodeLifecyclePolicy.
		{Sid: "AllowScopedEC2InstanceAccessActions", Action: launch, Resource: []string{
			fmt.Sprintf("arn:%s:ec2:%s::image/*", p, r), fmt.Sprintf("arn:%s:ec2:%s::snapshot/*", p, r),
			ec2("security-group"), ec2("subnet"), ec2("capacity-reservation"), ec2("placement-group"),
		}},
		{Sid: "AllowScopedEC2LaunchTemplateAccessActions", Action: launch, Resource: []string{ec2("launch-template")}, Condition: owned("aws:ResourceTag/")},
		{Sid: "AllowScopedEC2InstanceActionsWithTags", Action: append(launch[:2:2], "ec2:CreateLaunchTemplate"), Resource: created, Condition: requestTags},
		{Sid: "AllowScopedResourceCreationTagging", Action: []string{"ec2:CreateTags"}, Resource: created, Condition: creationTagging},
		{Sid: "AllowScopedResourceTagging", Action: []string{"ec2:CreateTags"}, Resource: []string{ec2("instance")}, Condition: resourceTagging},
		{Sid: "AllowScopedDeletion", Action: []string{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"},
			Resource: []string{ec2("instance"), ec2("launch-template")}, Condition: owned("aws:ResourceTag/")},
		// IAMIntegrationPolicy.
		{Sid: "AllowPassingInstanceRole", Action: []string{"iam:PassRole"}, Resource: []string{fmt.Sprintf("arn:%s:iam::%s:role/%s", p, a, o.NodeRole)},
			Condition: condition{"StringEquals": {"iam:PassedToService": {"ec2.amazonaws.com", "ec2.amazonaws.com.cn"}}}},
		{Sid: "AllowScopedInstanceProfileCreationActions", Action: []string{"iam:CreateInstanceProfile"}, Resource: profiles, Condition: profileRequestTags},
		{Sid: "AllowScopedInstanceProfileTagActions", Action: []string{"iam:TagInstanceProfile"}, Resource: profiles, Condition: profileTagging},
		{Sid: "AllowScopedInstanceProfileActions", Action: []string{"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"},
			Resource: profiles, Condition: profileTags("aws:ResourceTag/")},
		// EKSIntegrationPolicy.
		{Sid: "AllowAPIServerEndpointDiscovery", Action: []string{"eks:DescribeCluster"}, Resource: []string{fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", p, r, a, c)}},
		// InterruptionPolicy.
		{Sid: "AllowInterruptionQueueActions", Action: []string{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"},
			Resource: []string{fmt.Sprintf("arn:%s:sqs:%s:%s:%s", p, r, a, o.InterruptionQueue)}},
		// ResourceDiscoveryPolicy.
		{Sid: "AllowRegionalReadActions", Action: []string{
			"ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus",
			"ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates", "ec2:DescribePlacementGroups",
			"ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
		}, Resource: []string{"*"}, Condition: condition{"StringEquals": {"aws:RequestedRegion": {r}}}},
		{Sid: "AllowSSMReadActions", Action: []string{"ssm:GetParameter"}, Resource: []string{fmt.Sprintf("arn:%s:ssm:%s::parameter/aws/service/*", p, r)}},
		{Sid: "AllowPricingReadActions", Action: []string{"pricing:GetProducts"}, Resource: []string{"*"}},
		{Sid: "AllowUnscopedInstanceProfileListAction", Action: []string{"iam:ListInstanceProfiles"}, Resource: []string{"*"}},
		{Sid: "AllowInstanceProfileReadActions", Action: []string{"iam:GetInstanceProfile"}, Resource: profiles},
	}
	for i := range statements {
		statements[i].Effect = "Allow"
	}
	return iampolicy.Document{Version: "2012-10-17", Statement: statements}
}

// JoinerDiagnostics are the statements Joiner's diagnostics need beyond Document, as `joiner
// iam-policy` writes them (pkg/aws/iampolicy): the EC2NodeClass join check's reads of the
// cluster's access entries and of nodeRoles, decoding a denied launch's authorization message,
// and reading the console output of the cluster's instances. Without them Joiner runs, with a
// less precise diagnosis. Their Sids start with Joiner.
func JoinerDiagnostics(o Options, nodeRoles ...string) []iampolicy.Statement {
	p, r, a, c := iampolicy.Partition(o.Region), o.Region, o.AccountID, o.ClusterName
	roles := make([]string, 0, len(nodeRoles))
	for _, name := range nodeRoles {
		roles = append(roles, fmt.Sprintf("arn:%s:iam::%s:role/%s", p, a, name))
	}
	statements := []iampolicy.Statement{
		{Sid: "JoinerNodeJoinCheckAccessEntryReads", Action: []string{"eks:ListAccessEntries"}, Resource: []string{fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", p, r, a, c)}},
		{Sid: "JoinerNodeJoinCheckAccessEntryDescribe", Action: []string{"eks:DescribeAccessEntry"}, Resource: []string{fmt.Sprintf("arn:%s:eks:%s:%s:access-entry/%s/*", p, r, a, c)}},
		{Sid: "JoinerNodeJoinCheckRoleReads", Action: []string{"iam:GetRole"}, Resource: roles},
		{Sid: "JoinerDecodingAuthorizationFailures", Action: []string{"sts:DecodeAuthorizationMessage"}, Resource: []string{"*"}},
		{Sid: "JoinerInstanceConsoleRead", Action: []string{"ec2:GetConsoleOutput"}, Resource: []string{fmt.Sprintf("arn:%s:ec2:%s:*:instance/*", p, r)},
			Condition: condition{"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/" + c: {"owned"}}, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}}}},
	}
	for i := range statements {
		statements[i].Effect = "Allow"
	}
	return statements
}
