// Package drift decides whether an instance still matches its EC2NodeClass: the hash of the
// node class's static fields (recorded on the NodeClaim at launch), and the AMI, subnet and
// security groups the instance has against what the node class currently resolves to.
//
// It is pure: the caller reads the instance (DescribeInstances) and passes what it found. It must
// not delete or replace anything; disruption does that with the reason it returns.
package drift
