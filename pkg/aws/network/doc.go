// Package network resolves an EC2NodeClass's subnet and security group selector terms through
// DescribeSubnets and DescribeSecurityGroups. Terms are ORed (one call per term, results unioned
// by ID); within a term, id and tags are ANDed as EC2 filters, a tag value "*" meaning "the key
// is present". It depends on EC2API, which the SDK's EC2 client satisfies, and must not decide
// which subnet a launch uses (pkg/aws/instance does).
package network
