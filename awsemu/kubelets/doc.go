// Package kubelets is the node side of the emulated account: Kubelets boots every running
// instance with package boot once its boot delay has passed, records the outcome and console in
// the instance, retries refused kubelets on the clock and, with an API server, keeps the joined
// instances' Nodes Ready and their pods Running, stands in for the node agents that delete their
// own not-ready taints, and deletes the Nodes of terminated instances.
//
// Whether a node joins is package boot's decision, never this package's; it changes no AWS state
// beyond the instances' boot fields and console. cmd/awsemu runs it beside the emulator's server;
// tests drive Sync on a fake clock.
package kubelets
