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
// The arithmetic is pure, on Info values. Provider is the SDK-facing half: it reads
// DescribeInstanceTypes (all pages) and DescribeInstanceTypeOfferings behind EC2API, which the
// SDK's EC2 client satisfies, caches them for DescribeRefreshInterval on an injected clock, and
// builds each cloudprovider.InstanceType with offerings in the node class's subnet zones, priced
// by a Prices source (pkg/aws/pricing) and checked against UnavailableOfferings.
package instancetype
