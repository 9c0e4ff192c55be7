// Package v1 holds the karpenter.sh/v1 API that Joiner serves: NodePool and NodeClaim, and the
// well-known labels, annotations, taints and finalizers that Joiner writes on nodes.
//
// The types are wire-compatible with Karpenter's karpenter.sh/v1 so an operator's manifests apply
// unchanged. Validation lives in the generated CRDs (OpenAPI and CEL) so bad objects are refused at
// admission with a message naming the field and the fix; nothing here talks to a cluster or a cloud.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.sh
package v1
