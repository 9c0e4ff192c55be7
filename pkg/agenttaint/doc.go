// Package agenttaint is the catalogue of well-known agent taints: taints that a node agent (a CNI
// such as Cilium or Istio CNI, a CSI node plugin such as the EBS or EFS driver) expects the node
// to register with, and removes itself once it is ready on the node.
//
// Such a taint keeps pods off a node only for the seconds its agent takes to start, so the
// scheduling simulation must not hold it against a node or a NodePool (as it does not hold
// startupTaints against them): otherwise every node that joins with one looks unusable and the
// autoscaler launches another, in a loop. The operator should still declare these taints in the
// NodePool's spec.template.spec.startupTaints, so that Joiner puts them on the node itself and
// waits for their removal before counting the node initialized; Advice says so, with the YAML.
//
// Agents remove their taint by key, whatever its effect or value, so the catalogue matches by
// key. The package is pure data and functions of it: it must not read a cluster or decide
// anything beyond "is this an agent's taint, and what would the operator declare".
package agenttaint
