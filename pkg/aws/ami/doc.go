// Package ami owns which AMIs an EC2NodeClass resolves to: the public EKS SSM parameters an alias
// (al2@, al2023@, bottlerocket@) stands for, per architecture and variant, each with the node
// requirements an instance type must meet to boot it; and, among candidate images, the newest
// non-deprecated one per requirement set. Resolve reads SSM GetParameter and DescribeImages behind
// SSMAPI and EC2API, which the SDK clients satisfy.
//
// It must not write the EC2NodeClass status (the node class status controller does) and must not
// launch anything.
package ami
