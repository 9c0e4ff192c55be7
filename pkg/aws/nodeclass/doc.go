// Package nodeclass resolves an EC2NodeClass's status from AWS: subnets and security groups from
// their selector terms (pkg/aws/network), AMIs (pkg/aws/ami: alias via SSM, DescribeImages,
// newest non-deprecated per requirement set), the instance profile (pkg/aws/instanceprofile),
// each with its condition, and the Ready summary. It is what the EC2NodeClass status controller
// calls; it writes only the status of the object it is given, never to the API server.
package nodeclass
