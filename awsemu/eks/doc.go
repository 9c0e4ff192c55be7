// Package eks emulates the EKS REST-JSON API operations that decide who may join a cluster and
// that the console offers to change it: DescribeCluster (with the cluster VPC's
// resourcesVpcConfig), UpdateClusterConfig (the authentication mode, one way: CONFIG_MAP,
// API_AND_CONFIG_MAP, API); ListAccessEntries, DescribeAccessEntry, CreateAccessEntry,
// UpdateAccessEntry and DeleteAccessEntry; ListAccessPolicies, AssociateAccessPolicy,
// DisassociateAccessPolicy and ListAssociatedAccessPolicies; ListPodIdentityAssociations and
// DescribePodIdentityAssociation, of which the emulated clusters have none. It validates as EKS
// does (node entry types take no username or groups, an entry's type never changes, a principal
// must exist, access entries need the API or API_AND_CONFIG_MAP authentication mode) and answers
// with EKS's error codes (ResourceNotFoundException, ResourceInUseException,
// InvalidParameterException, InvalidRequestException, AccessDeniedException).
//
// It must not decide joins itself: package boot reads the access entries from the state, at
// every kubelet attempt, so a change here applies to the next attempt.
package eks
