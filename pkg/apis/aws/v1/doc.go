// Package v1 holds the karpenter.k8s.aws/v1 API: EC2NodeClass, the AWS-specific half of a
// NodePool's template (AMIs, subnets, security groups, IAM role, userData, kubelet settings), and
// the karpenter.k8s.aws well-known labels and annotations.
//
// The types are wire-compatible with Karpenter's AWS provider so existing manifests apply unchanged.
// Validation lives in the generated CRD (OpenAPI and CEL); nothing here talks to a cluster or AWS.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.k8s.aws
package v1
