// Package instancetype turns what EC2 says of an instance type into what scheduling needs: its
// capacity (cpu, memory net of the hypervisor's overhead, pods, ephemeral storage) and the
// overhead the kubelet keeps (kube-reserved by the EKS formula, system-reserved, eviction
// thresholds), so that allocatable = capacity - overhead is known before any node exists.
//
// It also owns the instance-type labels a node will carry (Requirements: the well-known and
// karpenter.k8s.aws/instance-* labels, zones and capacity types of the available offerings) and
// the cache of offerings EC2 recently had no capacity for (UnavailableOfferings).
//
// docs/allocatable.md states the formulas; the tests check them against hand-computed values.
//
// The package is pure arithmetic on Info values: it must not call AWS. Reading
// DescribeInstanceTypes and DescribeInstanceTypeOfferings into Info and offerings is planned here,
// behind small interfaces the SDK clients satisfy.
package instancetype
