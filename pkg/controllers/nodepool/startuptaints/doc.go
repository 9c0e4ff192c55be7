// Package startuptaints advises the operator to declare agent taints (pkg/agenttaint: Cilium's,
// Istio CNI's, the EBS and EFS CSI drivers'...) in a NodePool's spec.template.spec.startupTaints.
// When such a taint is in the NodePool's spec.template.spec.taints, or a Node of the NodePool
// carries one the NodePool does not declare (from its userData or the agent's own admission), it
// records a Warning event AgentTaintNotDeclared on the NodePool naming the taint, where it was
// seen, and the exact YAML to add.
//
// It is advice, not an error: the simulation already ignores these taints, so nothing loops and
// Ready is not held back. It emits each piece of advice once per NodePool generation and process;
// it must not write the NodePool or its Nodes.
package startuptaints
