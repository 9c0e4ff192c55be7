package iampolicy

import (
	"maps"
	"slices"
)

// callActions maps every AWS API operation the controller calls ("ec2:CreateFleet", service prefix
// and operation name as the SDK names them) to the IAM actions AWS authorizes for it. An
// operation that creates tagged resources also needs ec2:CreateTags (or iam:TagInstanceProfile),
// and one that hands a role to EC2 needs iam:PassRole.
var callActions = map[string][]string{
	// Launch: the fleet and, for validation, the dry runs.
	"ec2:CreateFleet":          {"ec2:CreateFleet", "ec2:RunInstances", "ec2:CreateTags", "iam:PassRole"},
	"ec2:RunInstances":         {"ec2:RunInstances", "ec2:CreateTags", "iam:PassRole"},
	"ec2:CreateLaunchTemplate": {"ec2:CreateLaunchTemplate", "ec2:CreateTags"},
	// A launched instance's own tags (its NodeClaim's name, its node's name).
	"ec2:CreateTags": {"ec2:CreateTags"},
	// Removal and garbage collection.
	"ec2:TerminateInstances":   {"ec2:TerminateInstances"},
	"ec2:DeleteLaunchTemplate": {"ec2:DeleteLaunchTemplate"},
	// Why an instance's Node has not joined: its console output.
	"ec2:GetConsoleOutput": {"ec2:GetConsoleOutput"},
	// Discovery: instance types, offerings, prices, images, subnets, security groups.
	"ec2:DescribeImages":                {"ec2:DescribeImages"},
	"ec2:DescribeInstances":             {"ec2:DescribeInstances"},
	"ec2:DescribeInstanceTypeOfferings": {"ec2:DescribeInstanceTypeOfferings"},
	"ec2:DescribeInstanceTypes":         {"ec2:DescribeInstanceTypes"},
	"ec2:DescribeLaunchTemplates":       {"ec2:DescribeLaunchTemplates"},
	"ec2:DescribeSecurityGroups":        {"ec2:DescribeSecurityGroups"},
	"ec2:DescribeSpotPriceHistory":      {"ec2:DescribeSpotPriceHistory"},
	"ec2:DescribeSubnets":               {"ec2:DescribeSubnets"},
	// Instance profiles of spec.role node classes.
	"iam:GetInstanceProfile":            {"iam:GetInstanceProfile"},
	"iam:CreateInstanceProfile":         {"iam:CreateInstanceProfile", "iam:TagInstanceProfile"},
	"iam:DeleteInstanceProfile":         {"iam:DeleteInstanceProfile"},
	"iam:AddRoleToInstanceProfile":      {"iam:AddRoleToInstanceProfile", "iam:PassRole"},
	"iam:RemoveRoleFromInstanceProfile": {"iam:RemoveRoleFromInstanceProfile"},
	// AMI aliases, on-demand prices, denial explanations, the cluster's endpoint and CA.
	"ssm:GetParameter":               {"ssm:GetParameter"},
	"pricing:GetProducts":            {"pricing:GetProducts"},
	"sts:DecodeAuthorizationMessage": {"sts:DecodeAuthorizationMessage"},
	"eks:DescribeCluster":            {"eks:DescribeCluster"},
	// The EC2NodeClass join check (pkg/aws/nodejoin): the node role's ARN with its path, the
	// cluster's access entries, the controller's own account and role. GetCallerIdentity needs
	// no permission: AWS allows it to every principal.
	"iam:GetRole":             {"iam:GetRole"},
	"eks:ListAccessEntries":   {"eks:ListAccessEntries"},
	"eks:DescribeAccessEntry": {"eks:DescribeAccessEntry"},
	"sts:GetCallerIdentity":   {},
}

// interruptionCalls are the operations of an interruption-queue consumer, granted only when a
// queue is named (Options.InterruptionQueue).
var interruptionCalls = map[string][]string{
	"sqs:GetQueueUrl":    {"sqs:GetQueueUrl"},
	"sqs:ReceiveMessage": {"sqs:ReceiveMessage"},
	"sqs:DeleteMessage":  {"sqs:DeleteMessage"},
}

// Calls returns the AWS operations the controller calls, sorted; with interruption, the
// interruption queue's too.
func Calls(interruption bool) []string {
	out := slices.Collect(maps.Keys(callActions))
	if interruption {
		out = append(out, slices.Collect(maps.Keys(interruptionCalls))...)
	}
	slices.Sort(out)
	return out
}

// Actions returns the IAM actions an operation of Calls needs, or nil for an operation the
// controller does not call.
func Actions(call string) []string {
	if a, ok := callActions[call]; ok {
		return slices.Clone(a)
	}
	return slices.Clone(interruptionCalls[call])
}
