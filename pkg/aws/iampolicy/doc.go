// Package iampolicy generates the least-privilege IAM policy of Joiner's controller: every AWS
// action the controller's calls need (Calls), scoped the way Karpenter's reference controller
// policy scopes them (resources of the cluster's region and account, writes conditioned on the
// tags Joiner puts on what it creates: kubernetes.io/cluster/<name>=owned and
// karpenter.sh/nodepool or karpenter.k8s.aws/ec2nodeclass), and nothing more.
//
// Calls is the contract with the rest of pkg/aws: a test reads the non-test sources of pkg/aws
// and cmd/joiner and fails when an SDK operation is called that Calls does not list, or when
// Calls lists one that nothing calls, so that the policy follows the code.
//
// It must not call AWS or know the emulator; `joiner iam-policy` prints what New returns.
package iampolicy
