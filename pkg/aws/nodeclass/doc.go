// Package nodeclass resolves an EC2NodeClass's status from AWS: subnets and security groups from
// their selector terms (pkg/aws/network), AMIs (pkg/aws/ami: alias via SSM, DescribeImages,
// newest non-deprecated per requirement set), the instance profile (pkg/aws/instanceprofile),
// each with its condition, NodeJoinReady from the join check (JoinChecker: the node role's ARN
// from IAM, the authentication mode and access entries from EKS, kube-system/aws-auth and the
// NodePools from the API server, judged by pkg/aws/nodejoin), and the Ready summary. It is what the EC2NodeClass status controller
// calls; it writes only the status of the object it is given, never to the API server (it reads NodePools and kube-system/aws-auth).
package nodeclass
