// Package status is the EC2NodeClass status controller: it resolves each class's status from AWS
// (pkg/aws/nodeclass: subnets, security groups, AMIs, instance profile, validation, Ready),
// writes the static-field hash annotations drift compares (pkg/aws/drift), and requeues within a
// minute while the class is not Ready (so a fixed IAM policy is seen quickly) and every few
// minutes otherwise (new AMIs of an alias, changed subnets). A spec change is reconciled at once
// through the watch. It holds the class with awsv1.TerminationFinalizer until no NodeClaim refers
// to it and the instance profile Joiner made for it is deleted.
//
// It writes EC2NodeClass metadata and status only; it must not launch or terminate anything.
package status
