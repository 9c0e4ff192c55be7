// Package status is the EC2NodeClass status controller: it resolves each class's status from AWS
// (pkg/aws/nodeclass: subnets, security groups, AMIs, instance profile, validation, Ready),
// writes the static-field hash annotations drift compares (pkg/aws/drift), and requeues every
// 15 seconds while the class is not Ready and every minute otherwise (a fixed IAM policy, a new
// access entry or a changed authentication mode, which no watch sees; new AMIs of an alias,
// changed subnets). A spec change, a NodePool spec change
// (not its status, which changes with every node) and a change of kube-system/aws-auth are
// reconciled at once through the watches. Each join finding
// (NodeJoinReady, pkg/aws/nodejoin) is sent once as a Warning event on the class while it holds. It holds the class with awsv1.TerminationFinalizer until no NodeClaim refers
// to it and the instance profile Joiner made for it is deleted.
//
// It writes EC2NodeClass metadata and status only; it must not launch or terminate anything.
package status
