// Package userdata renders the userData an instance boots with, for each AMI family, from the
// cluster's connection details, a NodeClaim's labels and taints, the EC2NodeClass kubelet settings
// and the operator's own userData, and checks the operator's userData statically for the mistakes
// that make a node join without its required taint. ReadRegistration reads, from a whole
// userData, the taints, labels and kubelet flags the node registers with, as far as a static
// reading can tell. Shell is read with mvdan.cc/sh/v3 and Bottlerocket TOML with
// github.com/pelletier/go-toml/v2; nothing is run.
//
// The merge rule is the same for every family that Joiner generates for (AL2, AL2023,
// Bottlerocket): the operator's parts and settings are kept, and what Joiner requires is never
// lost. Labels and taints are unioned, never overwritten; the karpenter.sh/unregistered:NoExecute
// taint is always there. Where Joiner and the operator set the same scalar (the cluster
// connection, clusterDNS, maxPods...), Joiner's value wins, because scheduling was computed with
// it, and a Warning says so. Custom userData is passed verbatim, with a check.
//
// Rendering is pure: no AWS calls, no cluster reads, no clock. The package must not decide which
// AMI or instance type a NodeClaim gets, and must not launch anything; pkg/aws/launchtemplate
// calls it. docs/userdata.md states the rules per family.
package userdata
