// Package eks emulates the EKS REST-JSON API operations a node autoscaler uses: DescribeCluster,
// and ListAccessEntries, DescribeAccessEntry and CreateAccessEntry, which decide (with the
// aws-auth ConfigMap) whether a node's role may join.
//
// It must not decide joins itself: package boot reads the access entries from the state.
package eks
